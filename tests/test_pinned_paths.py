"""Multipath flows on pinned paths: the AMP document's traffic shifting (§4.1, §5.2) and
MPTCP's resource pooling (LIA moves its traffic off a congested path)."""

from __future__ import annotations

from typing import Any, Callable

import manypath
from manypath.experiments import amp

RunFn = Callable[..., manypath.Results]


def test_amp_and_xmp_shift_traffic_faster_than_dcm() -> None:
    """AMP §4.1, §5.2 (Fig. 6, 11): with a fixed cut per marked window, MPTCP with β = 4,
    AMP and XMP move a subflow's traffic off a newly congested path faster than DCM's
    DCTCP-style cut.
    Reduced scale: 0.2 s phases."""
    rows = {s: amp.shifting_row(s, 0.2, 1)[0] for s in amp.SHIFT_SCHEMES}
    for s, r in rows.items():
        # Before the switch the multipath flow runs on the upper path, after it on the lower.
        assert r["upper_share_before"] > 0.9, (s, r)
        assert r["upper_share_after"] < 0.1, (s, r)
        assert r["mp_gbps_after"] > 8.0, (s, r)
    dcm = rows["dcm"]["shift_ms"]
    for s in ("mptcp-beta4", "xmp", "amp"):
        assert rows[s]["shift_ms"] < 0.6 * dcm, {k: v["shift_ms"] for k, v in rows.items()}


def pooling(cc: str) -> dict[str, Any]:
    """A 2-subflow flow from host 0 to host 3 with one subflow on each spine of a 2x2
    leaf-spine, and a TCP flow from host 1 to host 4 on spine 0. Hosts have 40 Gbps
    links, so the two 10 Gbps paths, not the sender's NIC, limit the flow."""
    traffic = [
        {"pattern": "pair", "src": 0, "dst": 3, "transport": "mp", "size": "long_lived", "paths": [0, 1]},
        {"pattern": "pair", "src": 1, "dst": 4, "transport": "tcp", "size": "long_lived", "paths": [0]},
    ]
    return {
        "duration_ms": 200,
        "warmup_ms": 50,
        "topology": {"leaf_spine": {"leaves": 2, "spines": 2, "hosts_per_leaf": 3}},
        "network": {
            "link": {"rate_gbps": 10, "delay_us": 5},
            "queue": {"limit_packets": 100},
            "tiers": {"host": {"rate_gbps": 40}},
        },
        "tcp": {"rto_min_us": 1000},
        "transports": {"mp": {"cc": cc, "subflows": 2}},
        "traffic": traffic,
    }


def pooling_shares(run_checked: RunFn, cc: str) -> tuple[float, float]:
    """The multipath flow's share of its bytes on the uncongested path, and its congested
    subflow's throughput relative to the TCP flow it shares spine 0 with."""
    res = run_checked(pooling(cc))
    sub = res.subflows.sort_values("subflow")["bytes_acked"].to_numpy(dtype=float)
    tcp = float(res.flows.loc[res.flows["flow_id"] == 1, "bytes_acked"].iloc[0])
    return sub[1] / sub.sum(), sub[0] / tcp


def test_lia_pools_resources_uncoupled_subflows_do_not(run_checked: RunFn) -> None:
    """MPTCP (LIA, RFC 6356) moves most of its traffic to the uncongested path and leaves
    the congested one mostly to the TCP flow; two uncoupled Reno subflows take a TCP's
    fair share on the congested path instead."""
    lia_share, lia_vs_tcp = pooling_shares(run_checked, "lia")
    reno_share, reno_vs_tcp = pooling_shares(run_checked, "reno")
    assert lia_share > 0.7, lia_share
    assert lia_vs_tcp < 0.6, lia_vs_tcp
    # The control: without coupling, the same thresholds are missed.
    assert reno_share < 0.7, reno_share
    assert reno_vs_tcp > 0.8, reno_vs_tcp
