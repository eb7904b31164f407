"""MPTCP in data centers (document 003, §3.1) at flow level: permutation throughput on
FatTree, VL2 and BCube against the number of subflows (Fig. 1), the fewest subflows
that reach 90% of the optimum as the fabric grows (Fig. 2), and throughput and fairness
from light load to overload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import pandas as pd

from .. import analysis, plots
from ..runner import run as run_scenario
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MSS, HEADER = 1460, 40
#: A host's best goodput in a permutation, as a fraction of its NIC's rate: its NIC
#: carries its data (headers included) and the ACKs of the flow it receives.
HOST_OPTIMUM = MSS / (MSS + HEADER) / (1 + HEADER / (MSS + HEADER))
TARGET = 0.9


def topology(kind: str, size: int) -> dict[str, Any]:
    """The document's fabrics: FatTree of 1 Gb/s links (k = size), VL2 with 1 Gb/s hosts,
    20 per ToR, and 10 Gb/s above (size aggregation and size intermediate switches),
    BCube(size, 2) of 1 Gb/s links."""
    if kind == "fattree":
        return {"topology": {"fat_tree": {"k": size}}, "network": _rates(1, {})}
    if kind == "vl2":
        return {
            "topology": {"vl2": {"aggregation": size, "intermediate": size, "hosts_per_tor": 20}},
            "network": _rates(1, {"tor_agg": {"rate_gbps": 10}, "agg_int": {"rate_gbps": 10}}),
        }
    if kind == "bcube":
        return {"topology": {"bcube": {"n": size, "k": 2}}, "network": _rates(1, {})}
    raise ValueError(f"unknown topology {kind!r}")


def hosts(kind: str, size: int) -> int:
    """Servers of ``topology(kind, size)``."""
    return {"fattree": size**3 // 4, "vl2": size // 2 * size * 20, "bcube": size**3}[kind]


def _rates(gbps: float, tiers: dict[str, Any]) -> dict[str, Any]:
    return {"link": {"rate_gbps": gbps, "delay_us": 1}, "queue": {"limit_packets": 100}, "tiers": tiers}


def scenario(
    kind: str,
    size: int,
    subflows: Optional[int],
    seed: int,
    *,
    load: Optional[float] = None,
    n_hosts: int = 0,
    model: str = "tcp-response",
) -> dict[str, Any]:
    """A long-lived permutation (or, with ``load``, load·hosts random pairs) at flow level;
    ``subflows`` None is single-path TCP, otherwise MPTCP (LIA) with that many subflows."""
    cc = {"cc": "reno", "subflows": 1} if subflows is None else {"cc": "lia", "subflows": subflows}
    traffic: dict[str, Any] = {"pattern": "permutation", "transport": "t", "size": "long_lived"}
    if load is not None:
        traffic = {**traffic, "pattern": "random_pairs", "flows": max(1, round(load * n_hosts))}
    return {
        "name": f"{kind}{size}-{'tcp' if subflows is None else f'mptcp{subflows}'}",
        "seed": seed,
        "duration_ms": 100,
        "level": "flow",
        "flow_model": {"model": model},
        **topology(kind, size),
        "transports": {"t": cc},
        "traffic": [traffic],
    }


def throughput(
    kind: str, size: int, subflows: Optional[int], seed: int, model: str = "tcp-response"
) -> tuple[float, int]:
    """Aggregate permutation goodput as a fraction of the optimum, and the host count."""
    c = run_scenario(scenario(kind, size, subflows, seed, model=model)).counters
    return float(c["goodput_fraction"]) / HOST_OPTIMUM, int(c["n_hosts"])


PERMUTATION_REDUCED = {"fattree": 8, "vl2": 4, "bcube": 5}
PERMUTATION_FULL = {"fattree": 16, "vl2": 10, "bcube": 10}


def plot_permutation(table: pd.DataFrame) -> Figure:
    mp = table[table["scheme"] == "mptcp"]
    fig = plots.line(mp, "subflows", "throughput", by="topology",
                     xlabel="MPTCP subflows per connection", ylabel="throughput (fraction of optimal)",
                     title=f"Permutation at flow level: MPTCP vs single-path TCP ({cite.MPTCP_DC_SHORT}, Fig. 1)")
    ax = fig.axes[0]
    for _, row in table[table["scheme"] == "tcp"].iterrows():
        plots.reference_line(ax, float(row["throughput"]), f"TCP {row['topology']}", 1.0)
    ax.set_ylim(0, 1.05)
    return fig


@experiment(
    name="mptcp-dc-permutation",
    document=f"{cite.MPTCP_DC} §3.1",
    figure="Fig. 1: permutation throughput vs number of subflows, FatTree, VL2, BCube",
    compares="single-path TCP on a random path vs MPTCP (LIA) with 1-8 subflows, long-lived "
    "random permutation, flow level (TCP model, and max-min on the same paths as a "
    "reference); FatTree k=8, VL2 160 hosts, BCube(5,2) reduced; k=16, 1000-host VL2, "
    "BCube(10,2) full",
    reduced_time="~3 s",
    full_time="~40 s",
    plot=plot_permutation,
)
def run_permutation(full: bool, seed: int) -> pd.DataFrame:
    sizes = PERMUTATION_FULL if full else PERMUTATION_REDUCED
    counts = range(1, 9) if full else (1, 2, 4, 8)
    rows = []
    for kind, size in sizes.items():
        for scheme, n in [("tcp", None), *(("mptcp", n) for n in counts)]:
            frac, hosts = throughput(kind, size, n, seed)
            rows.append({
                "topology": kind,
                "hosts": hosts,
                "scheme": scheme,
                "subflows": n or 1,
                "throughput": frac,
                "max_min": throughput(kind, size, n, seed, model="max-min")[0],
            })
    return pd.DataFrame(rows)


SCALING_REDUCED = {"fattree": (4, 8, 12), "vl2": (2, 4, 6)}
SCALING_FULL = {"fattree": (8, 16, 24, 32), "vl2": (4, 8, 16, 24, 32)}


def fewest_subflows(kind: str, size: int, seed: int, most: int = 8) -> dict[str, Any]:
    """The smallest number of MPTCP subflows reaching TARGET of the optimum (NaN if even
    ``most`` do not), with the throughput it reaches."""
    frac = float("nan")
    for n in range(1, most + 1):
        frac, servers = throughput(kind, size, n, seed)
        if frac >= TARGET:
            return {"topology": kind, "hosts": servers, "subflows_for_90": n, "throughput": frac}
    return {"topology": kind, "hosts": hosts(kind, size), "subflows_for_90": float("nan"), "throughput": frac}


def plot_scaling(table: pd.DataFrame) -> Figure:
    fig = plots.line(table, "hosts", "subflows_for_90", by="topology", xlabel="servers",
                     ylabel="fewest subflows for 90% throughput",
                     title=f"Subflows needed as the fabric grows ({cite.MPTCP_DC_SHORT}, Fig. 2)")
    fig.axes[0].set_ylim(0, 9)
    return fig


@experiment(
    name="mptcp-dc-scaling",
    document=f"{cite.MPTCP_DC} §3.1",
    figure="Fig. 2: fewest subflows reaching 90% of the optimal permutation throughput vs size",
    compares="MPTCP (LIA) with 1, 2, ... subflows until 90% of the optimum, long-lived random "
    "permutation, flow level; FatTree k=4-12 and VL2 40-360 hosts reduced, FatTree up to "
    "k=32 (8,192 servers) and VL2 up to 10,240 servers full",
    reduced_time="~10 s",
    full_time="~7 min",
    plot=plot_scaling,
)
def run_scaling(full: bool, seed: int) -> pd.DataFrame:
    sizes = SCALING_FULL if full else SCALING_REDUCED
    return pd.DataFrame([fewest_subflows(kind, size, seed) for kind, ks in sizes.items() for size in ks])


LOADS_REDUCED = (0.1, 0.5, 1.0, 2.0)
LOADS_FULL = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
#: MPTCP's subflows in the load experiment: 8, and one per interface on BCube (k + 1 = 3).
LOAD_SUBFLOWS = {"fattree": 8, "vl2": 8, "bcube": 3}


def load_row(kind: str, size: int, load: float, subflows: Optional[int], seed: int) -> dict[str, Any]:
    res = run_scenario(scenario(kind, size, subflows, seed, load=load, n_hosts=hosts(kind, size)))
    host_rate = float(res.counters["host_rate_bps"])
    rates = res.flows["goodput_bps"].to_numpy(dtype=float)
    return {
        "topology": kind,
        "load": load,
        "scheme": "tcp" if subflows is None else f"mptcp{subflows}",
        "flows": len(rates),
        "throughput": float(res.counters["goodput_fraction"]) / HOST_OPTIMUM,
        "jain": analysis.jain_index(rates),
        "p10_flow": analysis.percentile(rates, 10) / host_rate,
        "mean_flow": float(rates.mean()) / host_rate,
    }


def plot_load(table: pd.DataFrame) -> Figure:
    return plots.line(table, "load", "throughput", by=["topology", "scheme"], logx=True,
                      xlabel="connections per host", ylabel="throughput (fraction of optimal)",
                      title="From light load to overload (flow level)")


@experiment(
    name="mptcp-dc-load",
    document=f"{cite.MPTCP_DC} §3.1",
    figure="throughput and fairness from light load to overload",
    compares="single-path TCP vs MPTCP (8 subflows; 3 on BCube, one per interface), load x "
    "hosts long-lived connections between random hosts, flow level; throughput, Jain's "
    "index and the 10th-percentile flow rate; FatTree k=8, VL2 160 hosts, BCube(5,2) "
    "reduced, the Fig. 1 sizes full",
    reduced_time="~15 s",
    full_time="~5 min",
    plot=plot_load,
)
def run_load(full: bool, seed: int) -> pd.DataFrame:
    sizes = PERMUTATION_FULL if full else PERMUTATION_REDUCED
    loads = LOADS_FULL if full else LOADS_REDUCED
    rows = [
        load_row(kind, size, load, scheme, seed)
        for kind, size in sizes.items()
        for load in loads
        for scheme in (None, LOAD_SUBFLOWS[kind])
    ]
    return pd.DataFrame(rows)
