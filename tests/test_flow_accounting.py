"""Which flows started, finished and are measured, and each flow's ideal FCT: the
`started`, `measured` and `ideal_fct_s` columns of the flows table and the
`flows_generated`/`flows_started`/`flows_completed` counters, from the native module."""

from __future__ import annotations

import math
from typing import Any

import pytest

from manypath import _core

STAR = "[topology.star]\nsenders = 2\n"
FAT_TREE = "[topology.fat_tree]\nk = 4\n"


def run(text: str, **kw: Any) -> dict[str, Any]:
    return _core.run(text, ".", **kw)


def lone_flow(topology: str, size: int, cwnd: int, src: int, dst: int) -> dict[str, Any]:
    return run(f"""
duration_ms = 100
[tcp]
init_cwnd_packets = {cwnd}
{topology}
[[traffic]]
pattern = "pair"
src = {src}
dst = {dst}
size = {{ fixed = {size} }}
""")


@pytest.mark.parametrize("topology,src,dst", [(STAR, 1, 0), (FAT_TREE, 0, 15)])
@pytest.mark.parametrize("size", [1, 1000, 1460, 7000, 100_000, 1_000_000])
def test_a_lone_flow_within_its_initial_window_has_slowdown_one(
    topology: str, src: int, dst: int, size: int
) -> None:
    flows = lone_flow(topology, size, 1000, src, dst)["flows"]
    assert flows["completed"] == [True]
    slowdown = flows["fct_s"][0] / flows["ideal_fct_s"][0]
    assert slowdown == pytest.approx(1.0, rel=0.01)


def test_ideal_fct_grows_with_the_path_and_slow_start_costs_round_trips() -> None:
    star = lone_flow(STAR, 100_000, 1000, 1, 0)["flows"]["ideal_fct_s"][0]
    tree = lone_flow(FAT_TREE, 100_000, 1000, 0, 15)["flows"]["ideal_fct_s"][0]
    # Two hops against six: 2 µs of propagation each way per hop, and a handshake.
    assert tree - star == pytest.approx(4 * 4e-6 + 4 * 1500 * 8 / 1e10, rel=0.05)
    # With a 10-segment initial window a 100 KB flow needs several round trips.
    far = FAT_TREE + "[network.link]\ndelay_us = 20\n"
    slow = lone_flow(far, 100_000, 10, 0, 15)["flows"]
    fast = lone_flow(far, 100_000, 1000, 0, 15)["flows"]
    assert slow["fct_s"][0] / slow["ideal_fct_s"][0] > 1.5
    assert fast["fct_s"][0] / fast["ideal_fct_s"][0] == pytest.approx(1.0, rel=0.01)
    assert slow["ideal_fct_s"][0] == fast["ideal_fct_s"][0]


def test_persistent_connections_have_no_handshake_in_the_ideal() -> None:
    text = """
duration_ms = 20
[tcp]
init_cwnd_packets = 1000
[topology.star]
senders = 2
[[traffic]]
pattern = "requests"
rate_per_s = 2000
requests = { clients = [0], servers = [1], connections = 1 }
size = { fixed = 5000 }
"""
    flows = run(text)["flows"]
    assert len(flows["fct_s"]) > 5
    # Requests come far apart, so each finds the connection idle and its window open.
    for fct, ideal in zip(flows["fct_s"], flows["ideal_fct_s"]):
        if not math.isnan(fct):
            assert fct / ideal == pytest.approx(1.0, rel=0.01)


def test_long_lived_flows_have_no_ideal_fct() -> None:
    text = "duration_ms = 1\n" + FAT_TREE + '[[traffic]]\npattern = "permutation"\nsize = "long_lived"\n'
    flows = run(text)["flows"]
    assert all(math.isnan(x) for x in flows["ideal_fct_s"])
    assert all(flows["started"]) and all(flows["measured"])


def test_unfinished_and_unstarted_flows_are_told_apart() -> None:
    # Three flows: one finishes, one is still running at the end (censored), one starts
    # after the end; a closed loop's second flow waits for a first that never finishes.
    text = """
duration_ms = 1
[topology.star]
senders = 3
[[traffic]]
pattern = "pair"
src = 1
dst = 0
size = { fixed = 10000 }
[[traffic]]
pattern = "pair"
src = 2
dst = 0
size = { fixed = 100000000 }
[[traffic]]
pattern = "pair"
src = 3
dst = 0
start_us = 5000
size = { fixed = 10000 }
[[traffic]]
pattern = "pair"
src = 3
dst = 1
repeat = 2
closed_loop = true
size = { fixed = 100000000 }
"""
    r = run(text)
    f = r["flows"]
    assert f["started"] == [True, True, False, True, False]
    assert f["completed"] == [True, False, False, False, False]
    c = r["counters"]
    assert (c["flows_generated"], c["flows_started"], c["flows_completed"]) == (5, 3, 1)
    assert c["flows"] == 5


def test_a_stopped_run_counts_only_the_flows_that_started() -> None:
    # Flows start 100 µs apart; the run is stopped early.
    text = """
duration_ms = 50
[topology.star]
senders = 4
[[traffic]]
pattern = "incast"
size = { fixed = 20000 }
repeat = 400
interval_us = 100
"""
    full = run(text)["counters"]
    assert full["flows_started"] == full["flows_generated"] == 1600
    calls = []

    def stop(now: float, events: int) -> bool:
        calls.append(now)
        return False

    r = run(text, progress=stop, progress_every=20_000)
    c = r["counters"]
    assert c["partial"] is True
    starts = [s for s in r["flows"]["start_s"] if s <= calls[0]]
    assert 0 < c["flows_started"] < 1600
    assert c["flows_started"] == sum(r["flows"]["started"])
    # Flows started are exactly those whose start came before the stop.
    assert c["flows_started"] in (len(starts), len(starts) - 4)
    assert c["flows_generated"] == 1600
