"""The example sweeps in sweeps/ are valid, run, and read back: every combination of each
validates, each sweep runs whole (they are small) and loads as SweepResults."""

from __future__ import annotations

from pathlib import Path

import pytest

import manypath
from manypath import sweeps

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "sweeps").glob("*.toml"))


def test_the_shipped_examples_are_the_ones_the_docs_name() -> None:
    assert [p.name for p in EXAMPLES] == ["ecn.toml", "incast-rto.toml"]
    docs = (ROOT / "README.md").read_text() + (ROOT / "docs" / "toolkit.md").read_text()
    for path in EXAMPLES:
        assert f"sweeps/{path.name}" in docs or f"`{path.name}`" in docs, path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_an_example_sweep_runs_and_loads(path: Path, tmp_path: Path) -> None:
    plan = sweeps.expand(path)
    assert plan.name == path.stem and plan.runs
    for run in plan.runs:
        assert manypath.validate(run.text, base_dir=run.base_dir) == [], run.params
    summary = manypath.sweep(path, out=tmp_path, jobs=1, on_interrupt=None)
    assert summary.ok and summary.ran == len(plan.runs) == summary.total, summary.failed
    results = manypath.load(tmp_path)
    assert isinstance(results, manypath.SweepResults)
    assert results.params == plan.params and len(results.runs) == len(plan.runs)
    assert repr(results) == (
        f"<SweepResults {plan.name!r}, generation 1: {len(plan.runs)} runs ({len(plan.runs)} ok, "
        f"0 failed) over {', '.join(plan.params)}; {len(results.flows):,} flows>"
    )


def test_incast_rto_shows_what_its_comment_says(tmp_path: Path) -> None:
    # 8 senders fit in the port; 40 overflow it, and the 200 ms RTO then dominates.
    manypath.sweep(ROOT / "sweeps" / "incast-rto.toml", out=tmp_path, jobs=1, on_interrupt=None)
    flows = manypath.load(tmp_path).flows
    job_ms = flows.groupby(["traffic.0.senders", "tcp.rto_min_us"])["finish_s"].max() * 1e3
    assert job_ms[(8, 200000)] == pytest.approx(1.6, abs=0.1) == job_ms[(8, 1000)]
    assert job_ms[(40, 200000)] == pytest.approx(601, abs=1)
    assert job_ms[(40, 1000)] == pytest.approx(4.8, abs=0.1)
