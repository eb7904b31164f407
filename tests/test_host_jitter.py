"""Send jitter at the hosts' interfaces (`network.host_jitter_us`): it breaks the
lockout of a deterministic drop-tail queue, costs a backlogged interface the documented
share of its line rate, and keeps runs deterministic per seed."""

from __future__ import annotations

from typing import Any, Callable

import manypath
from test_pinned_paths import pooling
from test_validation_multipath import shared_bottleneck

RunFn = Callable[..., manypath.Results]

# One packet time of the 10 Gbps bottleneck (1500 bytes on the wire): the range of the
# random source delay that makes a packet's arrival phase uniform over a service time.
PACKET_TIME_US = 1.2


def pooling_10g(jitter_us: float) -> dict[str, Any]:
    """The pooling scenario with 10 Gbps hosts. Links of 3 µs: whether the locked-out
    subflow stalls its whole flow depends on the exact phase of the arrivals at the full
    queue, and at 3 µs it does (at 4-7 µs the subflow is locked out, with 4-7 timeouts,
    but its flow goes on over the other spine)."""
    sc = pooling("lia")
    sc["network"]["tiers"]["host"]["rate_gbps"] = 10
    sc["network"]["link"]["delay_us"] = 3
    sc["network"]["host_jitter_us"] = jitter_us
    return sc


def spine0_queue(res: manypath.Results) -> Any:
    q = res.queues
    return q[(q["node"] == "leaf0") & (q["peer"] == "spine0")].iloc[0]


def test_jitter_breaks_the_lockout_of_a_full_drop_tail_queue(run_checked: RunFn) -> None:
    """With 10 Gbps hosts the TCP flow's interface is backlogged and feeds the 10 Gbps
    spine path at exactly its rate, so the full queue there stays full and the multipath
    flow's subflow on it loses its retransmissions again and again (its flow goes on over
    the other spine: the data that subflow holds is resent there once the receive buffer
    fills). Jitter idles the interface before each packet, and the queue drains."""
    res = run_checked(pooling_10g(0.0))
    flows = res.flows.set_index("flow_id")
    locked = res.subflows.set_index(["flow_id", "subflow"]).loc[(0, 0)]
    assert locked["bytes_acked"] < 1e6, locked["bytes_acked"]
    # Timeout after timeout (7 in 20 ms); the jittered run below has at most 3.
    assert locked["timeouts"] >= 5
    assert flows.loc[1, "goodput_bps"] > 9.5e9, "the TCP flow sends at its line rate"
    assert spine0_queue(res)["mean_packets"] > 90, "the spine-0 queue stays full"

    res = run_checked(pooling_10g(PACKET_TIME_US))
    flows = res.flows.set_index("flow_id")
    locked = res.subflows.set_index(["flow_id", "subflow"]).loc[(0, 0)]
    assert locked["bytes_acked"] > 2e6, locked["bytes_acked"]
    assert flows.loc[0, "goodput_bps"] > 3e9, flows.loc[0, "goodput_bps"]
    assert flows.loc[0, "timeouts"] <= 3
    assert spine0_queue(res)["mean_packets"] < 10
    # The cost: a backlogged interface sends one packet per S + jitter/2 on average
    # (S = 1.2 µs), so the TCP flow gets 2/3 of what it had alone on the path.
    alone = 10e9 * 1460 / 1500
    expected = alone * 1.2 / (1.2 + PACKET_TIME_US / 2)
    assert abs(flows.loc[1, "goodput_bps"] / expected - 1) < 0.03, flows.loc[1, "goodput_bps"]


def small_jittered(seed: int, jitter_us: float) -> dict[str, Any]:
    sc = shared_bottleneck("lia", 2)
    sc.update(duration_ms=30, warmup_ms=10, seed=seed)
    sc["network"]["host_jitter_us"] = jitter_us
    return sc


def test_jittered_runs_are_deterministic_per_seed(run_checked: RunFn) -> None:
    def flows(seed: int, jitter_us: float) -> Any:
        return run_checked(small_jittered(seed, jitter_us)).flows

    a, b, c = flows(1, PACKET_TIME_US), flows(1, PACKET_TIME_US), flows(2, PACKET_TIME_US)
    assert a.equals(b), "same seed, same run"
    assert not a["bytes_acked"].equals(c["bytes_acked"]), "the seed drives the jitter"
    # Without jitter nothing in this scenario is random: the seed changes nothing.
    assert flows(1, 0.0).equals(flows(2, 0.0))
