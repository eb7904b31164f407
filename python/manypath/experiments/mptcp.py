"""MPTCP in data centers (Raiciu et al.; document 003 §3.1), at packet level: total
throughput of a random permutation of long-lived flows on a fat tree, single-path TCP on
ECMP against MPTCP (LIA) with 1 to 8 subflows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import plots
from ..runner import run as run_scenario
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SUBFLOWS = (1, 2, 3, 4, 5, 6, 7, 8)


def scenario(k: int, cc: str, subflows: int, seed: int, duration_ms: float) -> dict[str, Any]:
    return {
        "name": f"mptcp-permutation-k{k}-{cc}-{subflows}",
        "seed": seed,
        "duration_ms": duration_ms,
        "warmup_ms": duration_ms / 5,
        "topology": {"fat_tree": {"k": k}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1}, "queue": {"limit_packets": 100}},
        "tcp": {"rto_min_us": 1000},
        "transports": {"mp": {"cc": cc, "subflows": subflows}},
        "traffic": [{"pattern": "permutation", "transport": "mp", "size": "long_lived"}],
    }


def plot(table: pd.DataFrame) -> Figure:
    fig = plots.line(table[table["scheme"] == "mptcp"], "subflows", "throughput_fraction",
                     xlabel="subflows per connection",
                     ylabel="throughput (fraction of optimal)",
                     title=f"Fat-tree permutation: MPTCP vs single-path ECMP ({cite.MPTCP_DC_SHORT}, Fig. 1)")
    ax = fig.axes[0]
    single = float(table.loc[table["scheme"] == "tcp", "throughput_fraction"].iloc[0])
    plots.reference_line(ax, single, "single-path TCP, ECMP", 1.0)
    ax.set_ylim(0, 1.05)
    return fig


@experiment(
    name="mptcp-permutation",
    document=f"{cite.MPTCP_DC} §3.1",
    figure="Fig. 1: permutation throughput vs number of subflows (packet level)",
    compares="single-path TCP on ECMP vs MPTCP (LIA) with 1-8 subflows, random permutation "
    "of long-lived flows on a fat tree (k = 4 reduced, k = 8 full); mean over 3 seeds",
    reduced_time="~5 s",
    full_time="~3 min",
    plot=plot,
)
def run(full: bool, seed: int) -> pd.DataFrame:
    k = 8 if full else 4
    duration = 25.0
    subflows = SUBFLOWS if full else (1, 2, 4, 8)
    seeds = [seed, seed + 1, seed + 2]

    def mean_fraction(cc: str, n: int) -> float:
        return sum(run_scenario(scenario(k, cc, n, s, duration)).counters["goodput_fraction"]
                   for s in seeds) / len(seeds)

    rows = [{"scheme": "tcp", "subflows": 1, "throughput_fraction": mean_fraction("reno", 1)}]
    rows += [{"scheme": "mptcp", "subflows": n, "throughput_fraction": mean_fraction("lia", n)}
             for n in subflows]
    return pd.DataFrame(rows)
