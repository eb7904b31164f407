"""A run's directory holds one run's files and no other's (`manypath.run_dir`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

import manypath.runner

from manypath.cli import app
from manypath.results import (
    CAPTURE_FILE,
    COUNTERS_FILE,
    FLOWS_FILE,
    TRACE_FILE,
    Results,
    RunDirError,
)
from manypath.run_dir import check

runner = CliRunner()


def _run(scenario: Path, out: Path, *extra: str) -> str:
    res = runner.invoke(app, ["run", str(scenario), "-q", "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return res.output


def _events(out: Path) -> int:
    return int(json.loads((out / COUNTERS_FILE).read_text())["counters"]["events"])


def test_a_reused_out_keeps_nothing_of_the_previous_run(incast_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    _run(incast_file, out, "--pcap", "switch:host0", "--trace", "switch:host0")
    assert (out / CAPTURE_FILE).is_file() and (out / TRACE_FILE).is_file()
    first = _events(out)
    (out / "report.html").write_text("<html>the first run's report</html>")
    _run(incast_file, out, "--set", "duration_ms=1")
    # The capture, trace and report were the first run's: gone with it.
    assert not (out / CAPTURE_FILE).exists()
    assert not (out / TRACE_FILE).exists()
    assert not (out / "report.html").exists()
    assert _events(out) < first
    assert (out / FLOWS_FILE).is_file()
    # No temporary sibling is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "incast.toml"]


def test_a_file_is_refused_before_the_run(
    incast_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "results.txt"
    target.write_text("mine")

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started before --out was checked")

    monkeypatch.setattr(manypath.runner, "run", no_run)
    res = runner.invoke(app, ["run", str(incast_file), "-q", "--out", str(target)])
    assert res.exit_code == 1
    assert f"{target}: is a file" in res.stderr
    assert "Traceback" not in res.output
    assert target.read_text() == "mine"


def test_a_directory_that_is_not_a_run_is_refused_and_kept(incast_file: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    res = runner.invoke(app, ["run", str(incast_file), "-q", "--out", str(mine)])
    assert res.exit_code == 1
    assert f"{mine}: not empty and not a manypath run (no counters.json)" in res.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_a_previous_run_holding_a_users_file_is_refused(incast_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "d"
    _run(incast_file, out)
    (out / "analysis.ipynb").write_text("{}")
    before = sorted(p.name for p in out.iterdir())
    res = runner.invoke(app, ["run", str(incast_file), "-q", "--out", str(out)])
    assert res.exit_code == 1
    assert "also holds analysis.ipynb" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == before


def test_an_empty_directory_and_a_new_path_are_taken(tmp_path: Path) -> None:
    known = frozenset({"counters.json"})
    (tmp_path / "empty").mkdir()
    check(tmp_path / "empty", known, "counters.json")
    check(tmp_path / "new" / "deeper", known, "counters.json")
    with pytest.raises(RunDirError):
        (tmp_path / "f").write_text("")
        check(tmp_path / "f", known, "counters.json")


def test_results_files_follow_the_umask(incast_file: Path, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "d"
        _run(incast_file, out)
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    for p in out.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p.name


def test_the_api_replaces_a_run_whole(results: Results, tmp_path: Path) -> None:
    out = tmp_path / "d"
    results.to_parquet(out)
    (out / CAPTURE_FILE).write_bytes(b"old capture")
    results.to_parquet(out)
    assert not (out / CAPTURE_FILE).exists()
    assert (out / FLOWS_FILE).is_file()



def test_an_empty_or_capped_capture_is_said(incast_file: Path, tmp_path: Path) -> None:
    capped = runner.invoke(app, ["run", str(incast_file), "--out", str(tmp_path / "capped"),
                                 "--pcap", "switch:host0", "--set", "output.pcap.max_packets=10"])
    assert capped.exit_code == 0, capped.output
    assert "warning: the packet capture (capture.pcapng) stopped at output.pcap.max_packets (10): " in capped.stderr
    late = runner.invoke(app, ["run", str(incast_file), "--out", str(tmp_path / "late"),
                               "--trace", "switch:host0", "--set", "output.trace.from_us=1e9"])
    assert late.exit_code == 0, late.output
    assert "warning: the event trace (trace.parquet) recorded no event" in late.stderr
    full = runner.invoke(app, ["run", str(incast_file), "--out", str(tmp_path / "full"),
                               "--pcap", "switch:host0", "--set", "output.pcap.max_packets=1000000"])
    assert full.exit_code == 0, full.output
    assert "capture" not in full.stderr.replace(str(tmp_path), "")
