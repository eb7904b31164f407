"""The HPCC paper's large-scale comparison (Li et al., SIGCOMM 2019, §5): FCT slowdown by
flow size of HPCC, DCQCN, TIMELY and DCTCP on a lossless fat tree, under the web-search
and Facebook Hadoop workloads at 30% and 50% load, with and without an incast mix, and
the time ports spend paused by PFC.

The fat tree is the HPCC authors' public simulator's ``mix/fat.txt``: 320 hosts, 16 per
ToR at 100 Gb/s; 20 ToRs, each joined by 400 Gb/s links to the 4 aggregation switches of
its pod (5 pods); each aggregation switch joined to 4 of the 16 core switches (the cores
of its plane); every link 1 µs. manypath's ``fuso_fabric`` topology has exactly this shape.
The reduced scale keeps its rates, delays, marking thresholds and 1:1 subscription at
16 hosts. Slowdowns are reported per size bucket as the authors' ``fct_analysis.py`` does:
buckets holding equal shares of the workload's flows, p50/p95/p99 in each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..results import Results
from ..runner import run
from . import citations as cite
from . import rdma
from .registry import experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NIC_GBPS = 100.0
FABRIC_GBPS = 400.0
DELAY_US = 1.0
WORKLOADS = ("websearch", "fb_hadoop")
LOADS = (0.3, 0.5)
#: §5: "60 senders and one receiver, each sending 500KB"; the incasts carry 2% of the
#: network's capacity, arriving as a Poisson process (the first author, in the artifact's
#: issue #36).
INCAST_FAN_IN = 60
INCAST_BYTES = 500_000
INCAST_LOAD = 0.02
PERCENTILES = ("p50", "p95", "p99")


@dataclass(frozen=True)
class Scale:
    """The fat tree, the arrival window and the size buckets of one scale."""

    pods: int
    spines: int
    aggs_per_pod: int
    tors_per_pod: int
    hosts_per_tor: int
    target_flows: int
    """Background flows the arrival window is sized to draw (more for the long tails)."""
    min_window_ms: float
    bucket_step: float
    """Each size bucket holds this share of the workload's flows (0.05: 20 buckets)."""
    incast_bytes: int = INCAST_BYTES
    """Bytes each incast sender sends."""

    @property
    def hosts(self) -> int:
        return self.pods * self.tors_per_pod * self.hosts_per_tor

    @property
    def topology(self) -> dict[str, Any]:
        return {"fuso_fabric": {"pods": self.pods, "spines": self.spines, "aggs_per_pod": self.aggs_per_pod,
                                "tors_per_pod": self.tors_per_pod, "hosts_per_tor": self.hosts_per_tor}}

    @property
    def max_base_rtt_us(self) -> float:
        """Propagation and 1000-byte serialisation over the longest path (host, ToR, agg,
        core and back down: 6 links each way) and its 64-byte ACK's."""
        links = 6 if self.pods > 1 else 4
        frame_bits = (rdma.PAYLOAD_BYTES + 64) * 8
        per_way = links * DELAY_US + (2 * frame_bits / NIC_GBPS + (links - 2) * frame_bits / FABRIC_GBPS) / 1e3
        return 2 * per_way

    @property
    def fan_in(self) -> int:
        return min(INCAST_FAN_IN, self.hosts - 1)

    def window_ms(self, workload: str, load: float) -> float:
        """Arrival window: long enough for ``target_flows`` flows at this load, and at least
        ``min_window_ms``."""
        per_host = rdma.arrival_rate_per_host(load, NIC_GBPS, rdma.cdf_mean(rdma.cdf_points(workload)))
        return max(self.min_window_ms, 1e3 * self.target_flows / (per_host * self.hosts))


#: The paper's fat tree (``mix/fat.txt``): 320 hosts, 56 switches.
FULL = Scale(pods=5, spines=16, aggs_per_pod=4, tors_per_pod=4, hosts_per_tor=16,
             target_flows=20_000, min_window_ms=10.0, bucket_step=0.05)
#: 16 hosts: 2 pods of 2 ToRs with 4 hosts each and one aggregation switch, 2 cores; the
#: same rates and 1:1 subscription (4 × 100 Gb/s under each 400 Gb/s ToR uplink). An
#: incast is 15-to-1 with the paper's 500 KB per sender: the burst into the receiver's ToR
#: (7.5 MB) is what can cross the 32 MiB buffer's PFC threshold (α = 1/8 of the free
#: buffer), as the paper's 60 × 500 KB do. (With 100 KB per sender, which kept the full
#: scale's incast rate, no run paused at all: 1.5 MB bursts stay under the threshold.)
#: The incasts still carry 2% of the hosts' capacity, so they come 5 × less often.
REDUCED = Scale(pods=2, spines=2, aggs_per_pod=1, tors_per_pod=2, hosts_per_tor=4,
                target_flows=600, min_window_ms=5.0, bucket_step=0.1, incast_bytes=500_000)

TIERS = {"tor_agg": FABRIC_GBPS, "agg_spine": FABRIC_GBPS}


def scenario(cc: str, workload: str, load: float, incast: bool, scale: Scale = REDUCED,
             seed: int = 1, window_ms: float | None = None) -> dict[str, Any]:
    """One run: ``cc``'s flows drawn from ``workload`` at ``load`` of every host's link
    (Poisson arrivals, random source and destination) for the arrival window, plus the
    incast mix when ``incast``; the run lasts until every flow has finished (at most ten
    windows and 50 ms more)."""
    window = scale.window_ms(workload, load) if window_ms is None else window_ms
    traffic: list[dict[str, Any]] = [{
        "pattern": "random_pairs",
        "transport": cc,
        "class": "background",
        "priority": rdma.data_priority(cc),
        "size": rdma.size_spec(workload),
        "arrival": "poisson",
        "load": load,
        "arrivals_until_ms": window,
    }]
    if incast:
        traffic += rdma.incast_entries(cc, hosts=scale.hosts, fan_in=scale.fan_in, bytes_per_sender=scale.incast_bytes,
                                       load=INCAST_LOAD, nic_gbps=NIC_GBPS, until_us=window * 1e3, seed=seed)
    doc: dict[str, Any] = {
        "name": f"hpcc-fct-{cc}-{workload}-{round(load * 100)}{'-incast' if incast else ''}",
        "seed": seed,
        "duration_ms": 10 * window + 50,
        "topology": scale.topology,
        "network": rdma.network(cc, NIC_GBPS, TIERS, DELAY_US),
        "traffic": traffic,
    }
    if cc == "dctcp":
        doc["tcp"] = rdma.tcp(NIC_GBPS * 1e9 / 8 * scale.max_base_rtt_us * 1e-6)
    else:
        doc["transports"] = rdma.transports(cc)
    return doc


def bucket_edges(workload: str, step: float) -> list[float]:
    """Size-bucket edges at every ``step`` of the workload's CDF (so each bucket holds
    about that share of its flows, as the authors' ``fct_analysis.py`` cuts its sorted
    flows into equal-count groups), without repeats."""
    points = rdma.cdf_points(workload)
    qs = np.arange(step, 1.0 - step / 2, step)
    # Flow sizes are whole bytes: so are the edges (which also drops float noise).
    edges = sorted({round(rdma.cdf_quantile(points, float(q))) for q in qs})
    return [float(e) for e in edges if e > 0]


COLUMNS = ["workload", "load", "incast", "cc", "bucket", "size_max_bytes", "flows", "completed",
           "slowdown_p50", "slowdown_p95", "slowdown_p99", "censored", "pause_ms", "incast_flows"]


def measure(flows: pd.DataFrame, queues: pd.DataFrame, edges: list[float], max_size: float) -> list[dict[str, Any]]:
    """One row per size bucket of the background flows: their count, how many finished,
    and the p50/p95/p99 slowdown of the finished ones; and on every row the run's
    unfinished background flows, PFC pause time and incast flow count."""
    background = flows[flows["class"] == "background"]
    sized = background[analysis.finite_mask(background)]
    buckets = analysis.size_bucket(sized, edges)
    slow = analysis.slowdown(sized)
    pause_ms = rdma.pause_time_s(queues) * 1e3
    censored = int(analysis.censored_mask(background).sum())
    uppers = [*edges, max_size]
    rows = []
    for label, upper in zip(buckets.cat.categories, uppers):
        in_bucket = buckets == label
        done = in_bucket & sized["completed"].astype(bool)
        rows.append({
            "bucket": str(label),
            "size_max_bytes": float(upper),
            "flows": int(in_bucket.sum()),
            "completed": int(done.sum()),
            **analysis.stat_columns(slow[done].to_numpy(dtype=float), PERCENTILES, "slowdown", unit=""),
            "censored": censored,
            "pause_ms": pause_ms,
            "incast_flows": int((flows["class"] == "incast").sum()),
        })
    return rows


def configurations() -> list[tuple[str, float, bool]]:
    """(workload, load, incast) of every panel, in the paper's order."""
    return [(w, load, inc) for w in WORKLOADS for load in LOADS for inc in (False, True)]


def run_configuration(workload: str, load: float, incast: bool, scale: Scale, seed: int,
                      ccs: tuple[str, ...] = rdma.CCS) -> pd.DataFrame:
    """The table rows of one panel: every controller on the same arrivals."""
    edges = bucket_edges(workload, scale.bucket_step)
    max_size = rdma.cdf_points(workload)[-1][0]
    rows = []
    for cc in ccs:
        res: Results = run(scenario(cc, workload, load, incast, scale, seed))
        for row in measure(res.flows, res.queues, edges, max_size):
            rows.append({"workload": workload, "load": load, "incast": incast, "cc": cc, **row})
    return pd.DataFrame(rows, columns=COLUMNS)


def pause_table(table: pd.DataFrame) -> pd.DataFrame:
    """PFC pause time (ms) per controller (columns) and configuration (rows)."""
    runs = table.drop_duplicates(["workload", "load", "incast", "cc"])
    return runs.pivot_table(index=["workload", "load", "incast"], columns="cc", values="pause_ms", sort=False)


WORKLOAD_LABELS = {"websearch": "WebSearch", "fb_hadoop": "FB_Hadoop"}


def panel_title(workload: str, load: float, incast: bool) -> str:
    return f"{WORKLOAD_LABELS.get(workload, workload)}, {load:.0%} load{' + incast' if incast else ''}"


def plot_fct(table: pd.DataFrame) -> Figure:
    """Slowdown against flow size, one row of panels per configuration and one column per
    percentile (p50, p95, p99), a line per controller: the layout of the paper's Fig. 11
    and of the authors' complete results."""
    from matplotlib.ticker import FuncFormatter

    configs = list(table[["workload", "load", "incast"]].drop_duplicates().itertuples(index=False, name=None))
    fig, axes = plots.panels(len(configs), len(PERCENTILES), size=(12.0, 2.8 * max(len(configs), 1)))
    ccs = [c for c in rdma.CCS if c in set(table["cc"])]
    for r, (workload, load, incast) in enumerate(configs):
        part = table[(table["workload"] == workload) & (table["load"] == load) & (table["incast"] == incast)]
        for c, p in enumerate(PERCENTILES):
            ax = axes[r, c]
            for i, cc in enumerate(ccs):
                g = part[part["cc"] == cc].sort_values("size_max_bytes")
                ax.plot(g["size_max_bytes"].to_numpy(dtype=float), g[f"slowdown_{p}"].to_numpy(dtype=float),
                        label=cc.upper(), **plots.series_style(i))
            plots.log_axis(ax, "x", part["size_max_bytes"], minor_labels=False)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: analysis.size_label(v)))
            plots.log_axis(ax, "y", part[f"slowdown_{p}"])
            ax.set_title(f"{panel_title(workload, load, incast)}: {p[1:]}th pct.", fontsize="small")
            ax.set_xlabel("flow size")
            ax.set_ylabel("FCT slowdown")
            ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize="small")
    fig.suptitle(f"FCT slowdown by flow size ({cite.HPCC_SHORT}, Fig. 11)")
    return fig


@experiment(
    name="hpcc-fct",
    document=f"{cite.HPCC} §5 (its large-scale simulation)",
    figure="Fig. 11: FCT slowdown by flow size (p50, p95, p99, as the authors' complete results); PFC pause time",
    compares="HPCC, DCQCN, TIMELY and DCTCP on a lossless fat tree (shared buffer, PFC, RED-style ECN); "
    "web search and FB Hadoop at 30% and 50% load, with and without 60-to-1 incasts; slowdown "
    "percentiles per size bucket and PFC pause time",
    reduced_time="~35 s (32 runs of 16 hosts)",
    full_time="~25 min (32 runs of 320 hosts at 100/400 Gb/s, 20 s to 2 min each)",
    plot=plot_fct,
)
def run_hpcc_fct(full: bool, seed: int) -> pd.DataFrame:
    scale = FULL if full else REDUCED
    parts = [run_configuration(w, load, inc, scale, seed) for w, load, inc in configurations()]
    return pd.concat(parts, ignore_index=True)


def short_flow_tail(table: pd.DataFrame, below_bytes: float = 100e3, p: str = "p95") -> pd.Series:
    """Per controller, the flow-weighted mean of the ``p`` slowdown over the buckets of
    flows below ``below_bytes``: one number for "short flows at the tail"."""
    short = table[table["size_max_bytes"] <= below_bytes].dropna(subset=[f"slowdown_{p}"])
    if short.empty:
        return pd.Series(dtype=float)
    weighted = short.assign(w=short["completed"] * short[f"slowdown_{p}"])
    sums = weighted.groupby("cc")[["w", "completed"]].sum()
    return (sums["w"] / sums["completed"].where(sums["completed"] > 0)).dropna()
