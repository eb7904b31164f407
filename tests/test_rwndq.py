"""RWNDQ on the switch ports (the RWNDQ document, §II–IV), at reduced scale: drops,
fairness, the queue it steers to, the mice among elephants, and its flow counts."""

from __future__ import annotations

from typing import Any

import pytest

import manypath
from manypath import analysis
from manypath.experiments import rwndq as R
from manypath.results import Results

WARMUP_S = 0.5


def run(setting: R.Setting, elephants: int, cc: str, rwndq: bool, **kw: Any) -> Results:
    kw.setdefault("duration_s", 2.5)
    kw.setdefault("warmup_s", WARMUP_S)
    return manypath.run(R.scenario(setting, elephants, cc, rwndq, **kw))


@pytest.fixture(scope="module", params=["tcp", "cubic"])
def incast(request: pytest.FixtureRequest) -> dict[str, Results]:
    """50 elephants (10 per sending machine) under FIFO and under RWNDQ."""
    return {q: run(R.TESTBED, 10, request.param, q == "rwndq") for q in ("fifo", "rwndq")}


def test_rwndq_drops_far_fewer_packets_at_the_same_utilization(incast: dict[str, Results]) -> None:
    drops = {q: int(R.bottleneck_links(r.queues)["drops"].sum()) for q, r in incast.items()}
    util = {q: R.link_stats(r, R.TESTBED)["util_l6"] for q, r in incast.items()}
    assert drops["fifo"] > 500, drops
    assert drops["rwndq"] <= 0.2 * drops["fifo"], drops
    assert util["rwndq"] == pytest.approx(util["fifo"], rel=0.05), util
    assert util["rwndq"] > 0.95


def test_rwndq_elephants_are_fair_and_steady(incast: dict[str, Results]) -> None:
    stats = {q: R.elephant_stats(r, WARMUP_S) for q, r in incast.items()}
    assert stats["rwndq"]["jain"] >= 0.95, stats["rwndq"]
    assert stats["fifo"]["jain"] < 0.9, stats["fifo"]
    # Per-flow variance of the 0.5 s throughput samples: lower for the typical flow and
    # for the worst one.
    for q in ("var_p50", "var_p100"):
        assert stats["rwndq"][q] < stats["fifo"][q], (q, stats)


def test_rwndq_rewrites_acks_only_where_it_runs() -> None:
    res = run(R.TESTBED, 2, "tcp", True, duration_s=0.5, warmup_s=0.1)
    q = res.queues
    host_ports = q[q["node_kind"] == "host"]
    assert not host_ports["rwndq"].any()
    link6 = R.bottleneck_links(q).iloc[-1]
    assert link6["rwndq"] and link6["rwndq_rewrites"] > 0
    assert link6["rwndq_peak_flows"] == 10


@pytest.mark.parametrize(
    ("setting", "elephants"),
    [(R.TESTBED, 2), (R.NS2, 4)],
    ids=["testbed-10-flows", "ns2-20-flows"],
)
def test_rwndq_holds_the_queue_near_its_target(setting: R.Setting, elephants: int) -> None:
    """With few enough flows that one segment each fits in the path (so the target is
    reachable), the bottleneck's mean queue stays within a factor of 2 of the target."""
    res = run(setting, elephants, "tcp", True, duration_s=1.0, warmup_s=0.2)
    link = R.link_stats(res, setting)
    assert link["target_kb"] / 2 <= link["queue_l6_kb"] <= 2 * link["target_kb"], link
    assert link["util_l6"] > 0.95, link


def test_rwndq_keeps_mice_below_the_minimum_rto_among_elephants() -> None:
    kw = {"duration_s": 3.0, "warmup_s": WARMUP_S, "mice_requests": 40, "mice_start_s": 1.0}
    fifo = R.mice_stats(run(R.TESTBED, 10, "tcp", False, **kw))
    rw = R.mice_stats(run(R.TESTBED, 10, "tcp", True, **kw))
    assert rw["mice_done"] == rw["mice"] == 30 * 40, rw
    assert rw["fct_p99_ms"] < 200.0, rw
    assert fifo["fct_p99_ms"] > rw["fct_p99_ms"], (fifo, rw)
    assert fifo["fct_mean_ms"] > 2 * rw["fct_mean_ms"], (fifo, rw)


def test_flow_counts_return_to_zero_when_every_flow_has_finished() -> None:
    sc = R.scenario(R.TESTBED, 4, "tcp", True, duration_s=10.0, warmup_s=0.0,
                    mice_requests=20, mice_start_s=0.001)
    sc["traffic"][0]["size"] = {"fixed": 200_000}
    res = manypath.run(sc)
    assert res.flows["completed"].all()
    ports = res.queues[res.queues["rwndq"].astype(bool)]
    assert len(ports) > 0
    assert (ports["rwndq_flows"] == 0).all(), ports[ports["rwndq_flows"] != 0]
    # Every switch port on a path counted its flows: links 1–5 their machine's flows
    # (4 elephants, and 6 mice at a time), link 6 all of them.
    links = R.bottleneck_links(ports)
    assert (links["rwndq_peak_flows"].iloc[:5] >= 4).all()
    assert links["rwndq_peak_flows"].iloc[-1] >= 20


def test_interval_rates_from_flow_samples() -> None:
    res = run(R.TESTBED, 1, "tcp", True, duration_s=2.0, warmup_s=0.5)
    rates = analysis.interval_rates(res.flow_samples, after_s=0.5)
    # 5 flows × 3 intervals ending at 1.0, 1.5 and 2.0 s.
    assert len(rates) == 15
    assert sorted(rates["time_s"].unique()) == pytest.approx([1.0, 1.5, 2.0])
    total = rates.groupby("time_s")["rate_bps"].sum()
    assert (total > 0.9e9).all() and (total < 1.0e9).all(), total
