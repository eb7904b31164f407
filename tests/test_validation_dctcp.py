"""Validation of the DCTCP model on one shared bottleneck.

DCTCP's claims (Alizadeh et al., SIGCOMM 2010) with N long flows, step marking at K and
a buffer much larger than K: full link utilisation, a fair share per flow, no loss, and a
queue that hovers around K (each flow adds about one packet per RTT before it sees the
marks, so the queue overshoots K by roughly N to 2N packets). The same setup with
NewReno and no ECN must instead fill the buffer and drop, which shows the ECN path is
what keeps the queue short; and NewReno that halves on ECN echoes must leave the link
idle part of the time, because K is below the BDP, which shows DCTCP's cut in
proportion to the marked fraction is what keeps the link full.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import manypath
from manypath.analysis import jain_index

# The `run_checked` fixture (conftest.py): manypath.run plus a packet-conservation check.
RunFn = Callable[..., manypath.Results]

N_FLOWS = 8
K = 20
BUFFER = 200
BOTTLENECK_GBPS = 10
PAYLOAD_RATE = BOTTLENECK_GBPS * 1e9 * 1460 / 1500
WARMUP_MS = 10
MEASURED_MS = 40


def shared_bottleneck(transport: str, host_gbps: int) -> dict[str, Any]:
    """N long flows, left host i to right host N+i, all through the 10 Gbps bottleneck.

    10 µs per link gives a ~64 µs RTT, a BDP of ~53 packets: K = 20 is above the
    C·RTT/7 ≈ 8 packets DCTCP needs for full throughput, but below the BDP that a
    halving controller needs. The bottleneck queue is the only one with ECN; the left
    switch's port toward the right switch is where the flows meet.
    """
    return {
        "name": f"bottleneck-{transport}",
        "duration_ms": WARMUP_MS + MEASURED_MS,
        "warmup_ms": WARMUP_MS,
        "topology": {"dumbbell": {"pairs": N_FLOWS}},
        "network": {
            "link": {"rate_gbps": 10, "delay_us": 10},
            "tiers": {
                "host": {"rate_gbps": host_gbps},
                "bottleneck": {
                    "rate_gbps": BOTTLENECK_GBPS,
                    "queue": {"limit_packets": BUFFER, "ecn_k_packets": K},
                },
            },
        },
        # NewReno that sends ECN-capable packets and halves once per window of echoes.
        "transports": {"reno_ecn": {"cc": "reno", "ecn": True}},
        "output": {"queue_histogram": True},
        "traffic": [
            {
                "pattern": "pair",
                "src": i,
                "dst": N_FLOWS + i,
                "transport": transport,
                "class": "long",
                "size": "long_lived",
            }
            for i in range(N_FLOWS)
        ],
    }


def bottleneck(res: manypath.Results) -> pd.Series:
    """The queue of the bottleneck in the data direction (left switch toward right)."""
    q = res.queues
    rows = q[(q["tier"] == "bottleneck") & (q["node"] == "left")]
    assert len(rows) == 1, q
    return rows.iloc[0]


# Host links as fast as the bottleneck, and four times faster (burstier arrivals).
HOST_RATES = [pytest.param(10, id="hosts-10g"), pytest.param(40, id="hosts-40g")]


@pytest.mark.parametrize("host_gbps", HOST_RATES)
def test_dctcp_keeps_the_link_full_fair_and_the_queue_near_k(
    run_checked: RunFn, host_gbps: int
) -> None:
    res = run_checked(shared_bottleneck("dctcp", host_gbps))
    port = bottleneck(res)
    flows = res.flows
    assert len(flows) == N_FLOWS

    # Utilisation is over the whole run, start-up included.
    assert port["utilization"] >= 0.95, f"bottleneck utilization {port['utilization']:.4f}"
    total = float(flows["goodput_bps"].sum())
    assert 0.95 * PAYLOAD_RATE <= total <= 1.005 * PAYLOAD_RATE, (
        f"aggregate goodput after warm-up {total / 1e9:.3f} Gbps"
    )
    jain = jain_index(flows["goodput_bps"])
    shares = (flows["goodput_bps"] / 1e9).round(3).tolist()
    assert jain >= 0.95, f"Jain's index {jain:.4f} of {shares} Gbps"

    assert int(port["drops"]) == 0, f"{port['drops']} drops at the bottleneck"
    assert int(flows["timeouts"].sum()) == 0
    assert int(port["ecn_marks"]) > 0
    assert port["p95_packets"] < K + 2 * N_FLOWS, f"queue p95 {port['p95_packets']} packets"
    # ... and the queue is really in use, not empty because the link is underfed.
    assert port["mean_packets"] > K / 4, f"mean queue {port['mean_packets']:.2f} packets"


@pytest.mark.parametrize("host_gbps", HOST_RATES)
def test_reno_without_ecn_fills_the_buffer(run_checked: RunFn, host_gbps: int) -> None:
    res = run_checked(shared_bottleneck("tcp", host_gbps))
    port = bottleneck(res)
    # Reno's packets are not ECN-capable, so the K threshold never marks them.
    assert int(port["ecn_marks"]) == 0
    assert int(port["max_packets"]) >= 0.95 * BUFFER, f"max queue {port['max_packets']} packets"
    assert int(port["drops"]) > 0
    # Loss-driven control lives near the top of the buffer, far above DCTCP's K.
    assert port["p50_packets"] > K + 2 * N_FLOWS, f"queue p50 {port['p50_packets']} packets"
    # The large buffer still keeps the link busy.
    assert port["utilization"] >= 0.95


@pytest.mark.parametrize("host_gbps", HOST_RATES)
def test_reno_halving_on_ecn_leaves_the_link_idle(run_checked: RunFn, host_gbps: int) -> None:
    res = run_checked(shared_bottleneck("reno_ecn", host_gbps))
    port = bottleneck(res)
    assert int(port["ecn_marks"]) > 0
    assert int(port["drops"]) == 0
    # The flows' total window peaks near BDP + K ≈ 73 packets; halving it leaves ~36,
    # under the 53-packet BDP, so the link idles after each cut. DCTCP meets this bound.
    assert port["utilization"] < 0.95, f"bottleneck utilization {port['utilization']:.4f}"
