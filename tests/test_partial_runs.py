"""Long runs can be stopped: by the progress callback or by Ctrl-C, keeping what was
measured, marked partial."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import manypath

ROOT = Path(__file__).resolve().parent.parent
LONG = ROOT / "bench" / "fattree16-dctcp.toml"


def test_progress_callback_reports_and_can_stop_the_run() -> None:
    seen: list[tuple[float, int]] = []

    def progress(sim_time_s: float, events: int) -> bool:
        seen.append((sim_time_s, events))
        return len(seen) < 3

    res = manypath.run(ROOT / "bench" / "fattree8-dctcp.toml", progress=progress, progress_every=100_000)
    assert len(seen) == 3
    assert [e for _, e in seen] == sorted(e for _, e in seen)
    assert res.counters["partial"] is True
    assert 0 < res.counters["sim_time_s"] < 0.02
    assert len(res.flows) == 128


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after_progress(args: list[str]) -> tuple[int, str, str]:
    """Start ``manypath run ARGS`` with progress lines on its (non-terminal) stderr, send
    SIGINT once the first line shows the simulation running, return (code, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "manypath", "run", *args, "--progress-interval", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell without job control starts background jobs with SIGINT ignored, and a
        # Python started so keeps ignoring it: give the run the default, as a terminal does.
        preexec_fn=_default_sigint,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # blocks until the run reports progress (or ends)
    assert first.startswith("progress: "), first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, first + err


def test_ctrl_c_stops_the_cli_cleanly_with_partial_results() -> None:
    code, out, err = _interrupt_after_progress([str(LONG), "--json"])
    assert code == 130, err
    doc = json.loads(out)
    assert doc["counters"]["partial"] is True
    assert 0 < doc["counters"]["sim_time_s"] < 0.02


def test_ctrl_c_writes_the_partial_results_and_says_so(tmp_path: Path) -> None:
    out_dir = tmp_path / "run"
    code, out, err = _interrupt_after_progress([str(LONG), "--out", str(out_dir)])
    assert code == 130, err
    assert "PARTIAL: interrupted at " in out and " of 20 ms simulated" in out
    stored = manypath.results.load_run(out_dir)
    assert stored.counters["partial"] is True
    assert 0 < stored.counters["sim_time_s"] < 0.02
    assert stored.scenario["duration_ms"] == 20 and stored.provenance["seed"] == stored.scenario["seed"]


def test_a_deadlock_has_its_own_exit_code_and_summary_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from manypath.cli import app

    scenario = ROOT / "scenarios" / "pfc-deadlock-link-failures.toml"
    out = tmp_path / "d"
    res = CliRunner().invoke(app, ["run", str(scenario), "--out", str(out)])
    assert res.exit_code == 3, res.output
    assert "STOPPED: a PFC deadlock was detected at" in res.stdout
    assert "(exit code 3)" in res.stdout
    assert "PARTIAL" not in res.stdout
    # The results up to the deadlock are written, marked as such.
    counters = json.loads((out / "counters.json").read_text())["counters"]
    assert counters["deadlocks"] == 1 and counters["partial"]
