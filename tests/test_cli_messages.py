"""The command line's help and its messages for common mistakes, word for word."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from manypath.cli import app
from manypath.sweeps import SweepResults
from manypath.sweeps.errors import NO_RAY_CLUSTER

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_help_shows_flags_as_plain_flags() -> None:
    res = runner.invoke(app, ["run", "--help"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert any(line.split()[:1] == ["--json"] and "Print {summary, counters}" in line for line in lines)
    assert any(line.split()[:2] == ["-q,", "--quiet"] for line in lines)
    assert any(line.split()[:2] == ["--out", "<path>"] for line in lines)  # options with values keep theirs
    assert "<bool>" not in res.stdout


def test_an_unknown_option_suggests_nothing_unlike_it() -> None:
    res = runner.invoke(app, ["run", "--bogus"])
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == "Error: No such option: --bogus"


def test_an_unknown_option_suggests_a_close_one() -> None:
    res = runner.invoke(app, ["run", "--jsn"])
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == "Error: No such option: --jsn (Possible options: --json)"
    res = runner.invoke(app, ["--verison"])
    assert res.stderr.splitlines()[-1] == "Error: No such option: --verison (Possible options: --version)"
    res = runner.invoke(app, ["sweep", "x.toml", "--dryrun"])
    assert res.stderr.splitlines()[-1] == "Error: No such option: --dryrun (Possible options: --dry-run)"


def test_trace_of_a_missing_directory_says_it_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    res = runner.invoke(app, ["trace", str(missing)])
    assert res.exit_code == 1
    assert res.stderr == f"error: {missing}: no such directory\n"
    res = runner.invoke(app, ["report", str(missing)])
    assert res.exit_code == 1
    assert res.stderr == f"error: {missing}: no such directory\n"


def test_trace_of_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "flows.parquet"
    file.write_bytes(b"")
    res = runner.invoke(app, ["trace", str(file)])
    assert res.exit_code == 1
    assert res.stderr == f"error: {file}: is a file, not a directory (give a run's directory)\n"


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray")
def test_ray_auto_without_a_cluster_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    import ray

    if ray.is_initialized():  # pragma: no cover - another test left Ray running here
        pytest.skip("Ray is initialised in this process")
    res = runner.invoke(app, ["sweep", str(ROOT / "sweeps" / "incast-rto.toml"), "--ray", "auto",
                              "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 1
    assert res.stderr == f"error: {NO_RAY_CLUSTER}\n"
    assert NO_RAY_CLUSTER == (
        "--ray auto: no running Ray cluster to join (none was started on this machine with "
        "`ray start`, and RAY_ADDRESS is not set); start one with `ray start --head`, give a "
        "cluster's address with --ray ADDRESS, or use --ray local to start Ray for this sweep"
    )
    assert "--address" not in res.output


def _sweep_results(mixed: bool = False) -> SweepResults:
    runs = pd.DataFrame({"run_id": ["a", "b", "c"], "status": ["ok", "ok", "failed"], "seed": [1, 2, 1]})
    flows = pd.DataFrame({"run_id": ["a"] * 1200, "fct_s": [0.001] * 1200})
    return SweepResults(flows=flows, queues=pd.DataFrame(), runs=runs,
                        params=["network.queue.ecn_k_packets", "traffic.0.load"], name="ecn",
                        generation=None if mixed else 2, mixed=mixed)


def test_sweep_results_repr_is_one_line() -> None:
    assert repr(_sweep_results()) == (
        "<SweepResults 'ecn', generation 2: 3 runs (2 ok, 1 failed) over "
        "network.queue.ecn_k_packets, traffic.0.load; 1,200 flows>"
    )
    assert repr(_sweep_results(mixed=True)) == (
        "<SweepResults 'ecn', every generation (mixed): 3 runs (2 ok, 1 failed) over "
        "network.queue.ecn_k_packets, traffic.0.load; 1,200 flows>"
    )
