"""Multipath transports at reduced scale: the AMP document's incast and minimum window
syndrome results, MPTCP's throughput on a fat-tree permutation, coupling fairness, and
the per-subflow accounting."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import manypath
from manypath.analysis import jain_index
from manypath.experiments import amp

RunFn = Callable[..., manypath.Results]

# The AMP document's setting (star of 10 Gbps links, 100-packet queues marking at K, its
# ns-3 TCP settings), shared with the registered experiments.
amp_star = amp.star


def incast(transport: str) -> dict[str, Any]:
    """AMP §3.1: 30 flows of 128 KB join one bottleneck 50 µs apart; 4 subflows each."""
    flows = [
        {
            "pattern": "incast",
            "transport": transport,
            "receiver": 0,
            "senders": 30,
            "stagger_us": 50,
            "size": {"fixed": 131072},
        }
    ]
    return amp_star(30, 10, flows, duration_ms=3000)


def test_incast_dcm_and_xmp_time_out_amp_does_not(run_checked: RunFn) -> None:
    fct = {}
    for t in ("dctcp", "dcm", "xmp", "amp"):
        res = run_checked(incast(t))
        flows = res.flows
        assert flows["completed"].all(), t
        fct[t] = float(flows["fct_s"].mean())
        if t in ("dcm", "xmp"):
            assert flows["timeouts"].sum() > 0, f"{t} had no timeout"
            assert fct[t] >= 10 * fct["dctcp"], f"{t} mean FCT {fct[t] * 1e3:.2f} ms"
        if t == "amp":
            assert flows["timeouts"].sum() == 0
            assert flows["ssr_suppressions"].sum() > 0, "AMP's SSR never engaged"
            assert fct[t] <= 2 * fct["dctcp"], f"AMP {fct[t] * 1e3:.2f} ms vs DCTCP {fct['dctcp'] * 1e3:.2f} ms"


def syndrome(transport: str) -> dict[str, Any]:
    """AMP §3.2: 8 DCTCP flows and one 4-subflow multipath flow share a 10 Gbps
    bottleneck marking at K = 10."""
    flows = [{"pattern": "pair", "src": 1, "dst": 0, "transport": transport, "class": "multipath", "size": "long_lived"}]
    flows += [
        {"pattern": "pair", "src": 2 + i, "dst": 0, "transport": "dctcp", "class": "dctcp", "size": "long_lived"}
        for i in range(8)
    ]
    return amp_star(9, 10, flows, duration_ms=100, warmup_ms=20)


@pytest.mark.parametrize("transport", ["dcm", "xmp", "amp"])
def test_minimum_window_syndrome(run_checked: RunFn, transport: str) -> None:
    flows = run_checked(syndrome(transport)).flows
    multipath = float(flows.loc[flows["class"] == "multipath", "goodput_bps"].iloc[0])
    dctcp = float(flows.loc[flows["class"] == "dctcp", "goodput_bps"].mean())
    ratio = multipath / dctcp
    jain = jain_index(flows["goodput_bps"].to_numpy())
    if transport == "amp":
        assert ratio <= 1.3, f"AMP takes {ratio:.2f}x a DCTCP flow"
        assert jain >= 0.9, jain
    else:
        assert ratio >= 1.8, f"{transport} takes only {ratio:.2f}x a DCTCP flow"


def permutation(cc: str, subflows: int, seed: int) -> dict[str, Any]:
    return {
        "duration_ms": 25,
        "warmup_ms": 5,
        "seed": seed,
        "topology": {"fat_tree": {"k": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1}, "queue": {"limit_packets": 100}},
        "tcp": {"rto_min_us": 1000},
        "transports": {"mp": {"cc": cc, "subflows": subflows}},
        "traffic": [{"pattern": "permutation", "transport": "mp", "size": "long_lived"}],
    }


def test_permutation_throughput_grows_with_subflows(run_checked: RunFn) -> None:
    """003 §3.1: on a fat tree, MPTCP approaches full throughput as subflows are added,
    where single-path ECMP leaves capacity idle on colliding paths."""
    seeds = (1, 2)

    def mean_goodput(cc: str, n: int) -> float:
        return sum(run_checked(permutation(cc, n, s)).counters["goodput_fraction"] for s in seeds) / len(seeds)

    single = mean_goodput("reno", 1)
    g = {n: mean_goodput("lia", n) for n in (2, 4, 8)}
    assert single < g[2] < g[4] < g[8] + 0.02, (single, g)
    assert g[8] >= 1.3 * single, (single, g)
    assert g[8] >= 0.75, g


def test_subflow_counters_add_up(run_checked: RunFn) -> None:
    res = run_checked(permutation("lia", 4, 1))
    sub = res.subflows
    assert len(sub) == 4 * len(res.flows)
    per_flow = sub.groupby("flow_id")[["bytes_sent", "bytes_retx", "timeouts", "fast_retx"]].sum()
    flows = res.flows.set_index("flow_id")
    for col in per_flow.columns:
        assert (per_flow[col] == flows.loc[per_flow.index, col]).all(), col
    assert (sub["bytes_sent"] > 0).all(), "every subflow carried data"
    assert (res.flows["subflows"] == 4).all()


def shared_bottleneck(cc: str, subflows: int) -> dict[str, Any]:
    """A multipath flow and a TCP flow through one 10 Gbps drop-tail bottleneck."""
    return {
        "duration_ms": 200,
        "warmup_ms": 50,
        "topology": {"dumbbell": {"pairs": 2}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 5}, "queue": {"limit_packets": 100}},
        "tcp": {"rto_min_us": 1000},
        "transports": {"mp": {"cc": cc, "subflows": subflows}},
        "traffic": [
            {"pattern": "pair", "src": 0, "dst": 2, "transport": "mp", "size": "long_lived"},
            {"pattern": "pair", "src": 1, "dst": 3, "transport": "tcp", "size": "long_lived"},
        ],
    }


def share(run_checked: RunFn, cc: str, subflows: int) -> float:
    g = run_checked(shared_bottleneck(cc, subflows)).flows["goodput_bps"].to_numpy()
    return float(g[0] / g[1])


def test_coupling_restrains_subflows_at_a_shared_bottleneck(run_checked: RunFn) -> None:
    uncoupled = share(run_checked, "reno", 2)
    assert uncoupled >= 1.7, f"two uncoupled subflows should take about twice TCP's share, got {uncoupled:.2f}"
    for cc in ("lia", "olia"):
        coupled = share(run_checked, cc, 2)
        assert coupled <= 0.8 * uncoupled, f"{cc}: {coupled:.2f} vs uncoupled {uncoupled:.2f}"
    olia = share(run_checked, "olia", 2)
    assert 1 / 1.3 <= olia <= 1.3, olia


def test_lia_is_fair_to_tcp_at_a_shared_bottleneck(run_checked: RunFn) -> None:
    """RFC 6356's goal 2 at a drop-tail bottleneck. When ties between simultaneous
    arrivals went to the packet scheduled first, the packet that overflowed the queue was
    the one a window increase added, losses followed window growth rather than packet
    rate, and LIA took 1.5-1.6x TCP's share; with neutral ties (`engine::queue`) losses
    fall on packets as LIA assumes."""
    ratio = share(run_checked, "lia", 2)
    assert 1 / 1.3 <= ratio <= 1.3, ratio


def test_lia_is_fair_to_tcp_at_a_drop_tail_bottleneck_with_jitter(run_checked: RunFn) -> None:
    """The same drop-tail bottleneck with send jitter of one bottleneck packet time (1.2 µs,
    the range that makes a packet's arrival phase uniform over a service time): arrivals
    are no longer locked to departures, which packet overflows the queue is no longer
    decided by window growth, and LIA takes about TCP's share. Each host's interface then
    sends at most 2/3 of 10 Gbps, which caps the ratio only above 2."""

    def jittered_share(cc: str) -> float:
        sc = shared_bottleneck(cc, 2)
        sc["network"]["host_jitter_us"] = 1.2
        g = run_checked(sc).flows["goodput_bps"].to_numpy()
        return float(g[0] / g[1])

    ratio = jittered_share("lia")
    assert 1 / 1.3 <= ratio <= 1.3, ratio
    # The control: two uncoupled subflows still take well over TCP's share.
    assert jittered_share("reno") >= 1.6


def test_lia_is_fair_to_tcp_at_a_red_bottleneck(run_checked: RunFn) -> None:
    """RFC 6356's goal 2 (take no more than TCP at a shared bottleneck) assumes every path
    drops the same fraction of packets, which RED provides: drops follow arrivals."""
    red = {"limit_packets": 100, "red": {"min_packets": 20, "max_packets": 60}}

    def red_share(cc: str) -> float:
        sc = shared_bottleneck(cc, 2)
        sc["network"]["queue"] = red
        res = run_checked(sc)
        assert res.queues["early_drops"].sum() > 0.8 * res.queues["drops"].sum()
        g = res.flows["goodput_bps"].to_numpy()
        return float(g[0] / g[1])

    assert red_share("reno") >= 1.7, "two uncoupled subflows take about twice TCP's share"
    for cc in ("lia", "olia"):
        ratio = red_share(cc)
        assert 1 / 1.3 <= ratio <= 1.3, f"{cc}: {ratio:.2f}"


def one_flow(transport: str, size: int) -> dict[str, Any]:
    return {
        "duration_ms": 100,
        "topology": {"fat_tree": {"k": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1}, "queue": {"limit_packets": 100}},
        "traffic": [{"pattern": "pair", "src": 0, "dst": 15, "transport": transport, "size": {"fixed": size}}],
    }


def core_ports_used(res: manypath.Results) -> int:
    """Uplinks from the source pod's aggregation switches to the cores that carried data."""
    q = res.queues
    return int(((q["tier"] == "agg_core") & (q["tx_packets"] > 0) & q["node"].str.startswith("agg0.")).sum())


def test_mmptcp_scatters_packets_over_paths_then_switches(run_checked: RunFn) -> None:
    # A single-path flow uses one of the 4 core paths; a scattered one uses them all.
    assert core_ports_used(run_checked(one_flow("tcp", 70_000))) == 1
    scattered = run_checked(one_flow("mmptcp", 70_000))
    assert core_ports_used(scattered) >= 3
    assert scattered.flows["completed"].all()
    # Past the switch volume the MPTCP subflows carry the rest; the scatter subflow
    # carried the first 100 KB, rounded up to whole segments (69 of 1460 bytes).
    res = run_checked(one_flow("mmptcp", 1_000_000))
    sub = res.subflows.sort_values("subflow")
    assert int(sub["bytes_acked"].iloc[0]) == 69 * 1460
    assert (sub["bytes_sent"].iloc[1:] > 0).all()


@pytest.mark.xfail(
    strict=True,
    reason="reduced mmptcp-fattree (k = 4, 4:1, 100 Mbps, seed 1): MMPTCP's short flows "
    "have 129 timeouts to MPTCP's 343, but a mean FCT of 152 ms to 67 ms "
    "(the slides: 116 vs 125 ms mean, 101 vs 425 ms std)",
)
def test_mmptcp_short_flows_beat_mptcp() -> None:
    from manypath import experiments

    table = experiments.get("mmptcp-fattree").run(full=False, seed=1).set_index("transport")
    assert table.loc["mmptcp", "short_fct_mean_ms"] < table.loc["mptcp", "short_fct_mean_ms"]
    assert table.loc["mmptcp", "short_fct_std_ms"] < table.loc["mptcp", "short_fct_std_ms"]
