"""The Homa paper's simulations (Montazeri et al., SIGCOMM 2018, §5.2): slowdown by
message size (median and 99th percentile) of Homa, pFabric, NDP and DCTCP for the
workloads W1–W5 at 80% load.

Topology (paper §5.2 and HomaSimulation's configuration): a two-level leaf-spine of 144
hosts, 9 racks of 16 with 10 Gb/s host links, each top-of-rack switch joined to 4 spine
switches by 40 Gb/s links. HomaSimulation has no propagation delay and a fixed 0.25 µs
per switch; here each link has 0.25 µs, which gives a cross-rack path the same four
0.25 µs steps. Homa runs with its paper's settings: 8 priority levels on every switch
queue, RTTbytes 9,700 bytes (HomaSimulation's value for 10 Gb/s, which includes host
software delays this simulator does not model), unscheduled levels and cutoffs from the
workload, overcommitment equal to the number of scheduled levels. Messages arrive as
Poisson processes at 80% of each host's link rate, from random senders to random
receivers, their sizes drawn from the workload as a step function (as HomaSimulation
draws them). pFabric runs as the Homa authors ran its ns-2 simulator for the comparison
(HomaSimulation's pFabric scripts): queues of 13 packets of 1,500 bytes that schedule and
drop by remaining bytes, on switch ports and host NICs, and the transport's defaults
(first and largest window 12 packets, RTO 24 µs, probes after 5 timeouts), and
connections kept open and reused as their ns-2 traffic generator keeps them (a message
takes an idle connection of its host pair, or opens one). The reduced
scale keeps the rates, delays and 1:1 subscription at 12 hosts.

Slowdown is a message's completion time over its ideal on an idle network (its path's
serialisations and propagation), per size bucket: buckets hold equal shares of the
workload's messages (10% reduced, 5% full), as the paper's x axes are spaced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..runner import run
from . import citations as cite
from . import rdma
from .registry import experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The paper's W1–W5 (Fig. 1), the shipped files.
WORKLOADS = {
    "W1": "homa_w1_fb_keyvalue",
    "W2": "homa_w2_google_search",
    "W3": "google_rpc",
    "W4": "homa_w4_fb_hadoop",
    "W5": "homa_w5_websearch",
}
LOAD = 0.8
HOST_GBPS = 10.0
FABRIC_GBPS = 40.0
#: HomaSimulation's `switchFixDelay` (0.25 µs), as each link's delay.
DELAY_US = 0.25
#: HomaSimulation: `maxOutstandingRecvBytes = 9700B`, "the RTT in bytes" at 10 Gb/s.
RTT_BYTES = 9_700
#: The paper's switches: 8 priority levels.
PRIORITY_LEVELS = 8
#: Every switch port's buffer, for every transport (large: the paper's Homa simulations
#: assume buffers that do not overflow).
QUEUE_PACKETS = 2_000
#: DCTCP's marking threshold: 65 packets, the DCTCP paper's value for 10 Gb/s.
DCTCP_K_PACKETS = 65
#: NDP's payload per packet: 1,500 bytes on the wire with its 64-byte header, as the others
#: send (NDP's own default is 9,000-byte packets).
NDP_PAYLOAD_BYTES = 1_436
#: pFabric's buffer in the Homa authors' ns-2 runs: 13 packets of 1,500 bytes, where an
#: arrival that would reach the limit overflows (ns-2's DropTail): 19,499 bytes here.
PFABRIC_QUEUE_BYTES = 13 * 1_500 - 1
PERCENTILES = ("p50", "p99")


@dataclass(frozen=True)
class Scale:
    leaves: int
    spines: int
    hosts_per_leaf: int
    target_messages: int
    """Messages the arrival window is sized to draw, per workload."""
    bucket_step: float

    @property
    def hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf

    @property
    def topology(self) -> dict[str, Any]:
        return {"leaf_spine": {"leaves": self.leaves, "spines": self.spines, "hosts_per_leaf": self.hosts_per_leaf}}


#: The paper's 144 hosts: 9 racks of 16, 4 spines.
FULL = Scale(leaves=9, spines=4, hosts_per_leaf=16, target_messages=30_000, bucket_step=0.05)
#: 12 hosts: 3 racks of 4, 1 spine (4 × 10 Gb/s under one 40 Gb/s uplink, 1:1).
REDUCED = Scale(leaves=3, spines=1, hosts_per_leaf=4, target_messages=2_000, bucket_step=0.1)


# --- Workloads -----------------------------------------------------------------------------


def cdf_points(workload: str) -> list[tuple[float, float]]:
    """The (size_bytes, cdf) points of workload ``W1``–``W5``."""
    return rdma.cdf_points(WORKLOADS[workload])


def step_mean(points: list[tuple[float, float]]) -> float:
    """The mean of the step-function CDF (each size with its step)."""
    total, before = 0.0, 0.0
    for x, f in points:
        total += (f - before) * x
        before = f
    return total


def step_quantile(points: list[tuple[float, float]], q: float) -> float:
    """The first listed size whose cdf reaches ``q``."""
    for x, f in points:
        if f >= q:
            return x
    return points[-1][0]


def bucket_edges(workload: str, step: float) -> list[float]:
    """Size-bucket edges at every ``step`` of the workload's messages, without repeats."""
    points = cdf_points(workload)
    qs = np.arange(step, 1.0 - step / 2, step)
    return [float(e) for e in sorted({step_quantile(points, float(q)) for q in qs})]


def window_ms(workload: str, scale: Scale) -> float:
    """The arrival window that draws ``target_messages`` messages at the load."""
    per_host = LOAD * HOST_GBPS * 1e9 / (8 * step_mean(cdf_points(workload)))
    return 1e3 * scale.target_messages / (per_host * scale.hosts)


# --- Transports ----------------------------------------------------------------------------


def homa_settings() -> dict[str, Any]:
    """Homa on 8-level switches."""
    return {
        "transports": {"homa": {"cc": "homa", "homa_rtt_bytes": RTT_BYTES, "homa_priority_levels": PRIORITY_LEVELS}},
        "queue": {"limit_packets": QUEUE_PACKETS, "priority_levels": PRIORITY_LEVELS},
    }


def dctcp_settings() -> dict[str, Any]:
    """The built-in DCTCP on FIFO switches marking at K."""
    return {"transports": {}, "queue": {"limit_packets": QUEUE_PACKETS, "ecn_k_packets": DCTCP_K_PACKETS}}


def pfabric_settings() -> dict[str, Any]:
    """pFabric with its defaults, on pFabric queues of 13 packets at switch ports and on
    the host NICs' queues (which hold what the senders' windows release, in priority
    order, and never drop: hosts wait for room); each message on an idle connection of its
    host pair's pool, or on one it opens (the Homa authors' ns-2 generator)."""
    return {
        "transports": {"pfabric": {"cc": "pfabric"}},
        "queue": {"limit_bytes": PFABRIC_QUEUE_BYTES, "pfabric": True},
        "host_queue": {"pfabric": True},
        "traffic": {"connection_pool": True},
    }


def ndp_settings() -> dict[str, Any]:
    """NDP on trimming switches (8-packet threshold, the paper's), with packets of the same
    1,500 bytes on the wire as the others and host NICs that send control packets first
    (as htsim's NDP hosts do)."""
    return {
        "transports": {"ndp": {"cc": "ndp", "payload_bytes": NDP_PAYLOAD_BYTES}},
        "queue": {"limit_packets": QUEUE_PACKETS, "trim": {}},
        "host_queue": {"priority": True},
    }


#: The compared transports, in the figure's order: the name traffic uses, and its
#: settings (transports and switch queue). Adding a transport is one line.
TRANSPORTS: dict[str, Callable[[], dict[str, Any]]] = {
    "homa": homa_settings,
    "pfabric": pfabric_settings,
    "ndp": ndp_settings,
    "dctcp": dctcp_settings,
}


def scenario(transport: str, workload: str, scale: Scale = REDUCED, seed: int = 1) -> dict[str, Any]:
    """One run: ``transport``'s messages from ``workload`` at 80% load for the arrival
    window; the run lasts until all have finished (at most ten windows and 50 ms more)."""
    settings = TRANSPORTS[transport]()
    window = window_ms(workload, scale)
    size = {"cdf_step": str(rdma.cdf_path(WORKLOADS[workload]))}
    return {
        "name": f"homa-slowdown-{transport}-{workload}",
        "seed": seed,
        "duration_ms": 10 * window + 50,
        "topology": scale.topology,
        "network": {
            "link": {"rate_gbps": HOST_GBPS, "delay_us": DELAY_US},
            "tiers": {"fabric": {"rate_gbps": FABRIC_GBPS}},
            "queue": settings["queue"],
            **({"host_queue": settings["host_queue"]} if "host_queue" in settings else {}),
        },
        "transports": settings["transports"],
        "traffic": [{
            "pattern": "random_pairs",
            "transport": transport,
            "class": "message",
            "size": size,
            "arrival": "poisson",
            "load": LOAD,
            "arrivals_until_ms": window,
            **settings.get("traffic", {}),
        }],
    }


COLUMNS = ["workload", "transport", "bucket", "size_max_bytes", "messages", "completed",
           "slowdown_p50", "slowdown_p99", "censored"]


def measure(flows: pd.DataFrame, edges: list[float], max_size: float) -> list[dict[str, Any]]:
    """One row per size bucket: messages, how many finished, and the p50/p99 slowdown of
    the finished ones; on every row, the run's unfinished messages."""
    sized = flows[analysis.finite_mask(flows)]
    buckets = analysis.size_bucket(sized, edges)
    slow = analysis.slowdown(sized)
    censored = int(analysis.censored_mask(flows).sum())
    rows = []
    for label, upper in zip(buckets.cat.categories, [*edges, max_size]):
        in_bucket = buckets == label
        done = in_bucket & sized["completed"].astype(bool)
        rows.append({
            "bucket": str(label),
            "size_max_bytes": float(upper),
            "messages": int(in_bucket.sum()),
            "completed": int(done.sum()),
            **analysis.stat_columns(slow[done].to_numpy(dtype=float), PERCENTILES, "slowdown", unit=""),
            "censored": censored,
        })
    return rows


def run_workload(workload: str, scale: Scale, seed: int) -> pd.DataFrame:
    """Every compared transport on the same arrivals of one workload."""
    edges = bucket_edges(workload, scale.bucket_step)
    max_size = cdf_points(workload)[-1][0]
    rows = []
    for transport in TRANSPORTS:
        res = run(scenario(transport, workload, scale, seed))
        for row in measure(res.flows, edges, max_size):
            rows.append({"workload": workload, "transport": transport, **row})
    return pd.DataFrame(rows, columns=COLUMNS)


def plot_slowdown(table: pd.DataFrame) -> Figure:
    """Slowdown against message size, one row of panels per workload and one column per
    percentile, a line per transport (the layout of the paper's Fig. 8 and 9)."""
    from matplotlib.ticker import FuncFormatter

    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = plots.panels(len(workloads), len(PERCENTILES), size=(9.0, 2.6 * max(len(workloads), 1)))
    transports = [t for t in TRANSPORTS if t in set(table["transport"])]
    for r, workload in enumerate(workloads):
        part = table[table["workload"] == workload]
        for c, p in enumerate(PERCENTILES):
            ax = axes[r, c]
            for i, transport in enumerate(transports):
                g = part[part["transport"] == transport].sort_values("size_max_bytes")
                ax.plot(g["size_max_bytes"].to_numpy(dtype=float), g[f"slowdown_{p}"].to_numpy(dtype=float),
                        label={"homa": "Homa", "pfabric": "pFabric"}.get(transport, transport.upper()), **plots.series_style(i))
            plots.log_axis(ax, "x", part["size_max_bytes"], minor_labels=False)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: analysis.size_label(v)))
            plots.log_axis(ax, "y", part[f"slowdown_{p}"])
            ax.set_title(f"{workload}, {LOAD:.0%} load: {'median' if p == 'p50' else '99th pct.'}", fontsize="small")
            ax.set_xlabel("message size")
            ax.set_ylabel("slowdown")
            ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize="small")
    fig.suptitle(f"Slowdown by message size ({cite.HOMA_SHORT}, Fig. 8–9)")
    return fig


@experiment(
    name="homa-slowdown",
    document=f"{cite.HOMA} §5.2 (its simulations)",
    figure="Fig. 8–9: slowdown (median and 99th percentile) by message size, W1–W5 at 80% load",
    compares="Homa (8 priority levels, RTTbytes 9.7 KB, SRPT grants with overcommitment) against "
    "pFabric (13-packet priority queues, as the Homa authors ran it), NDP "
    "(trimming switches, 1,500-byte packets) and DCTCP "
    "on a 10/40 Gb/s leaf-spine; the paper's workloads W1–W5 at 80% load; p50 and p99 slowdown "
    "per message-size bucket",
    reduced_time="~30 s (20 runs of 12 hosts)",
    full_time="~6 min (20 runs of 144 hosts, 30,000 messages each)",
    plot=plot_slowdown,
)
def run_homa_slowdown(full: bool, seed: int) -> pd.DataFrame:
    scale = FULL if full else REDUCED
    return pd.concat([run_workload(w, scale, seed) for w in WORKLOADS], ignore_index=True)
