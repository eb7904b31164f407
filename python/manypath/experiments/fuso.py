"""Experiments of the FUSO document (001). Each experiment is a self-contained set of
functions registered below; they share only this module's constants.

``fuso-timeout-probability`` (§2.2, Fig. 2): how likely a TCP flow is to suffer a
retransmission timeout under one-way random loss, simulated and against the document's
analytic lower bound max(p_tail, p_win, p_retx)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from .registry import experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: §5.1: the baseline TCP's settings. The MSS is Linux's over 1500-byte Ethernet.
MSS = 1460
INIT_CWND = 16
RTO_MIN_US = 5_000

#: Fig. 2's loss rates and flow sizes.
TIMEOUT_LOSS_RATES = [0.00125, 0.0025, 0.005, 0.01, 0.02, 0.04]
TIMEOUT_SIZES = [10_000, 100_000, 1_000_000]


def packets(size: int, mss: int = MSS) -> int:
    return math.ceil(size / mss)


def timeout_lower_bound(p: float, size: int, init_cwnd: int = INIT_CWND) -> dict[str, float]:
    """§2.2's lower bound on a flow's timeout probability with early retransmit (k = 1):
    a lost last packet (p_tail = p), a whole initial window lost (p_win = p^w, w the
    initial window capped by the flow's packets) or a lost retransmission
    (p_retx = 1 − (1 − p²)^x over the flow's x packets)."""
    x = packets(size)
    w = min(init_cwnd, x)
    p_tail = p
    p_win = p**w
    p_retx = 1.0 - (1.0 - p * p) ** x
    return {"p_tail": p_tail, "p_win": p_win, "p_retx": p_retx,
            "bound": max(p_tail, p_win, p_retx)}


def timeout_scenario(p: float, size: int, flows: int, seed: int = 1) -> dict[str, Any]:
    """One sender and one receiver through a switch (the FUSO testbed's 1 Gbps links,
    ≈ 280 µs base RTT), Bernoulli loss `p` on the data direction only, and `flows` flows of
    `size` bytes one after another (closed loop, so none compete). TCP as in §5.1: SACK,
    limited transmit, early retransmit, minimum RTO 5 ms, initial window 16. The FIN rides
    on the last data segment, so no separate FIN packet probes for a lost tail."""
    return {
        "name": f"fuso-timeout-{size}B-p{p:g}",
        "seed": seed,
        "duration_ms": 1e9,
        "topology": {"star": {"senders": 1}},
        "network": {
            "link": {"rate_gbps": 1, "delay_us": 70},
            "queue": {"limit_bytes": 4 << 20},
        },
        "tcp": {
            "rto_min_us": RTO_MIN_US,
            "init_cwnd_packets": INIT_CWND,
            "mss": MSS,
            "sack": True,
            "limited_transmit": True,
            "early_retransmit": True,
            "fin_with_data": True,
        },
        "faults": [{"kind": "loss", "from": "host1", "to": "switch", "probability": p}],
        "traffic": [{
            "pattern": "pair", "src": 1, "dst": 0, "transport": "tcp",
            "size": {"fixed": size}, "repeat": flows, "closed_loop": True,
        }],
    }


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n at z standard deviations."""
    if n == 0:
        return (0.0, 1.0)
    ph = k / n
    d = 1 + z * z / n
    c = (ph + z * z / (2 * n)) / d
    h = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def timeout_fraction(p: float, size: int, flows: int, seed: int = 1, z: float = 3.5) -> dict[str, Any]:
    """Runs `flows` flows and counts those with a data timeout (an RTO after the
    handshake: the analysis is about the data; a lost SYN's timeout is counted apart)."""
    from .. import run

    res = run(timeout_scenario(p, size, flows, seed))
    f = res.flows
    done = f[f["finish_s"].notna()] if "finish_s" in f.columns else f
    data_to = (done["timeouts"] - done["syn_timeouts"]) > 0
    k, n = int(data_to.sum()), len(done)
    lo, hi = wilson(k, n, z)
    return {
        "size_bytes": size, "packets": packets(size), "loss": p, "flows": n,
        "timeout_flows": k, "timeout_fraction": k / n if n else float("nan"),
        "ci_low": lo, "ci_high": hi, "z": z,
        "syn_timeout_flows": int((done["syn_timeouts"] > 0).sum()),
        "fast_retx": int(done["fast_retx"].sum()),
        **timeout_lower_bound(p, size),
    }


def _timeout_flows(size: int, full: bool) -> int:
    """Flows per point: enough that a 1% fraction is measured within about ±25%
    (reduced) or ±8% (full) at 3.5 standard deviations."""
    if full:
        return {10_000: 200_000, 100_000: 100_000}.get(size, 10_000)
    return {10_000: 20_000, 100_000: 20_000}.get(size, 2_000)


def plot_timeout_probability(table: pd.DataFrame) -> Figure:
    """Fig. 2: timeout probability against loss rate, log–log; lines the analytic lower
    bound per flow size, markers the simulation (with its confidence interval)."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    ps = np.geomspace(table["loss"].min(), table["loss"].max(), 50)
    for i, (size, g) in enumerate(table.groupby("size_bytes")):
        color = f"C{i}"
        label = f"{size // 1000} KB" if size < 1_000_000 else f"{size // 1_000_000} MB"
        ax.plot(ps, [timeout_lower_bound(p, int(size))["bound"] for p in ps], color=color,
                label=f"{label} (analysis)")
        g = g.sort_values("loss")
        y = g["timeout_fraction"].clip(lower=1e-5)
        err = np.vstack([y - g["ci_low"].clip(lower=1e-5).clip(upper=y),
                         g["ci_high"] - y])
        ax.errorbar(g["loss"], y, yerr=err, fmt="o--", color=color, capsize=2,
                    label=f"{label} (simulation)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(TIMEOUT_LOSS_RATES), [f"{100 * p:g}%" for p in TIMEOUT_LOSS_RATES])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("random loss rate")
    ax.set_ylabel("timeout probability")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("TCP timeout probability under random loss (FUSO Fig. 2)")
    fig.tight_layout()
    return fig


@experiment(
    name="fuso-timeout-probability",
    document="FUSO (001) §2.2",
    figure="Fig. 2: timeout probability of a TCP flow vs random loss rate, per flow size",
    compares="TCP with SACK, limited transmit and early retransmit (min RTO 5 ms, IW 16) "
    "under one-way Bernoulli loss 0.125–4%: fraction of 10 KB / 100 KB (/ 1 MB full) flows "
    "with a timeout, against the lower bound max(p_tail, p_win, p_retx)",
    reduced_time="~30 s",
    full_time="~10 min",
    plot=plot_timeout_probability,
)
def run_timeout_probability(full: bool, seed: int) -> pd.DataFrame:
    sizes = TIMEOUT_SIZES if full else TIMEOUT_SIZES[:2]
    rows = [timeout_fraction(p, size, _timeout_flows(size, full), seed)
            for size in sizes for p in TIMEOUT_LOSS_RATES]
    return pd.DataFrame(rows)
