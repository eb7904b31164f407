"""Sweep generations: a sweep rerun after its base scenario changed never pools runs of the
two bases, nothing stored is replaced, and every run keeps its provenance."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import manypath
from manypath import provenance, report_html, sweeps
from manypath.cli import app
from manypath.sweeps import SweepResults
from manypath.sweeps.store import clean_temporaries

from test_sweeps import FATTREE, assert_no_partial_results, run_dirs, snapshot

runner = CliRunner()

LOADS = """\
name = "ft4-loads"
scenario = "ft4.toml"
seeds = [1]

[grid]
"traffic.0.load" = [0.3, 0.5]
"""


def write(tmp_path: Path, ecn_k: int, grid: str = LOADS) -> Path:
    text = FATTREE.format(duration_ms=3).replace("ecn_k_packets = 15", f"ecn_k_packets = {ecn_k}")
    assert f"ecn_k_packets = {ecn_k}" in text
    (tmp_path / "ft4.toml").write_text(text)
    path = tmp_path / "sweep.toml"
    path.write_text(grid)
    return path


def ecn_k_of(out: Path, run_id: str) -> int:
    return int(sweeps.spec.tomllib.loads((out / run_id / "scenario.toml").read_text())["network"]["queue"]["ecn_k_packets"])


def load_sweep(out: Path, **kw: object) -> SweepResults:
    sw = manypath.load(out, **kw)  # type: ignore[arg-type]
    assert isinstance(sw, SweepResults)
    return sw


def two_generations(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A sweep run with ecn_k = 20, then with the base changed to ecn_k = 65."""
    out = tmp_path / "out"
    first = manypath.sweep(write(tmp_path, 20), out=out, jobs=1)
    assert first.ok and first.ran == 2 and (first.generation, first.new_generation) == (1, True)
    before = snapshot(out)
    second = manypath.sweep(write(tmp_path, 65), out=out, jobs=1)
    assert second.ok and second.ran == 2  # nothing of the old base is reused
    assert (second.generation, second.new_generation, second.previous_generation) == (2, True, 1)
    assert second.base_changes == ["network.queue.ecn_k_packets: 20 -> 65"]
    return out, before


def test_changed_base_is_never_pooled(tmp_path: Path) -> None:
    out, before = two_generations(tmp_path)
    sw = load_sweep(out)
    assert (sw.generation, sw.mixed) == (2, False) and "generation" not in sw.flows
    assert len(sw.runs) == 2 and sw.runs["status"].eq("ok").all()
    assert sw.flows.groupby(["traffic.0.load", "seed"])["run_id"].nunique().max() == 1
    assert {ecn_k_of(out, r) for r in sw.runs["run_id"]} == {65}
    assert list(sw.generations["generation"]) == [1, 2]
    assert list(sw.generations["current"]) == [False, True]
    # The runs of the first base are all still there, byte for byte.
    after = snapshot(out)
    assert {k: after.get(k) for k in before} == before
    assert len(run_dirs(out)) == 4
    assert_no_partial_results(out)

    # The report shows the newest generation only, and says the other one is left out.
    page = report_html.render(out)
    assert "shows generation 2 only" in page and "--allow-mixed" in page
    assert page.count("<td>ok</td>") == 2
    older = load_sweep(out, generation=1)
    assert {ecn_k_of(out, r) for r in older.runs["run_id"]} == {20}
    with pytest.raises(ValueError, match="generation 3: .* has generation.s. 1, 2"):
        manypath.load(out, generation=3)


def test_allow_mixed_pools_every_generation_marked(tmp_path: Path) -> None:
    out, _ = two_generations(tmp_path)
    sw = load_sweep(out, allow_mixed=True)
    assert sw.mixed and sw.generation is None
    assert len(sw.runs) == 4
    for table in (sw.flows, sw.queues, sw.runs):
        assert list(table.columns[:2]) == ["run_id", "generation"]
    by_gen = {g: {ecn_k_of(out, r) for r in rows["run_id"]} for g, rows in sw.runs.groupby("generation")}
    assert by_gen == {1: {20}, 2: {65}}
    # Each parameter value now has one run per generation, told apart by the column.
    assert sw.flows.groupby(["traffic.0.load", "seed"])["run_id"].nunique().eq(2).all()
    assert sw.flows.groupby(["generation", "traffic.0.load", "seed"])["run_id"].nunique().eq(1).all()

    res = runner.invoke(app, ["report", str(out), "--allow-mixed", "-o", str(tmp_path / "mixed.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "mixed.html").read_text()
    assert '<p class="mixed">Mixed generations: this report pools the runs of 2 sweep generations' in page
    assert "generation=1, load=0.3" in page and "generation=2, load=0.3" in page
    with pytest.raises(ValueError, match="either generation= or allow_mixed"):
        manypath.load(out, allow_mixed=True, generation=1)


def test_cli_names_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["sweep", str(write(tmp_path, 20)), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "generation" not in res.stderr
    path = write(tmp_path, 65)
    plan = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--dry-run", "--json"])
    doc = json.loads(plan.stdout)
    assert (doc["generation"], doc["new_generation"], doc["base_changes"]) == (
        2, True, ["network.queue.ecn_k_packets: 20 -> 65"])
    assert {r["status"] for r in doc["runs"]} == {"todo"}
    assert json.loads((out / "sweep.json").read_text())["current"] == 1  # a dry run records nothing

    res = runner.invoke(app, ["sweep", str(path), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert ("the base scenario changed since generation 1 (network.queue.ecn_k_packets: 20 -> 65): "
            "these runs are generation 2") in res.stderr


def test_same_base_stays_one_generation_and_a_reverted_base_returns_to_its_own(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manypath.sweep(write(tmp_path, 20), out=out, jobs=1)
    grown = manypath.sweep(write(tmp_path, 20, LOADS.replace("[0.3, 0.5]", "[0.3, 0.5, 0.7]")), out=out, jobs=1)
    assert (grown.generation, grown.new_generation, grown.skipped, grown.ran) == (1, False, 2, 1)
    # A smaller grid later leaves the generation whole: it is every run of that base.
    manypath.sweep(write(tmp_path, 20, LOADS.replace("[0.3, 0.5]", "[0.3]")), out=out, jobs=1)
    assert len(load_sweep(out).runs) == 3

    manypath.sweep(write(tmp_path, 65), out=out, jobs=1)
    assert load_sweep(out).generation == 2
    back = manypath.sweep(write(tmp_path, 20), out=out, jobs=1)
    assert (back.generation, back.new_generation, back.ran, back.skipped) == (1, False, 0, 2)
    sw = load_sweep(out)
    assert sw.generation == 1 and len(sw.runs) == 3
    assert {ecn_k_of(out, r) for r in sw.runs["run_id"]} == {20}


def test_manifest_and_runs_record_the_base_and_provenance(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = write(tmp_path, 20)
    manypath.sweep(path, out=out, jobs=2)
    plan = sweeps.expand(path)
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["base_sha256"] == plan.base_digest == provenance.scenario_digest(sweeps.spec.canonical(plan.base))
    assert manifest["generations"][0]["base_scenario"]["network"]["queue"]["ecn_k_packets"] == 20
    for d in run_dirs(out):
        meta = json.loads((d / "run.json").read_text())
        assert (meta["generation"], meta["base_sha256"]) == (1, plan.base_digest)
        prov = json.loads((d / "provenance.json").read_text())
        assert prov["seed"] == meta["seed"] == 1
        assert prov["manypath_version"] == manypath.__version__
        assert "source_revision" in prov and prov["ran_at"].startswith("20")
        assert prov["scenario_sha256"] == provenance.scenario_digest((d / "scenario.toml").read_text())
    # Reformatting the base file (comments, key order) is no new generation.
    text = (tmp_path / "ft4.toml").read_text()
    (tmp_path / "ft4.toml").write_text("# the same scenario\nseed = 1\n" + text.replace("seed = 1\n", ""))
    again = manypath.sweep(path, out=out, jobs=1)
    assert (again.generation, again.new_generation, again.ran) == (1, False, 0)


def legacy(out: Path) -> None:
    """Rewrite a results directory as sweeps wrote it before generations were recorded."""
    manifest = json.loads((out / "sweep.json").read_text())
    runs = [r for g in manifest["generations"] for r in g["runs"]]
    (out / "sweep.json").write_text(json.dumps({"name": manifest["name"], "params": manifest["params"],
                                                "runs": runs}))
    for d in run_dirs(out):
        meta = json.loads((d / "run.json").read_text())
        del meta["generation"], meta["base_sha256"]
        (d / "run.json").write_text(json.dumps(meta))


def test_directory_without_generations_loads_as_one_legacy_generation(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = write(tmp_path, 20)
    manypath.sweep(path, out=out, jobs=1)
    legacy(out)
    before = snapshot(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sw = load_sweep(out)
    assert sw.generation == 1 and len(sw.runs) == 2 and len(sw.flows) > 0
    assert sw.generations["base_sha256"].isna().all()
    assert "generation" in report_html.render(out)

    # The first sweep after the change starts generation 2, reusing the identical runs.
    res = runner.invoke(app, ["sweep", str(path), "--out", str(out), "-j", "1", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["generation"], doc["new_generation"], doc["ran"], doc["base_changes"]) == (2, True, 0, None)
    assert "record no base scenario" in res.stderr
    assert set(load_sweep(out).runs["run_id"]) == set(sw.runs["run_id"])
    assert snapshot(out) == before


def test_legacy_directory_that_pooled_two_bases_warns(tmp_path: Path) -> None:
    out, _ = two_generations(tmp_path)
    legacy(out)  # what the same two sweeps left before generations
    with pytest.warns(UserWarning, match="4 runs share their parameter values and seed"):
        sw = load_sweep(out)
    assert len(sw.runs) == 4


def test_failed_run_retried_keeps_its_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    path = write(tmp_path, 20)
    real = sweeps.execution.execute

    def failing(task: sweeps.RunSpec) -> sweeps.Outcome:
        return sweeps.Outcome(task.run_id, 0.0, error="Traceback ...\nRuntimeError: boom 1\n")

    monkeypatch.setattr(sweeps.execution, "execute", failing)
    manypath.sweep(path, out=out, jobs=1)
    victim = run_dirs(out)[0].name
    first = (out / victim / "run.json").read_bytes()
    monkeypatch.setattr(sweeps.execution, "execute",
                        lambda t: sweeps.Outcome(t.run_id, 0.0, error="RuntimeError: boom 2\n"))
    manypath.sweep(path, out=out, jobs=1)
    monkeypatch.setattr(sweeps.execution, "execute", real)
    assert manypath.sweep(path, out=out, jobs=1).ok

    attempts = out / victim / "failed-attempts"
    assert (attempts / "1" / "run.json").read_bytes() == first
    assert "boom 1" in (attempts / "1" / "error.txt").read_text()
    assert "boom 2" in (attempts / "2" / "error.txt").read_text()
    assert sorted(p.name for p in attempts.iterdir()) == ["1", "2"]
    meta = json.loads((out / victim / "run.json").read_text())
    assert (meta["status"], meta["failed_attempts"]) == ("ok", 2)
    assert_no_partial_results(out)


def test_failed_run_caught_between_renames_is_put_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manypath.sweep(write(tmp_path, 20), out=out, jobs=1)
    victim = run_dirs(out)[0]
    kept = snapshot(out)
    victim.rename(out / f".tmp-old-{victim.name}-0123abcd")  # a writer killed mid-replacement
    (out / ".tmp-0123-half").mkdir()
    clean_temporaries(out)
    assert snapshot(out) == kept
    assert not [p for p in out.iterdir() if p.name.startswith(".tmp")]
