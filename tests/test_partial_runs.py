"""Long runs can be stopped: by the progress callback or by Ctrl-C, keeping what was
measured, marked partial."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
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


def test_ctrl_c_stops_the_cli_cleanly_with_partial_results() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "manypath", "run", str(LONG), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(5.0)  # well past start-up: the simulation is running
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    assert doc["counters"]["partial"] is True
    assert 0 < doc["counters"]["sim_time_s"] < 0.02
