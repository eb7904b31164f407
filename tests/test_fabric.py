"""Lossless fabrics from Python: the shared buffer's and PFC's columns and counters, and a
PFC deadlock reaching the user as a warning."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import manypath
from manypath import _core, runner

INCAST = """
name = "pfc-incast"
duration_ms = 50
[topology.leaf_spine]
leaves = 2
spines = 1
hosts_per_leaf = 4
[network.queue]
limit_packets = 10000
[network.buffer]
bytes = 400000
[network.pfc]
[output]
queue_sample_us = 100
[[traffic]]
pattern = "incast"
transport = "tcp"
hosts = [7, 0, 1, 2, 5, 6]
size = { fixed = 300000 }
"""


def test_pfc_columns_and_counters_reach_python() -> None:
    res = manypath.run(INCAST)
    q = res.queues
    for column in ("buffer_mean_bytes", "buffer_peak_bytes", "buffer_drops_threshold",
                   "buffer_drops_full", "pfc_pauses_sent_c0", "pfc_resumes_sent_c1",
                   "pfc_pauses_received_c0", "pfc_paused_s_c0", "headroom_drops"):
        assert column in q.columns, column
    assert res.counters["packets_dropped"] == 0
    assert res.counters["pfc_pauses"] == int(q["pfc_pauses_sent_c0"].sum()) > 0
    assert res.counters["deadlocks"] == 0 and res.counters["deadlock_message"] == ""
    assert (q["pfc_paused_s_c0"] > 0).any()
    assert (res.queue_samples["buffer_bytes"] > 0).any()


def test_a_deadlock_warns_with_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _core.run
    message = "PFC deadlock at 0.000200 s: ports paused in a cycle"

    def deadlocked(*args: Any, **kwargs: Any) -> Any:
        raw = real(*args, **kwargs)
        raw["counters"].update(deadlocks=1, deadlock_message=message, partial=True)
        return raw

    monkeypatch.setattr(_core, "run", deadlocked)
    with pytest.warns(runner.DeadlockWarning, match="PFC deadlock"):
        res = manypath.run(INCAST)
    assert res.counters["partial"]


ROOT = Path(__file__).resolve().parent.parent
DEADLOCK = ROOT / "scenarios" / "pfc-deadlock-link-failures.toml"


def test_link_failures_route_traffic_into_a_pfc_deadlock() -> None:
    """Two failed links of a leaf-spine make shortest-path routing bounce traffic at
    leaf0 and leaf1; with PFC the bounced and the direct traffic pause one another in a
    cycle of four ports. The run is stopped at the check that finds it, with a message
    naming the cycle; the same fabric and traffic with every link up run to their end."""
    text = DEADLOCK.read_text()
    with pytest.warns(runner.DeadlockWarning, match="PFC deadlock"):
        res = manypath.run(text)
    c = res.counters
    assert c["deadlocks"] == 1 and c["partial"]
    assert c["sim_time_s"] < 0.01
    for port in ("leaf0→spine0", "spine0→leaf1", "leaf1→spine1", "spine1→leaf0"):
        assert port in c["deadlock_message"], c["deadlock_message"]
    intact = re.sub(r"\[\[faults\]\][^\[]*", "", text)
    assert "link_down" not in intact
    res = manypath.run(intact)
    c = res.counters
    assert c["deadlocks"] == 0 and not c["partial"]
    assert c["sim_time_s"] == pytest.approx(0.01)
    assert c["pfc_pauses"] > 0
