"""How many threads a run is given: `threads = "auto"` end to end (the cores this process
may use, a large fabric only), and a sweep's runs on one thread each when several go at
once unless the sweep asks for more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import manypath
from manypath import sweeps
from manypath.cli import app
from manypath.sweeps import SweepError
from manypath.sweeps.execution import run_threads
from test_parallel import FAT_TREE, HALF, with_parallel

cli = CliRunner()

# 1,024 hosts, which "auto" may split, for 10 µs: built and run in well under a second.
BIG = FAT_TREE.replace("k = 4", "k = 16").replace("duration_ms = 1\n", "duration_ms = 0.01\n")
assert "k = 16" in BIG and "duration_ms = 0.01\n" in BIG


def stored_threads(out: Path) -> list[int]:
    """The threads each stored run of a sweep was given, from its provenance."""
    runs = sorted(d for d in out.iterdir() if (d / "run.json").is_file())
    return [json.loads((d / "provenance.json").read_text())["threads"] for d in runs]


def test_auto_on_a_large_fabric_runs_on_the_cores_this_process_may_use() -> None:
    res = manypath.run(BIG, threads="auto")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    assert 1 <= res.provenance["threads"] <= cores
    assert res.counters["events"] > 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity (Linux)")
def test_auto_stays_on_one_thread_in_a_process_allowed_one_core(tmp_path: Path) -> None:
    # The affinity mask is the process's: set in a child, so this one keeps its cores.
    (tmp_path / "big.toml").write_text(BIG)
    code = (
        "import os, manypath\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        f"print(manypath.run({str(tmp_path / 'big.toml')!r}, threads='auto').provenance['threads'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "1"


def test_the_cli_takes_auto_and_records_the_threads_given(tmp_path: Path) -> None:
    scenario = tmp_path / "big.toml"
    scenario.write_text(BIG)
    out = tmp_path / "run"
    res = cli.invoke(app, ["run", str(scenario), "--threads", "auto", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "provenance.json").read_text())["threads"] >= 1


@pytest.mark.parametrize(("asked", "workers", "given"), [
    (None, 1, None),   # one run at a time: the scenario's own parallel.threads
    (None, 2, 1),      # several at once: one thread each
    (None, 64, 1),
    (2, 4, 2),         # asked for: as asked, whatever the workers
    ("auto", 4, "auto"),
    (1, 1, 1),
])
def test_a_sweeps_runs_get_one_thread_each_when_several_go_at_once(
        asked: int | str | None, workers: int, given: int | str | None) -> None:
    assert run_threads(asked, workers) == given


def test_several_workers_give_each_run_one_thread_unless_the_sweep_asks(tmp_path: Path) -> None:
    # The scenario asks for 2 threads over two partitions of its own.
    base = sweeps.spec.tomllib.loads(with_parallel("2", HALF))
    doc = {"name": "ft", "scenario": base, "seeds": [1, 2]}
    pooled = manypath.sweep(doc, out=tmp_path / "pooled", jobs=2)
    assert pooled.ok and pooled.ran == 2
    assert stored_threads(tmp_path / "pooled") == [1, 1]
    # One worker: the scenario's own threads.
    alone = manypath.sweep(doc, out=tmp_path / "alone", jobs=1)
    assert alone.ok and stored_threads(tmp_path / "alone") == [2, 2]
    # Asked for by the sweep file, or by the call, which wins.
    asked = manypath.sweep({**doc, "threads": 2}, out=tmp_path / "asked", jobs=2)
    assert asked.ok and stored_threads(tmp_path / "asked") == [2, 2]
    called = manypath.sweep({**doc, "threads": 2}, out=tmp_path / "called", jobs=1, threads=1)
    assert called.ok and stored_threads(tmp_path / "called") == [1, 1]


def test_the_sweep_command_takes_threads(tmp_path: Path) -> None:
    sweep_file = tmp_path / "ft.toml"
    sweep_file.write_text('name = "ft"\nscenario = "scenario.toml"\nseeds = [1]\n')
    (tmp_path / "scenario.toml").write_text(with_parallel(partitions=HALF))
    out = tmp_path / "out"
    res = cli.invoke(app, ["sweep", str(sweep_file), "--out", str(out), "--threads", "2", "--jobs", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    assert stored_threads(out) == [2]
    res = cli.invoke(app, ["sweep", str(sweep_file), "--threads", "many", "--quiet"])
    assert res.exit_code == 2 and "--threads" in res.output, res.output


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "all", [2]])
def test_a_sweep_files_threads_are_checked_naming_the_key(value: object) -> None:
    base = sweeps.spec.tomllib.loads(FAT_TREE)
    with pytest.raises(SweepError, match='threads: must be a whole number of threads ≥ 1 or "auto"'):
        sweeps.expand({"scenario": base, "threads": value})
    assert sweeps.expand({"scenario": base, "threads": "auto"}).threads == "auto"
    assert sweeps.expand({"scenario": base}).threads is None
