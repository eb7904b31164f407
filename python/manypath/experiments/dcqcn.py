"""DCQCN's microbenchmarks (Zhu et al., SIGCOMM 2015) on a lossless 40 Gb/s fabric: the
fairness and convergence of flows that join one bottleneck one after another, and the
victim flow of PFC's congestion spreading, with PFC alone and with DCQCN (and HPCC).

Both use the shared buffer, RED-style marking and PFC of :mod:`.rdma` at 40 Gb/s (the
rate of DCQCN's testbed), and the controllers' own default constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import analysis, plots
from ..results import Results
from ..runner import run
from . import citations as cite
from . import rdma
from .registry import experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RATE_GBPS = 40.0
DELAY_US = 1.0
RECEIVER = 0


def fabric(cc: str, tiers: tuple[str, ...] = ()) -> dict[str, Any]:
    """``[network]`` at 40 Gb/s everywhere: :func:`rdma.network` with marking for ``cc``
    (the line-rate RoCE of "PFC alone" marks like DCQCN; it ignores the marks)."""
    marking_cc = "dcqcn" if cc == "roce" else cc
    net = rdma.network(marking_cc, RATE_GBPS, {t: RATE_GBPS for t in tiers}, DELAY_US)
    # Control packets go ahead of data for every controller here, as on DCQCN's testbed.
    for q in [net["queue"], *(t["queue"] for t in net["tiers"].values())]:
        q["priority"] = True
    return net


def transport(cc: str) -> dict[str, Any]:
    """A RoCE transport with the controller's default constants; ``roce`` sends at line
    rate (no congestion control) and relies on PFC alone."""
    t: dict[str, Any] = {"cc": cc, "retransmit": "go-back-n", "payload_bytes": rdma.PAYLOAD_BYTES}
    if cc == "hpcc":
        t["window"] = True
    return t


# --- dcqcn-fairness -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FairnessScale:
    flows: tuple[int, ...]
    stagger_ms: float
    settle_ms: float
    """Time after the last flow's start before the measurement window."""
    measure_ms: float
    sample_us: float


FAIRNESS_FULL = FairnessScale(flows=(2, 4, 8, 16), stagger_ms=10.0, settle_ms=40.0, measure_ms=50.0, sample_us=500.0)
FAIRNESS_REDUCED = FairnessScale(flows=(4,), stagger_ms=5.0, settle_ms=20.0, measure_ms=20.0, sample_us=500.0)


def fairness_window_ms(n: int, scale: FairnessScale) -> tuple[float, float]:
    """(start, end) of the measurement window: after the last flow's start and the settle time."""
    start = (n - 1) * scale.stagger_ms + scale.settle_ms
    return start, start + scale.measure_ms


def fairness_scenario(n: int, scale: FairnessScale = FAIRNESS_REDUCED, seed: int = 1, cc: str = "dcqcn") -> dict[str, Any]:
    """``n`` long-lived flows from hosts 1..n to host 0 through one switch, each starting
    ``stagger_ms`` after the previous one; the receiver's 40 Gb/s port is the bottleneck."""
    _, end = fairness_window_ms(n, scale)
    return {
        "name": f"dcqcn-fairness-{cc}-n{n}",
        "seed": seed,
        "duration_ms": end,
        "stop_when_done": False,
        "topology": {"star": {"senders": n}},
        "network": fabric(cc),
        "transports": {cc: transport(cc)},
        "output": {"flow_sample_us": scale.sample_us},
        "traffic": [{
            "pattern": "incast",
            "transport": cc,
            "class": "flow",
            "priority": 1,
            "receiver": RECEIVER,
            "senders": n,
            "size": "long_lived",
            "stagger_us": scale.stagger_ms * 1e3,
        }],
    }


FAIRNESS_COLUMNS = ["flows", "flow", "time_ms", "rate_gbps", "mean_gbps", "jain", "utilization", "wire_utilization"]


def fairness_measure(samples: pd.DataFrame, flows: pd.DataFrame, queues: pd.DataFrame, n: int,
                     window_ms: tuple[float, float]) -> pd.DataFrame:
    """Each flow's throughput in every sampling interval, and over the measurement window
    its mean rate, Jain's index of the means, their sum over the bottleneck's rate
    (``utilization``, payload only) and the same on the wire (``wire_utilization``: times
    the bottleneck port's bytes sent per payload byte delivered over the whole run)."""
    rates = analysis.interval_rates(samples)
    start_s, end_s = window_ms[0] / 1e3, window_ms[1] / 1e3
    inside = rates[(rates["time_s"] > start_s) & (rates["time_s"] <= end_s + 1e-12)]
    means = inside.groupby("flow_id")["rate_bps"].mean().reindex(flows["flow_id"], fill_value=0.0)
    utilization = float(means.sum()) / (RATE_GBPS * 1e9)
    port = queues[(queues["node_kind"] == "switch") & queues["peer"].astype(str).isin({f"host{RECEIVER}"})]
    acked = float(flows["bytes_acked"].sum())
    overhead = float(port["tx_bytes"].sum()) / acked if acked > 0 else float("nan")
    order = {fid: i for i, fid in enumerate(sorted(flows["flow_id"]))}
    return pd.DataFrame({
        "flows": n,
        "flow": rates["flow_id"].map(order).astype(int),
        "time_ms": rates["time_s"] * 1e3,
        "rate_gbps": rates["rate_bps"] / 1e9,
        "mean_gbps": rates["flow_id"].map(means / 1e9),
        "jain": analysis.jain_index(means.to_numpy()),
        "utilization": utilization,
        "wire_utilization": utilization * overhead,
    }, columns=FAIRNESS_COLUMNS)


def plot_fairness(table: pd.DataFrame) -> Figure:
    """Each flow's throughput over time, one panel per number of flows, with the fair share
    and the measurement window's Jain index and utilisation (DCQCN's fairness figures)."""
    ns = sorted(table["flows"].unique())
    fig, axes = plots.panels(len(ns), 1, size=(7.0, 2.8 * len(ns)))
    for ax, n in zip(axes[:, 0], ns):
        part = table[table["flows"] == n]
        for i, (flow, g) in enumerate(part.groupby("flow")):
            style = plots.series_style(i)
            style.update(marker=None)
            ax.plot(g["time_ms"], g["rate_gbps"], label=f"flow {flow + 1}", **style)
        plots.reference_line(ax, RATE_GBPS / n, f"fair share {RATE_GBPS / n:g} Gb/s")
        row = part.iloc[0]
        ax.set_title(f"{n} DCQCN flows: Jain {row['jain']:.3f}, utilization {row['wire_utilization']:.0%} "
                     f"({cite.DCQCN_SHORT})", fontsize="small")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("throughput (Gb/s)")
        ax.set_ylim(0, RATE_GBPS * 1.05)
        ax.grid(True, alpha=0.3)
        if n <= 8:
            ax.legend(fontsize="small", ncol=2)
    return fig


@experiment(
    name="dcqcn-fairness",
    document=f"{cite.DCQCN} (its fairness and convergence microbenchmark)",
    figure="per-flow throughput over time; Jain's index and utilization after convergence",
    compares="N DCQCN flows joining one 40 Gb/s bottleneck one after another on a PFC fabric; "
    "each flow's throughput, Jain's index and utilization after the last one has converged",
    reduced_time="~1 s (4 flows)",
    full_time="~1 min (2, 4, 8 and 16 flows; estimated)",
    plot=plot_fairness,
)
def run_dcqcn_fairness(full: bool, seed: int) -> pd.DataFrame:
    scale = FAIRNESS_FULL if full else FAIRNESS_REDUCED
    parts = []
    for n in scale.flows:
        res: Results = run(fairness_scenario(n, scale, seed))
        parts.append(fairness_measure(res.flow_samples, res.flows, res.queues, n, fairness_window_ms(n, scale)))
    return pd.concat(parts, ignore_index=True)


# --- dcqcn-victim -------------------------------------------------------------------------------

#: "PFC alone" is the RoCE transport at line rate with no congestion control.
VICTIM_MODES = ("roce", "dcqcn", "hpcc")
MODE_LABELS = {"roce": "PFC alone", "dcqcn": "PFC + DCQCN", "hpcc": "PFC + HPCC"}


@dataclass(frozen=True)
class VictimScale:
    senders: tuple[int, ...]
    """Incast fan-ins to sweep."""
    duration_ms: float
    warmup_ms: float


VICTIM_FULL = VictimScale(senders=(2, 4, 8, 16), duration_ms=100.0, warmup_ms=50.0)
VICTIM_REDUCED = VictimScale(senders=(4, 8), duration_ms=40.0, warmup_ms=20.0)


def victim_hosts(senders: int, hosts_per_leaf: int) -> dict[str, Any]:
    """Who is where on three leaves under one spine: the incast receiver R on leaf 2; one
    incast sender and the victim's sender VS on leaf 0; the other incast senders and the
    victim's receiver VR on leaf 1. The victim shares only leaf 0's uplink with the
    incast; its own path (spine → leaf 1 → VR) is idle."""
    h = hosts_per_leaf
    return {
        "receiver": 2 * h,
        "incast_senders": [0, *range(h + 1, h + senders)],
        "victim_src": 1,
        "victim_dst": h,
    }


def victim_scenario(senders: int, mode: str, scale: VictimScale = VICTIM_REDUCED, seed: int = 1) -> dict[str, Any]:
    """The congestion-spreading scenario: ``senders`` long-lived flows into R, and the
    victim flow VS → VR, all from the start; ``mode`` is the transport of every flow."""
    if mode not in VICTIM_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(VICTIM_MODES)}")
    h = max(max(scale.senders), 2)
    who = victim_hosts(senders, h)
    return {
        "name": f"dcqcn-victim-{mode}-n{senders}",
        "seed": seed,
        "duration_ms": scale.duration_ms,
        "measure_from_ms": scale.warmup_ms,
        "stop_when_done": False,
        "topology": {"leaf_spine": {"leaves": 3, "spines": 1, "hosts_per_leaf": h}},
        "network": fabric(mode, ("fabric",)),
        "transports": {mode: transport(mode)},
        "traffic": [
            {"pattern": "incast", "transport": mode, "class": "incast", "priority": 1,
             "hosts": [who["receiver"], *who["incast_senders"]], "receiver": who["receiver"], "senders": senders,
             "size": "long_lived"},
            {"pattern": "pair", "transport": mode, "class": "victim", "priority": 1,
             "src": who["victim_src"], "dst": who["victim_dst"], "size": "long_lived"},
        ],
    }


VICTIM_COLUMNS = ["senders", "mode", "victim_gbps", "victim_share_gbps", "incast_gbps", "pause_ms", "drops"]


def victim_measure(flows: pd.DataFrame, queues: pd.DataFrame, senders: int, mode: str) -> dict[str, Any]:
    """The victim's goodput after the warm-up, what it could have had (the uplink it shares
    minus the one incast sender's fair share at R), the incast's aggregate goodput, PFC
    pause time and drops."""
    victim = flows[flows["class"] == "victim"]
    incast = flows[flows["class"] == "incast"]
    return {
        "senders": senders,
        "mode": mode,
        "victim_gbps": float(victim["goodput_bps"].sum()) / 1e9,
        "victim_share_gbps": RATE_GBPS - RATE_GBPS / senders,
        "incast_gbps": float(incast["goodput_bps"].sum()) / 1e9,
        "pause_ms": rdma.pause_time_s(queues) * 1e3,
        "drops": int(queues["drops"].sum()),
    }


def plot_victim(table: pd.DataFrame) -> Figure:
    """The victim's throughput against the incast's fan-in, per mode, with the rate it
    would have without head-of-line blocking."""
    labelled = table.assign(mode=table["mode"].map(MODE_LABELS))
    fig = plots.line(labelled, "senders", "victim_gbps", by="mode", xlabel="incast senders",
                     ylabel="victim throughput (Gb/s)", logx=True,
                     title=f"PFC's victim flow ({cite.DCQCN_SHORT})")
    ax = fig.axes[0]
    share = table.drop_duplicates("senders").sort_values("senders")
    ax.plot(share["senders"], share["victim_share_gbps"], color="grey", linestyle="--", linewidth=1,
            label="without HOL blocking")
    ax.set_ylim(0, RATE_GBPS * 1.05)
    ax.legend(fontsize="small")
    return fig


@experiment(
    name="dcqcn-victim",
    document=f"{cite.DCQCN} (its victim-flow scenario of PFC congestion spreading)",
    figure="victim flow throughput vs incast fan-in, PFC alone vs PFC + DCQCN / HPCC",
    compares="an incast into one leaf and a victim flow sharing only an upstream link with it, at 40 Gb/s "
    "with PFC: line-rate RoCE (PFC alone), DCQCN and HPCC; the victim's throughput and PFC pause time",
    reduced_time="~3 s (fan-in 4 and 8)",
    full_time="~8 s (fan-in 2 to 16)",
    plot=plot_victim,
)
def run_dcqcn_victim(full: bool, seed: int) -> pd.DataFrame:
    scale = VICTIM_FULL if full else VICTIM_REDUCED
    rows = []
    for n in scale.senders:
        for mode in VICTIM_MODES:
            res: Results = run(victim_scenario(n, mode, scale, seed))
            rows.append(victim_measure(res.flows, res.queues, n, mode))
    return pd.DataFrame(rows, columns=VICTIM_COLUMNS)


def converged(table: pd.DataFrame) -> pd.DataFrame:
    """One row per number of flows of a fairness table: Jain's index and utilisations."""
    return table.drop_duplicates("flows")[["flows", "jain", "utilization", "wire_utilization"]].reset_index(drop=True)

