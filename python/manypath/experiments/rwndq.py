"""The RWNDQ document's experiments (Abdelmoniem and Bensaou, §III-C and §IV-B): long-lived
elephants in an incast through 1 Gbps links with 85.3 KB per-port drop-tail buffers, with
and without RWNDQ on the switch ports, under NewReno and CUBIC; then 30 closed-loop mice
among them (buffer bloat); then the ns-2 study's 10 Gbps setting with DCTCP beside them.

The testbed is the document's Fig. 8: each of the 5 sending machines is a switch (its Open
vSwitch) whose elephants and web servers are hosts on fast virtual ports; its 1 Gbps
uplink to the core switch is one bottleneck (links 1–5) and the core's link towards the
receiving machine another (link 6). Links are 1 µs (virtual ports) and 49 µs (physical),
so the base RTT is ≈ 200 µs. RWNDQ, when on, runs on every switch port with the kernel
module's parameters (T = 1 ms, M = 8, target 25% of the buffer); the ns-2 setting uses
the ns-2 paper's (T = 50 µs, M = 10, target 20%).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..results import Results
from ..runner import run
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SENDERS = 5
MICE_PER_SENDER = 6
MOUSE_BYTES = 11_500
SAMPLE_S = 0.5
RECEIVER = 0
TARGET_FRACTION = {"kernel": 0.25, "ns2": 0.20}
SEGMENT_BYTES = 1500


@dataclass(frozen=True)
class Setting:
    """Rates, delays and buffers of one testbed."""

    rate_gbps: float
    host_delay_us: float
    fabric_delay_us: float
    buffer_bytes: Optional[int] = None
    buffer_packets: Optional[int] = None
    rto_min_us: float = 200_000
    preset: str = "kernel"

    @property
    def buffer_limit_bytes(self) -> int:
        if self.buffer_bytes is not None:
            return self.buffer_bytes
        assert self.buffer_packets is not None
        return self.buffer_packets * SEGMENT_BYTES

    @property
    def target_bytes(self) -> float:
        return TARGET_FRACTION[self.preset] * self.buffer_limit_bytes


#: §III-B and §IV-A: 1 Gbps, 85.3 KB per port, ≈ 200 µs base RTT, Linux's 200 ms RTO.
TESTBED = Setting(rate_gbps=1.0, host_delay_us=1.0, fabric_delay_us=49.0, buffer_bytes=85_300)
#: The ns-2 study: 10 Gbps, ≈ 100 µs RTT, 83-packet buffers, 2 ms minimum RTO.
NS2 = Setting(rate_gbps=10.0, host_delay_us=1.0, fabric_delay_us=24.0, buffer_packets=83,
              rto_min_us=2_000, preset="ns2")


def scenario(
    setting: Setting,
    elephants: int,
    transport: str,
    rwndq: bool,
    *,
    duration_s: float,
    warmup_s: float,
    mice_requests: int = 0,
    mice_start_s: float = 0.0,
    ecn_k_packets: Optional[int] = None,
    sample_s: float = SAMPLE_S,
    seed: int = 1,
) -> dict[str, Any]:
    """The Fig. 8 testbed: `elephants` long-lived flows per sending machine to the
    receiver, and with `mice_requests` > 0, 6 web servers per machine each answering that
    many 11.5 KB requests one after another from `mice_start_s` on."""
    per_leaf = elephants + (MICE_PER_SENDER if mice_requests else 0)
    queue: dict[str, Any] = (
        {"limit_bytes": setting.buffer_bytes}
        if setting.buffer_bytes is not None
        else {"limit_packets": setting.buffer_packets}
    )
    if rwndq:
        queue["rwndq"] = {"preset": setting.preset}
    if ecn_k_packets is not None:
        queue["ecn_k_packets"] = ecn_k_packets
    elephant_hosts = [leaf * per_leaf + i for leaf in range(1, SENDERS + 1) for i in range(elephants)]
    traffic: list[dict[str, Any]] = [
        {
            "pattern": "incast",
            "transport": transport,
            "class": "elephant",
            "hosts": [RECEIVER, *elephant_hosts],
            "receiver": RECEIVER,
            "size": "long_lived",
        }
    ]
    for leaf in range(1, SENDERS + 1):
        for i in range(MICE_PER_SENDER if mice_requests else 0):
            traffic.append({
                "pattern": "pair",
                "transport": transport,
                "class": "mouse",
                "src": leaf * per_leaf + elephants + i,
                "dst": RECEIVER,
                "size": {"fixed": MOUSE_BYTES},
                "repeat": mice_requests,
                "closed_loop": True,
                "start_us": mice_start_s * 1e6,
            })
    name = f"rwndq-{elephants * SENDERS}el-{transport}-{'rwndq' if rwndq else 'fifo'}"
    return {
        "name": name,
        "seed": seed,
        "duration_ms": duration_s * 1e3,
        "warmup_ms": warmup_s * 1e3,
        "topology": {"leaf_spine": {"leaves": SENDERS + 1, "spines": 1, "hosts_per_leaf": per_leaf}},
        "network": {
            "link": {"rate_gbps": setting.rate_gbps, "delay_us": setting.fabric_delay_us},
            "queue": queue,
            # The hosts are virtual ports of their machine's switch: fast and short.
            "tiers": {"host": {"rate_gbps": 10 * setting.rate_gbps, "delay_us": setting.host_delay_us}},
        },
        "tcp": {"rto_min_us": setting.rto_min_us},
        "output": {"flow_sample_us": sample_s * 1e6},
        "traffic": traffic,
    }


def bottleneck_links(queues: pd.DataFrame) -> pd.DataFrame:
    """Links 1–5 (each sending machine's uplink) and link 6 (the core towards the
    receiving machine), in that order."""
    up = queues[(queues["node"] != "leaf0") & (queues["peer"] == "spine0")]
    down = queues[(queues["node"] == "spine0") & (queues["peer"] == "leaf0")]
    return pd.concat([up.sort_values("node"), down])


def elephant_stats(res: Results, warmup_s: float) -> dict[str, Any]:
    """Per-flow average goodput and its variance over the sampling intervals."""
    flows = res.flows[res.flows["class"] == "elephant"]
    mbps = flows["goodput_bps"].to_numpy(dtype=float) / 1e6
    rates = analysis.interval_rates(res.flow_samples, after_s=warmup_s)
    rates = rates[rates["flow_id"].isin(flows["flow_id"])]
    var = (rates["rate_bps"] / 1e6).groupby(rates["flow_id"]).var().to_numpy(dtype=float)
    return {
        **analysis.stat_columns(mbps, ("mean",), "thr", "mbps"),
        "jain": analysis.jain_index(mbps),
        **analysis.stat_columns(mbps, ("p0", "p10", "p50", "p90", "p100"), "thr", "mbps"),
        **analysis.stat_columns(var, ("p10", "p50", "p90", "p100"), "var", unit=""),
        "timeouts": int(flows["timeouts"].sum()),
    }


def link_stats(res: Results, setting: Setting) -> dict[str, Any]:
    links = bottleneck_links(res.queues)
    row: dict[str, Any] = {f"drops_l{i + 1}": int(d) for i, d in enumerate(links["drops"])}
    last = links.iloc[-1]
    row["util_l6"] = float(last["utilization"])
    row["queue_l6_kb"] = float(last["mean_bytes"]) / 1e3
    row["target_kb"] = setting.target_bytes / 1e3
    return row


def mice_stats(res: Results) -> dict[str, Any]:
    mice = res.flows[res.flows["class"] == "mouse"]
    fct_ms = analysis.completed_fct_ms(mice)
    return {
        "mice": int(len(mice)),
        "mice_done": int(fct_ms.size),
        **analysis.stat_columns(fct_ms, ("mean", "std", "p99", "max"), "fct"),
        "mice_timeouts": int(mice["timeouts"].sum()),
    }


def _configs() -> list[tuple[int, str, bool]]:
    return [(e, cc, rw) for e in (10, 40) for cc in ("tcp", "cubic") for rw in (False, True)]


def _label(row: pd.Series) -> str:
    """A configuration (a table row) in a legend, e.g. "50 el., Reno RWNDQ"."""
    cc = "Reno" if row["cc"] == "tcp" else "CUBIC"
    return f"{row['elephants']} el., {cc} {'RWNDQ' if bool(row['rwndq']) else 'FIFO'}"


def _config_bars(ax: Any, table: pd.DataFrame, columns: list[str], labels: list[str]) -> None:
    """One group of bars per column, one bar per configuration (row) in each group."""
    plots.grouped_bars(ax, labels, [(_label(r), [r[c] for c in columns]) for _, r in table.iterrows()])


def plot_incast(table: pd.DataFrame) -> Figure:
    """Fig. 9/10 (a, b) and Table I: the CDF of the elephants' average throughput (drawn
    through the table's percentiles) and the drops per bottleneck link."""
    fig, axes = plots.panels(1, 2, size=(11, 4.2))
    ax1, ax2 = axes[0]
    qs = [0, 10, 50, 90, 100]
    for _, r in table.iterrows():
        ax1.plot([r[f"thr_p{q}_mbps"] for q in qs], np.array(qs) / 100, marker="o", label=_label(r))
    ax1.set_xlabel("average throughput per elephant (Mbps)")
    ax1.set_ylabel("CDF (at the 0/10/50/90/100th percentiles)")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize="x-small")
    links = [c for c in table.columns if c.startswith("drops_l")]
    # Zero drops drawn at 0.5 so they show on the log axis.
    _config_bars(ax2, table.assign(**{c: table[c].clip(lower=0.5) for c in links}), links,
                 [c.replace("drops_l", "link ") for c in links])
    ax2.set_yscale("log")
    ax2.set_ylabel("packet drops")
    ax2.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"RWNDQ vs drop-tail FIFO: elephants in an incast ({cite.RWNDQ_SHORT}, Fig. 9, 10, Table I)")
    return fig


@experiment(
    name="rwndq-incast",
    document=f"{cite.RWNDQ} §III-C and §IV-B1",
    figure="Fig. 5, 9, 10 and Table I: elephants' average throughput and its variance "
    "(CDFs), drops per bottleneck link",
    compares="RWNDQ vs drop-tail FIFO under NewReno and CUBIC: 5 senders with 10 or 40 "
    "long-lived elephants each, 1 Gbps links, 85.3 KB buffers, ≈ 200 µs RTT; throughput "
    "and its variance over 0.5 s intervals, drops per link",
    reduced_time="~15 s",
    full_time="~4 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    duration_s, warmup_s = (50.0, 1.0) if full else (3.0, 0.5)
    rows = []
    for elephants, cc, rw in _configs():
        res = run(scenario(TESTBED, elephants, cc, rw, duration_s=duration_s,
                           warmup_s=warmup_s, seed=seed))
        rows.append({"elephants": elephants * SENDERS, "cc": cc, "rwndq": rw,
                     **elephant_stats(res, warmup_s), **link_stats(res, TESTBED)})
    return pd.DataFrame(rows)


def plot_bufferbloat(table: pd.DataFrame) -> Figure:
    """Fig. 11/12: the mice's mean, p99 and maximum FCT, against the 200 ms RTO."""
    fig, axes = plots.panels(size=(9, 4.2))
    ax = axes[0, 0]
    _config_bars(ax, table, ["fct_mean_ms", "fct_std_ms", "fct_p99_ms", "fct_max_ms"],
                 ["mean", "std. dev.", "p99", "max"])
    plots.reference_line(ax, 200.0)
    ax.set_yscale("log")
    ax.set_ylabel("mice flow completion time (ms)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="x-small")
    ax.set_title(f"30 mice among elephants: RWNDQ vs FIFO ({cite.RWNDQ_SHORT}, Fig. 11, 12)")
    return fig


@experiment(
    name="rwndq-bufferbloat",
    document=f"{cite.RWNDQ} §IV-B2",
    figure="Fig. 11 and 12: mice FCT mean, standard deviation, p99 and max",
    compares="RWNDQ vs FIFO under NewReno and CUBIC: 50 or 200 elephants plus 30 "
    "closed-loop mice (11.5 KB responses) starting mid-run; mice FCT statistics",
    reduced_time="~20 s",
    full_time="~5 min",
    plot=plot_bufferbloat,
)
def run_bufferbloat(full: bool, seed: int) -> pd.DataFrame:
    duration_s, warmup_s, start_s, requests = (50.0, 1.0, 20.0, 1000) if full else (4.0, 0.5, 1.5, 100)
    rows = []
    for elephants, cc, rw in _configs():
        res = run(scenario(TESTBED, elephants, cc, rw, duration_s=duration_s, warmup_s=warmup_s,
                           mice_requests=requests, mice_start_s=start_s, seed=seed))
        el = elephant_stats(res, warmup_s)
        rows.append({"elephants": elephants * SENDERS, "cc": cc, "rwndq": rw, **mice_stats(res),
                     "elephant_mbps": el["thr_mean_mbps"] * elephants * SENDERS,
                     "drops": int(bottleneck_links(res.queues)["drops"].sum())})
    return pd.DataFrame(rows)


NS2_SCHEMES = ("tcp-fifo", "tcp-rwndq", "dctcp")


def plot_ns2(table: pd.DataFrame) -> Figure:
    return plots.bars(table.set_index("scheme")["fct_p99_ms"], "mice p99 FCT (ms)",
                      title="ns-2 setting: 10 Gbps, 83-packet buffers, 2 ms RTO")


@experiment(
    name="rwndq-ns2",
    document=f"{cite.RWNDQ_NS2}: the ns-2 study's setting",
    figure="elephants' fairness and drops, mice FCT: TCP FIFO, TCP RWNDQ, DCTCP",
    compares="10 Gbps, ≈ 100 µs RTT, 83-packet buffers, 2 ms minimum RTO, RWNDQ with "
    "T = 50 µs, M = 10, target 20%; DCTCP marks at K = 14 packets (17% of the buffer)",
    reduced_time="~15 s",
    full_time="~3 min",
    plot=plot_ns2,
)
def run_ns2(full: bool, seed: int) -> pd.DataFrame:
    duration_s, warmup_s, start_s, requests = (5.0, 0.2, 1.0, 1000) if full else (0.5, 0.1, 0.2, 100)
    rows = []
    for scheme in NS2_SCHEMES:
        transport = "dctcp" if scheme == "dctcp" else "tcp"
        k = round(0.17 * (NS2.buffer_packets or 0)) if scheme == "dctcp" else None
        res = run(scenario(NS2, 10, transport, scheme == "tcp-rwndq", duration_s=duration_s,
                           warmup_s=warmup_s, mice_requests=requests, mice_start_s=start_s,
                           ecn_k_packets=k, sample_s=0.5 if full else 0.05, seed=seed))
        rows.append({"scheme": scheme, **elephant_stats(res, warmup_s), **link_stats(res, NS2),
                     **mice_stats(res)})
    return pd.DataFrame(rows)
