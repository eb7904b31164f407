"""MMPTCP (Kheirkhah, Wakeman, Parisis; document 002): on a 4:1 oversubscribed fat tree,
a third of the hosts send long-lived multipath flows (8 subflows) in a permutation and
the rest send 70 KB flows with Poisson arrivals (250 per second in all). Compared: every
flow MPTCP (LIA), or every flow MMPTCP (packet scatter for the first 100 KB, then LIA
subflows). Settings of the authors' ns-3 scripts: 100 Mbps links, 20 µs per link,
100-packet drop-tail queues, 1400-byte segments, minimum RTO 200 ms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..runner import run as run_scenario
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def scenario(transport: str, k: int, duration_ms: float, seed: int) -> dict[str, Any]:
    hosts = k * (k // 2) * (k // 2) * 4
    long_hosts = [h for h in range(hosts) if h % 3 == 0]
    short_hosts = [h for h in range(hosts) if h % 3 != 0]
    return {
        "name": f"mmptcp-fattree-{transport}",
        "seed": seed,
        "duration_ms": duration_ms,
        "stop_when_done": False,
        "topology": {"fat_tree": {"k": k, "oversubscription": 4}},
        "network": {"link": {"rate_gbps": 0.1, "delay_us": 20}, "queue": {"limit_packets": 100}},
        "tcp": {"mss": 1400, "rto_min_us": 200_000},
        "transports": {"mp": {"cc": "lia" if transport == "mptcp" else "mmptcp", "subflows": 8}},
        "traffic": [
            {"pattern": "permutation", "hosts": long_hosts, "transport": "mp", "class": "long",
             "size": "long_lived"},
            {"pattern": "random_pairs", "hosts": short_hosts, "transport": "mp", "class": "short",
             "size": {"fixed": 70_000}, "arrival": "poisson", "rate_per_s": 250,
             "until_us": duration_ms * 1000 * 0.8},
        ],
    }


def measure(res: Any, transport: str) -> dict[str, Any]:
    f = res.flows
    short = f[f["class"] == "short"]
    fct_ms = analysis.completed_fct_ms(short)
    long = f[f["class"] == "long"]
    return {
        "transport": transport,
        "short_flows": int(len(short)),
        "short_completed": int(fct_ms.size),
        **analysis.stat_columns(fct_ms, ("mean", "std", "p99"), "short_fct"),
        "short_timeouts": int(short["timeouts"].sum()),
        "long_goodput_mbps": float(long["goodput_bps"].mean()) / 1e6,
    }


def plot(table: pd.DataFrame) -> Figure:
    series = pd.Series(table["short_fct_mean_ms"].to_numpy(), index=table["transport"])
    fig = plots.bars(series, "short-flow mean FCT (ms)", title=f"MMPTCP vs MPTCP, 4:1 fat tree ({cite.MMPTCP_SHORT})")
    ax = fig.axes[0]
    ax.errorbar(np.arange(len(table)), table["short_fct_mean_ms"], yerr=table["short_fct_std_ms"],
                fmt="none", ecolor="black", capsize=4)
    return fig


@experiment(
    name="mmptcp-fattree",
    document=f"{cite.MMPTCP}, evaluation",
    figure="short-flow FCT mean and standard deviation, MPTCP vs MMPTCP",
    compares="MPTCP (8 LIA subflows) vs MMPTCP (scatter for 100 KB, then 8 subflows) on a "
    "4:1 fat tree (k = 4, 64 hosts reduced; k = 8, 512 full): a third long flows in a "
    "permutation, the rest 70 KB Poisson flows at 250/s",
    reduced_time="~10 s",
    full_time="~5 min",
    plot=plot,
)
def run(full: bool, seed: int) -> pd.DataFrame:
    k = 8 if full else 4
    duration = 10_000.0 if full else 2_000.0
    return pd.DataFrame([measure(run_scenario(scenario(t, k, duration, seed)), t)
                         for t in ("mptcp", "mmptcp")])
