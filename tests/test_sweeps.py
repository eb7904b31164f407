from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import manypath
from manypath import sweeps
from manypath.cli import app
from manypath.sweeps import SweepError, SweepResults

runner = CliRunner()

# A k = 4 fat tree (16 hosts) with DCTCP web-search flows: small enough that a run takes
# a few tens of milliseconds, busy enough that ECN threshold and load change the tables.
FATTREE = """\
name = "ft4"
seed = 1
duration_ms = {duration_ms}
stop_when_done = false

[topology.fat_tree]
k = 4

[network.link]
rate_gbps = 10
delay_us = 1

[network.queue]
limit_packets = 100
ecn_k_packets = 15

[[traffic]]
pattern = "random_pairs"
transport = "dctcp"
class = "websearch"
arrival = "poisson"
load = 0.5
size = {{ cdf = "websearch" }}
"""

GRID = """\
name = "ft4-sweep"
scenario = "ft4.toml"
seeds = [1, 2]

[grid]
"network.queue.ecn_k_packets" = [10, 20]
"traffic.0.load" = [0.3, 0.5]
"""


def write_sweep(tmp_path: Path, duration_ms: float = 3, grid: str = GRID) -> Path:
    (tmp_path / "ft4.toml").write_text(FATTREE.format(duration_ms=duration_ms))
    path = tmp_path / "sweep.toml"
    path.write_text(grid)
    return path


def run_dirs(out: Path) -> list[Path]:
    return sorted(d for d in out.iterdir() if d.is_dir() and not d.name.startswith("."))


def snapshot(out: Path) -> dict[str, bytes]:
    """Every file of every stored run, by path."""
    return {str(p.relative_to(out)): p.read_bytes() for d in run_dirs(out) for p in sorted(d.rglob("*")) if p.is_file()}


def assert_no_partial_results(out: Path) -> None:
    """Every run directory under its final name is complete; nothing temporary is left."""
    for d in run_dirs(out):
        meta = json.loads((d / "run.json").read_text())
        assert meta["run_id"] == d.name
        assert (d / "scenario.toml").is_file()
        if meta["status"] == "ok":
            loaded = manypath.load(d)
            assert len(loaded.flows) > 0
        else:
            assert (d / "error.txt").is_file()
    leftovers = [p.name for p in out.iterdir() if p.name.startswith(".") and p.name != ".lock"]
    assert leftovers == []


# --- Expanding sweep files ---------------------------------------------------------------------


def test_expand_grid_and_seeds(tmp_path: Path) -> None:
    sw = sweeps.expand(write_sweep(tmp_path))
    assert sw.name == "ft4-sweep"
    assert sw.params == ["network.queue.ecn_k_packets", "traffic.0.load"]
    assert len(sw.runs) == 8
    assert [r.seed for r in sw.runs[:2]] == [1, 2]
    first = sw.runs[0]
    assert first.params == {"network.queue.ecn_k_packets": 10, "traffic.0.load": 0.3}
    assert first.scenario["network"]["queue"]["ecn_k_packets"] == 10
    assert first.scenario["traffic"][0]["load"] == 0.3
    assert first.scenario["seed"] == 1
    assert 'ecn_k_packets = 10' in first.text and "seed = 1" in first.text
    assert len({r.run_id for r in sw.runs}) == 8
    assert sw.results_dir == Path("results") / "ft4-sweep"


def test_unquoted_dotted_keys_mean_the_same(tmp_path: Path) -> None:
    quoted = sweeps.expand(write_sweep(tmp_path))
    bare = sweeps.expand(write_sweep(tmp_path, grid=GRID.replace('"network.queue.ecn_k_packets"',
                                                                 "network.queue.ecn_k_packets")
                                     .replace('"traffic.0.load"', "traffic.0.load")))
    assert [r.run_id for r in bare.runs] == [r.run_id for r in quoted.runs]


def test_run_id_depends_only_on_scenario_and_seed(tmp_path: Path) -> None:
    a = sweeps.expand(write_sweep(tmp_path)).runs
    # The same runs from an inline scenario, a different name and order of the grid.
    inline = {
        "name": "other",
        "scenario": sweeps.spec.tomllib.loads(FATTREE.format(duration_ms=3)),
        "seeds": [2, 1],
        "grid": {"traffic.0.load": [0.5, 0.3], "network.queue.ecn_k_packets": [20, 10]},
    }
    b = sweeps.expand(inline, base_dir=tmp_path).runs
    assert {r.run_id for r in a} == {r.run_id for r in b}


def test_points_combine_with_grid(tmp_path: Path) -> None:
    sw = sweeps.expand(
        {
            "scenario": sweeps.spec.tomllib.loads(FATTREE.format(duration_ms=3)),
            "points": [{"traffic.0.transport": "tcp", "network.queue.ecn_k_packets": 100},
                       {"traffic.0.transport": "dctcp"}],
            "grid": {"traffic.0.load": [0.3, 0.5]},
            "seeds": 2,
        }
    )
    assert len(sw.runs) == 8
    assert sw.params == ["traffic.0.transport", "network.queue.ecn_k_packets", "traffic.0.load"]
    assert [r.seed for r in sw.runs[:2]] == [1, 2]


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"traffic.3.load": [0.1]}, "traffic.3 does not exist"),
        ({"traffic.x.load": [0.1]}, "use a number"),
        ({"duration_ms.x": [1]}, "is a value"),
        ({"seed": [1, 2]}, "seeds"),
        ({"traffic.0.load": 0.3}, "non-empty array"),
        ({"traffic.0.load": [0.3, 0.3]}, "same scenario"),
    ],
)
def test_bad_grids_name_the_path(grid: dict[str, Any], message: str) -> None:
    doc = {"scenario": sweeps.spec.tomllib.loads(FATTREE.format(duration_ms=3)), "grid": grid}
    with pytest.raises(SweepError, match=message):
        sweeps.expand(doc)


def test_unknown_sweep_key() -> None:
    with pytest.raises(SweepError, match="unknown key"):
        sweeps.expand({"scenario": {}, "gird": {}})


def test_invalid_values_are_rejected_before_running(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, grid=GRID.replace("[0.3, 0.5]", "[0.3, -2]"))
    with pytest.raises(SweepError, match="traffic.0.load=-2"):
        manypath.sweep(path, out=tmp_path / "out", jobs=1)
    assert not (tmp_path / "out").exists()


# --- Running, storing, resuming ---------------------------------------------------------------


def test_sweep_stores_every_run_and_loads_them_combined(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = manypath.sweep(write_sweep(tmp_path), out=out, jobs=2)
    assert summary.ok and summary.ran == 8 and summary.skipped == 0
    assert_no_partial_results(out)
    one = run_dirs(out)[0]
    meta = json.loads((one / "run.json").read_text())
    assert set(meta) >= {"run_id", "status", "seed", "params", "version", "wall_s"}
    assert meta["version"] == manypath.__version__
    # The stored scenario is exactly what ran: running it again gives the same tables.
    again = manypath.run(one / "scenario.toml")
    pd.testing.assert_frame_equal(again.flows, manypath.load(one).flows)

    sw = manypath.load(out)
    assert isinstance(sw, SweepResults)
    assert sw.params == ["network.queue.ecn_k_packets", "traffic.0.load"]
    assert len(sw.runs) == 8 and (sw.runs["status"] == "ok").all()
    assert list(sw.flows.columns[:4]) == ["run_id", "seed", "network.queue.ecn_k_packets", "traffic.0.load"]
    assert sw.flows.groupby("run_id").ngroups == 8
    assert set(sw.queues["traffic.0.load"]) == {0.3, 0.5}
    # Higher load offers more flows.
    per_load = sw.flows.groupby("traffic.0.load").size()
    assert per_load[0.5] > per_load[0.3]

    rerun = manypath.sweep(tmp_path / "sweep.toml", out=out, jobs=2)
    assert rerun.ok and rerun.ran == 0 and rerun.skipped == 8


def test_growing_the_grid_runs_only_new_points(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manypath.sweep(write_sweep(tmp_path), out=out, jobs=1)
    grown = write_sweep(tmp_path, grid=GRID.replace("[10, 20]", "[10, 20, 40]"))
    summary = manypath.sweep(grown, out=out, jobs=1)
    assert (summary.skipped, summary.ran) == (8, 4)


def test_failed_run_is_recorded_does_not_stop_others_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    path = write_sweep(tmp_path)
    real = sweeps.execution.execute
    victim = sweeps.expand(path).runs[2].run_id

    def flaky(task: sweeps.RunSpec) -> sweeps.Outcome:
        if task.run_id == victim:
            return sweeps.Outcome(task.run_id, 0.0, error="Traceback ...\nRuntimeError: boom\n")
        return real(task)

    monkeypatch.setattr(sweeps.execution, "execute", flaky)
    summary = manypath.sweep(path, out=out, jobs=1)
    assert not summary.ok and summary.ran == 8
    assert [f["run_id"] for f in summary.failed] == [victim]
    assert summary.failed[0]["error"] == "RuntimeError: boom"
    assert "boom" in (out / victim / "error.txt").read_text()
    assert json.loads((out / victim / "run.json").read_text())["status"] == "failed"
    assert_no_partial_results(out)
    sw = manypath.load(out)
    assert isinstance(sw, SweepResults)
    assert (sw.runs["status"] == "ok").sum() == 7 and victim not in set(sw.flows["run_id"])

    monkeypatch.setattr(sweeps.execution, "execute", real)
    retry = manypath.sweep(path, out=out, jobs=1)
    assert retry.ok and (retry.skipped, retry.ran) == (7, 1)
    assert json.loads((out / victim / "run.json").read_text())["status"] == "ok"
    assert_no_partial_results(out)


def test_interrupt_keeps_finished_runs_and_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    path = write_sweep(tmp_path)
    real = sweeps.execution.execute
    calls = []

    def interrupted(task: sweeps.RunSpec) -> sweeps.Outcome:
        calls.append(task.run_id)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(sweeps.execution, "execute", interrupted)
    with pytest.raises(KeyboardInterrupt) as stopped:
        manypath.sweep(path, out=out, jobs=1)
    assert isinstance(stopped.value, sweeps.SweepInterrupted)
    kept = stopped.value.summary
    assert kept.interrupted and not kept.ok and (kept.ran, kept.not_run) == (3, 5)
    assert len(run_dirs(out)) == 3
    assert_no_partial_results(out)

    monkeypatch.setattr(sweeps.execution, "execute", real)
    before = {d.name: (d / "run.json").read_text() for d in run_dirs(out)}
    summary = manypath.sweep(path, out=out, jobs=1)
    assert summary.ok and (summary.skipped, summary.ran) == (3, 5)
    for name, meta in before.items():  # finished runs were not run again
        assert (out / name / "run.json").read_text() == meta


def test_killed_sweep_process_resumes(tmp_path: Path) -> None:
    # Runs of ~0.3 s each, so the process is certainly killed mid-sweep.
    path = write_sweep(tmp_path, duration_ms=60)
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "manypath", "sweep", str(path), "--out", str(out), "--jobs", "1", "--quiet"]
    proc = subprocess.Popen(cli, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if out.is_dir() and run_dirs(out):
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"the sweep ended before it was killed: {proc.stderr.read()!r}"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        proc.stderr.close()  # type: ignore[union-attr]
    stored = {d.name: (d / "run.json").read_text() for d in run_dirs(out)}
    assert 1 <= len(stored) < 8
    # A kill can land inside a write; what is under a final name is still complete.
    for d in run_dirs(out):
        assert json.loads((d / "run.json").read_text())["status"] == "ok"

    res = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--jobs", "2", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["skipped"], doc["ran"], doc["completed"]) == (len(stored), 8 - len(stored), 8)
    assert_no_partial_results(out)
    for name, meta in stored.items():
        assert (out / name / "run.json").read_text() == meta


# --- Local pool and Ray give the same tables --------------------------------------------------


def _tables(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    sw = manypath.load(out)
    assert isinstance(sw, SweepResults)
    return sw.flows, sw.queues


def test_ray_cluster_gives_the_same_tables_as_the_local_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import ray
    except ImportError:
        pytest.skip("Ray is not installed (pip install 'manypath[ray]')")
    path = write_sweep(tmp_path)
    local = manypath.sweep(path, out=tmp_path / "local", jobs=2)
    assert local.ok and local.ran == 8
    # A throwaway local cluster needs no token written to the home directory.
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = manypath.sweep(path, out=tmp_path / "ray", ray="auto")
    finally:
        ray.shutdown()
    assert remote.ok and remote.ran == 8 and remote.backend == "ray"
    assert [d.name for d in run_dirs(tmp_path / "local")] == [d.name for d in run_dirs(tmp_path / "ray")]
    for a, b in zip(_tables(tmp_path / "local"), _tables(tmp_path / "ray")):
        pd.testing.assert_frame_equal(a, b)


# --- The command ----------------------------------------------------------------------------


def test_sweep_cli_json_dry_run_and_rerun(tmp_path: Path) -> None:
    path = write_sweep(tmp_path)
    out = tmp_path / "out"
    plan = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--dry-run", "--json"])
    assert plan.exit_code == 0, plan.output
    runs = json.loads(plan.stdout)["runs"]
    assert len(runs) == 8 and {r["status"] for r in runs} == {"todo"}

    res = runner.invoke(app, ["sweep", str(path), "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "8 of 8 runs stored" in res.stdout
    assert "[8/8] done 8, failed 0, remaining 0" in res.stderr

    quiet = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--quiet"])
    assert quiet.exit_code == 0 and quiet.output == ""
    plan = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--dry-run"])
    assert plan.stdout.count(" ok") == 8


def test_sweep_cli_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = runner.invoke(app, ["sweep", str(tmp_path / "nowhere.toml")])
    assert res.exit_code == 1 and "nowhere.toml" in res.stderr and "Traceback" not in res.output

    path = write_sweep(tmp_path, grid=GRID.replace('"traffic.0.load"', '"traffic.4.load"'))
    res = runner.invoke(app, ["sweep", str(path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "traffic.4" in res.stderr and res.stdout == ""

    def broken(task: sweeps.RunSpec) -> sweeps.Outcome:
        return sweeps.Outcome(task.run_id, 0.0, error="ValueError: nope")

    monkeypatch.setattr(sweeps.execution, "execute", broken)
    res = runner.invoke(app, ["sweep", str(write_sweep(tmp_path)), "--out", str(tmp_path / "o"), "-j", "1", "--json"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert doc["failed"] == 8 and doc["failed_runs"][0]["error"] == "ValueError: nope"
    assert "failed" in res.stderr

    assert runner.invoke(app, ["sweep"]).exit_code == 2
    assert runner.invoke(app, ["sweep", str(path), "--jobs", "0"]).exit_code == 2
