"""FUSO's proactive multipath loss recovery (the FUSO document, §3 and §5) and the
client/server request workload it is measured with, at reduced scale on the testbed."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import manypath
from manypath.experiments import fuso as F


def lossy_queries(scheme: str, p: float, *, flows: int = 3000, subflows: int = 4,
                  seed: int = 1) -> dict[str, Any]:
    return F.query_stats(manypath.run(F.testbed(
        f"t-{scheme}", seed, [F.queries(scheme, flows, load=F.FAILURE_LOAD)], F.path_loss(p),
        subflows=subflows)).flows)


@pytest.fixture(scope="module")
def two_percent() -> dict[str, dict[str, Any]]:
    """2% random loss on both directions of path P1, queries only."""
    return {s: lossy_queries(s, 0.02) for s in ("tcp", "mptcp", "fuso")}


def test_fuso_has_the_lowest_tail_and_timeouts_on_a_lossy_path(two_percent: dict[str, dict[str, Any]]) -> None:
    s = two_percent
    assert all(r["completed"] == r["queries"] == 3000 for r in s.values()), s
    # 2% loss on one path of three hits enough queries that TCP and MPTCP time out on
    # more than 1% of them: their 99th percentile is an RTO (5 ms) away from the median.
    assert s["tcp"]["timeout_fraction"] > 0.01 and s["mptcp"]["timeout_fraction"] > 0.01, s
    assert s["tcp"]["fct_p99_ms"] > 5 and s["mptcp"]["fct_p99_ms"] > 5, s
    assert s["fuso"]["fct_p99_ms"] < 0.5 * min(s["tcp"]["fct_p99_ms"], s["mptcp"]["fct_p99_ms"]), s
    assert s["fuso"]["timeout_fraction"] < 0.5 * min(s["tcp"]["timeout_fraction"],
                                                     s["mptcp"]["timeout_fraction"]), s


def test_fuso_adds_redundancy_only_within_its_windows(two_percent: dict[str, dict[str, Any]]) -> None:
    f = two_percent["fuso"]
    # Queries mostly end before the window is full, so FUSO fills it with copies of
    # the tail: substantial extra load at this light load (the document: ~42%)...
    assert 0.2 < f["fuso_extra_load"] < 0.8, f
    # ...and every send of new subflow data, copies included, fitted the subflow's
    # window (checked by the sender on each one).
    assert f["window_violations"] == 0
    assert two_percent["mptcp"]["fuso_extra_load"] == 0


def test_fuso_extra_load_falls_as_the_load_rises() -> None:
    rows = {}
    for load in (0.1, 0.8):
        sc = F.testbed(f"t-load-{load}", 1, [F.queries("fuso", 600, load=load, background=True)],
                       F.path_loss(0.02))
        rows[load] = F.query_stats(manypath.run(sc).flows)
    assert rows[0.1]["window_violations"] == rows[0.8]["window_violations"] == 0
    assert rows[0.1]["fuso_extra_load"] > 0.1, rows
    # Congestion leaves less spare window at the tail of a query: fewer copies.
    assert rows[0.8]["fuso_extra_load"] < 0.85 * rows[0.1]["fuso_extra_load"], rows


def test_one_subflow_fuso_does_worse_than_four() -> None:
    one = lossy_queries("fuso", 0.02, subflows=1)
    four = lossy_queries("fuso", 0.02, subflows=4)
    # With one subflow the copies share the lossy path with what they protect.
    assert one["fct_p99_ms"] > 1.5 * four["fct_p99_ms"], (one, four)
    assert one["fct_mean_ms"] > 1.1 * four["fct_mean_ms"], (one, four)


def requests_scenario(**requests: Any) -> dict[str, Any]:
    traffic = {"pattern": "requests", "transport": "tcp", "size": {"fixed": 20_000},
               "rate_per_s": 2000, "flows": 200, "requests": requests}
    return F.testbed("t-requests", 1, [traffic], [])


def test_requests_ride_persistent_connections() -> None:
    res = manypath.run(requests_scenario(clients=[3, 4, 5], servers=[0, 1, 2], connections=2))
    f = res.flows
    assert len(f) == 200 and f["completed"].all()
    assert set(f["src"]) <= {0, 1, 2} and set(f["dst"]) <= {3, 4, 5}
    # No handshake in a response's FCT: 20 KB (14 packets, one initial window) takes one
    # base RTT (≈ 280 µs) plus serialisation, well under two RTTs.
    assert f["fct_s"].median() < 2 * 280e-6, f["fct_s"].describe()
    assert (f["bytes_sent"] >= 20_000).all()


def test_repflow_sends_every_flow_twice_and_takes_the_first() -> None:
    sc = requests_scenario(clients=[3], servers=[0], connections=1)
    sc["traffic"][0].update(transport="repflow", rate_per_s=200)
    f = manypath.run(sc).flows
    assert (f["copies"] == 2).all() and f["completed"].all()
    # A flow's counters are its two copies' connections' while it was outstanding: twice
    # its size, plus an earlier response's bytes when two requests come close together.
    ratio = f["bytes_sent"] / f["size"]
    assert ratio.min() > 1.5 and ratio.median() == pytest.approx(2.0, rel=0.02), ratio.describe()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"requests": None}, "traffic[0].requests"),
        ({"requests": {"clients": [3], "servers": [9]}}, "traffic[0].requests.servers"),
        ({"requests": {"clients": [3], "servers": [0], "fanout": 4,
                       "background_above_bytes": 1000}}, "traffic[0].requests.fanout"),
        ({"requests": {"clients": [3], "servers": [0], "background_above_bytes": 1000,
                       "background_transport": "nope"}}, "traffic[0].requests.background_transport"),
        ({"requests": {"clients": [3], "servers": [0], "sizes_below_bytes": 10_000}},
         "traffic[0].requests.sizes_below_bytes"),
        ({"requests": {"clients": [3], "servers": [0], "connections": 0}},
         "traffic[0].requests.connections"),
    ],
)
def test_bad_requests_name_the_field(change: dict[str, Any], field: str) -> None:
    sc = requests_scenario(clients=[3], servers=[0])
    sc["traffic"][0].update(change)
    if sc["traffic"][0]["requests"] is None:
        del sc["traffic"][0]["requests"]
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        manypath.run(sc)


def test_bad_fuso_settings_name_the_field() -> None:
    sc = requests_scenario(clients=[3], servers=[0])
    sc["transports"]["fuso"]["fuso_alpha"] = -1
    with pytest.raises(ValueError, match=r"transports\.fuso\.fuso_alpha"):
        manypath.run(sc)
    sc = requests_scenario(clients=[3], servers=[0])
    sc["transports"]["x"] = {"cc": "mmptcp", "fuso": True}
    with pytest.raises(ValueError, match=r"transports\.x\.fuso"):
        manypath.run(sc)
    sc = requests_scenario(clients=[3], servers=[0])
    sc["transports"]["repflow"]["replicas"] = 9
    with pytest.raises(ValueError, match=r"transports\.repflow\.replicas"):
        manypath.run(sc)


def test_runs_are_deterministic() -> None:
    a = manypath.run(F.testbed("d", 3, [F.queries("fuso", 300, load=0.05)], F.path_loss(0.02))).flows
    b = manypath.run(F.testbed("d", 3, [F.queries("fuso", 300, load=0.05)], F.path_loss(0.02))).flows
    pd.testing.assert_frame_equal(a, b)
