"""The FUSO document's experiments (Chen et al., §5): latency-sensitive requests under
failure loss, congestion loss and both, on the 1 Gbps testbed (Fig. 3: two racks of three
hosts joined by three parallel paths) and the 4-pod 10/40 Gbps simulation fabric.

Schemes, as in §5.1: the baseline TCP has SACK with SACK-based recovery, limited transmit
and early retransmit; TLP, TCP-IR, Proactive and RepFlow are built on it; MPTCP and FUSO
use LIA over 4 subflows (8 on the fabric) whose initial windows add up to TCP's 16
packets; FUSO's α = β = 0.5. Every scheme is ECN-capable (RED marks at 32 KB on the
testbed, 300 KB on the fabric) with a 5 ms minimum RTO, and restarts from the initial
window after an idle period, as Linux does and as the document's warm-up relies on.

Traffic is the document's client/server application: Poisson requests to random servers
over persistent connections (5 per client–server pair for latency-sensitive queries and
5 for background requests); sizes from web search (or data mining), < 100 KB are queries
carried by the scheme under test, the rest background requests on TCP. A query's FCT is
its response's: the connections are established beforehand, so it has no handshake, and
the request itself is not simulated.

``fuso-timeout-probability`` (§2.2, Fig. 2) is apart: how likely a TCP flow is to suffer
a retransmission timeout under one-way random loss, simulated and against the document's
analytic lower bound max(p_tail, p_win, p_retx).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..runner import run
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SCHEMES = ("tcp", "tlp", "tcp-ir", "proactive", "repflow", "mptcp", "fuso")
LABELS = {
    "tcp": "TCP",
    "tlp": "TLP",
    "tcp-ir": "TCP-IR",
    "proactive": "Proactive",
    "repflow": "RepFlow",
    "mptcp": "MPTCP",
    "fuso": "FUSO",
}
QUERY_BYTES = 100_000
"""Requests below this size are latency-sensitive queries (§5.1)."""
#: §5.1: the baseline TCP's settings. The MSS is Linux's over 1500-byte Ethernet.
MSS = 1460
INIT_CWND = 16
RTO_MIN_US = 5_000
LOSS_RATES = (0.00125, 0.0025, 0.005, 0.01, 0.02, 0.04)
"""Fig. 4's loss rates, 0.125% to 4%."""
TESTBED_CLIENTS = [3, 4, 5]
"""H4–H6 (rack 1)."""
TESTBED_SERVERS = [0, 1, 2]
"""H1–H3 (rack 0)."""
FAILURE_LOAD = 0.01
"""§5.2.1: queries at an average of 10 Mbps per client on 1 Gbps links."""
WARMUP_US = 3_000_000
"""Requests start once the persistent connections are up: 3 s leaves room for two
retries (1 s and 2 s later, RFC 6298) of a handshake packet lost on a lossy link, as the
document's connections are all established (and warmed up) before it measures."""

#: The baseline TCP's loss recovery (§5.1), shared by every scheme.
BASE_TCP: dict[str, Any] = {
    "rto_min_us": RTO_MIN_US,
    "init_cwnd_packets": INIT_CWND,
    "sack": True,
    "limited_transmit": True,
    "early_retransmit": True,
    "idle_restart": True,
}


def transports(subflows: int = 4) -> dict[str, dict[str, Any]]:
    """Every scheme as a `[transports]` table; multipath schemes split TCP's initial
    window over their subflows."""
    per_subflow = {"init_cwnd_packets": max(1, INIT_CWND // subflows)}
    reno: dict[str, Any] = {"cc": "reno", "ecn": True}
    multipath: dict[str, Any] = {"cc": "lia", "ecn": True, "subflows": subflows, "tcp": per_subflow}
    return {
        "tcp": reno,
        "tlp": {**reno, "tcp": {"tlp": True}},
        "tcp-ir": {**reno, "tcp": {"tcp_ir": True}},
        "proactive": {**reno, "tcp": {"proactive": True}},
        "repflow": {**reno, "replicas": 2},
        "mptcp": multipath,
        "fuso": {**multipath, "fuso": True},
    }


def testbed(name: str, seed: int, traffic: list[dict[str, Any]], faults: list[dict[str, Any]],
            *, subflows: int = 4, duration_s: float = 600.0) -> dict[str, Any]:
    """The testbed of Fig. 3 (see scenarios/fuso-testbed.toml for the delays behind its
    ≈ 280 µs base RTT)."""
    return {
        "name": name,
        "seed": seed,
        "duration_ms": duration_s * 1e3,
        "topology": {"fuso_testbed": {"hosts_per_rack": 3, "paths": 3}},
        "network": {
            "link": {"rate_gbps": 1},
            "queue": {"limit_bytes": 131_072, "ecn_k_bytes": 32_768},
            "tiers": {"host": {"delay_us": 50}, "path": {"delay_us": 20}},
        },
        "tcp": BASE_TCP,
        "transports": transports(subflows),
        "faults": faults,
        "traffic": traffic,
    }


def path_loss(p: float) -> list[dict[str, Any]]:
    """Random loss p on both directions of path P1."""
    return [{"kind": "loss", "from": a, "to": b, "parallel": 0, "probability": p}
            for a, b in (("tor0", "tor1"), ("tor1", "tor0"))] if p > 0 else []


def edge_loss(p: float) -> list[dict[str, Any]]:
    """Random loss p on both directions of H4–H6's access links."""
    out: list[dict[str, Any]] = []
    for h in TESTBED_CLIENTS:
        for a, b in ((f"host{h}", "tor1"), ("tor1", f"host{h}")):
            out.append({"kind": "loss", "from": a, "to": b, "probability": p})
    return out if p > 0 else []


def queries(scheme: str, flows: int, *, load: float, workload: str = "websearch",
            clients: Optional[list[int]] = None, servers: Optional[list[int]] = None,
            background: bool = False, start_us: float = WARMUP_US,
            connections: int = 5) -> dict[str, Any]:
    """Requests from `clients` to `servers`: with `background`, every web-search request
    (queries on `scheme`, the rest on TCP), else queries only; `flows` requests in all."""
    req: dict[str, Any] = {
        "clients": clients if clients is not None else TESTBED_CLIENTS,
        "servers": servers if servers is not None else TESTBED_SERVERS,
        "connections": connections,
    }
    if background:
        req["background_above_bytes"] = QUERY_BYTES
    else:
        req["sizes_below_bytes"] = QUERY_BYTES
    return {
        "pattern": "requests",
        "transport": scheme,
        "class": "query",
        "size": {"cdf": workload},
        "load": load,
        "flows": flows,
        "start_us": start_us,
        "requests": req,
    }


def query_stats(flows: pd.DataFrame, rto_s: float = RTO_MIN_US / 1e6) -> dict[str, Any]:
    """What the document's figures show of the latency-sensitive queries."""
    q = flows[flows["class"] == "query"]
    done = q[q["completed"].astype(bool)]
    # On the wire beyond the payload's one transmission: retransmissions, FUSO's copies,
    # RepFlow's second flow, Proactive's duplicates and TCP-IR's coded packets (the last
    # two are outside `bytes_sent`; a copy has its original's size, a coded packet an MSS).
    packets = q["packets_sent"].to_numpy(dtype=float)
    per_packet = np.divide(q["bytes_sent"].to_numpy(dtype=float), packets,
                           out=np.zeros(len(q)), where=packets > 0)
    sent = (q["bytes_sent"].to_numpy(dtype=float)
            + q["proactive_copies"].to_numpy(dtype=float) * per_packet
            + q["ir_coded"].to_numpy(dtype=float) * MSS)
    size = q["size"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        redundant = np.where(sent > 0, np.clip(sent - size, 0, None) / sent, 0.0)
        recovery = np.where(sent > 0, q["recovery_bytes"].to_numpy(dtype=float) / sent, 0.0)
    return {
        "queries": int(len(q)),
        "completed": int(len(done)),
        **analysis.stat_columns(analysis.completed_fct_ms(q), ("mean", "p99"), "fct"),
        "timeout_fraction": float((q["timeouts"] > 0).mean()) if len(q) else math.nan,
        "over_rto_fraction": float((done["fct_s"] > rto_s).mean()) if len(done) else math.nan,
        "extra_load": float(redundant.mean()) if len(q) else math.nan,
        "fuso_extra_load": float(recovery.mean()) if len(q) else math.nan,
        "window_violations": int(q["window_violations"].sum()),
    }


def _run_loss(where: str, full: bool, seed: int, schemes: tuple[str, ...] = SCHEMES,
              subflows: int = 4, rates: tuple[float, ...] = LOSS_RATES) -> pd.DataFrame:
    flows = 15_000 if full else 2_500
    seeds = range(seed, seed + (10 if full else 1))
    rows = []
    for scheme in schemes:
        for p in rates:
            faults = path_loss(p) if where == "network" else edge_loss(p)
            tables = [run(testbed(f"fuso-{where}-loss-{scheme}-{p}", s,
                                  [queries(scheme, flows, load=FAILURE_LOAD)], faults,
                                  subflows=subflows)).flows for s in seeds]
            row = {"scheme": scheme, "subflows": subflows if scheme in ("mptcp", "fuso") else 1,
                   "loss_rate": p, **query_stats(pd.concat(tables))}
            rows.append(row)
    return pd.DataFrame(rows)


def _loss_axes(ax: Any, values: Any = None, log_y: bool = True) -> None:
    plots.log_axis(ax, "x", minor_labels=False)
    ax.set_xticks(LOSS_RATES, [f"{p * 100:g}" for p in LOSS_RATES])
    ax.set_xlabel("loss rate (%)")
    if log_y:
        plots.log_axis(ax, "y", values)
    ax.grid(True, alpha=0.3)


def _by_scheme(ax: Any, table: pd.DataFrame, x: str, y: str, key: str = "scheme") -> None:
    """A line per scheme, each with its own marker and line style."""
    for i, (name, g) in enumerate(table.groupby(key, sort=False)):
        ax.plot(g[x], g[y], label=LABELS.get(str(name), str(name)), **plots.series_style(i))


def plot_loss(table: pd.DataFrame, where: str) -> Figure:
    fig, axes = plots.panels(1, 2, size=(11, 4.2))
    a, b = axes[0]
    _by_scheme(a, table, "loss_rate", "fct_p99_ms")
    _loss_axes(a, table["fct_p99_ms"])
    a.set_ylabel("99th percentile FCT (ms)")
    # No timeout at all is a zero: the axis turns linear below its smallest decade to show it.
    timeouts = table["timeout_fraction"] * 100
    _by_scheme(b, table.assign(timeout_fraction=timeouts), "loss_rate", "timeout_fraction")
    _loss_axes(b, timeouts)
    b.set_ylabel("timeout flows (%)")
    a.legend(fontsize="small")
    fig.suptitle(f"{cite.FUSO_SHORT}, Fig. 4: loss in the {where} — queries < 100 KB, 10 Mbps per client")
    return fig


@experiment(
    name="fuso-network-loss",
    document=f"{cite.FUSO} §5.2.1",
    figure="Fig. 4(a, b): 99th percentile FCT and fraction of timeout flows vs loss rate",
    compares="TCP, TLP, TCP-IR, Proactive, RepFlow, MPTCP and FUSO on the 1 Gbps testbed "
    "with 0.125–4% random loss on both directions of path P1; web-search queries < 100 KB "
    "from H4–H6 to H1–H3 at 10 Mbps per client",
    reduced_time="~5 s",
    full_time="~15 min",
    plot=lambda t: plot_loss(t, "network"),
)
def run_network_loss(full: bool, seed: int) -> pd.DataFrame:
    return _run_loss("network", full, seed)


@experiment(
    name="fuso-edge-loss",
    document=f"{cite.FUSO} §5.2.1",
    figure="Fig. 4(c, d): 99th percentile FCT and fraction of timeout flows vs loss rate",
    compares="the same schemes with 0.125–4% random loss on both directions of H4–H6's "
    "access links, where no path diversity helps",
    reduced_time="~5 s",
    full_time="~15 min",
    plot=lambda t: plot_loss(t, "edge"),
)
def run_edge_loss(full: bool, seed: int) -> pd.DataFrame:
    return _run_loss("edge", full, seed)


def plot_subflows(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels(size=(6.5, 4.2))
    ax = axes[0, 0]
    t = table.assign(label=[f"{LABELS[s]} {n}" for s, n in zip(table["scheme"], table["subflows"])])
    _by_scheme(ax, t, "loss_rate", "fct_p99_ms", key="label")
    _loss_axes(ax, t["fct_p99_ms"])
    ax.set_ylabel("99th percentile FCT (ms)")
    ax.legend(fontsize="small", ncol=2)
    ax.set_title(f"{cite.FUSO_SHORT}, Fig. 7: 1, 2, 4 and 8 subflows, loss on path P1")
    return fig


@experiment(
    name="fuso-subflows",
    document=f"{cite.FUSO} §5.2.4",
    figure="Fig. 7: 99th percentile FCT vs loss rate for 1, 2, 4, 8 subflows",
    compares="FUSO and MPTCP with 1, 2, 4 and 8 subflows in the network-loss setting",
    reduced_time="~3 s",
    full_time="~15 min",
    plot=plot_subflows,
)
def run_subflows(full: bool, seed: int) -> pd.DataFrame:
    rates = LOSS_RATES if full else (0.005, 0.02)
    return pd.concat([_run_loss("network", full, seed, ("mptcp", "fuso"), n, rates)
                      for n in (1, 2, 4, 8)], ignore_index=True)


def _fct_vs_load(mean_ax: Any, p99_ax: Any, table: pd.DataFrame) -> None:
    """Queries' average and 99th percentile FCT against load, a line per scheme."""
    for ax, col, ylabel in ((mean_ax, "fct_mean_ms", "average FCT (ms)"),
                            (p99_ax, "fct_p99_ms", "99th percentile FCT (ms)")):
        _by_scheme(ax, table, "load", col)
        plots.log_axis(ax, "y", table[col])
        ax.set_xlabel("offered load")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)


def plot_loss_and_congestion(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels(1, 3, size=(14, 4.2))
    mean_ax, p99_ax, extra_ax = axes[0]
    _fct_vs_load(mean_ax, p99_ax, table)
    fuso = table[table["scheme"] == "fuso"]
    extra_ax.bar(fuso["load"].astype(str), fuso["fuso_extra_load"] * 100)
    extra_ax.set_xlabel("offered load")
    extra_ax.set_ylabel("FUSO's extra load (%)")
    mean_ax.legend(fontsize="small")
    fig.suptitle(f"{cite.FUSO_SHORT}, Fig. 5: 2% loss on path P1 plus web-search load")
    return fig


@experiment(
    name="fuso-loss-and-congestion",
    document=f"{cite.FUSO} §5.2.2",
    figure="Fig. 5: queries' average and 99th percentile FCT, FUSO's extra load vs load",
    compares="the schemes (queries) with background requests on TCP, 2% loss on both "
    "directions of P1, load 0.1–0.9 of the clients' links",
    reduced_time="~10 s",
    full_time="~1 h",
    plot=plot_loss_and_congestion,
)
def run_loss_and_congestion(full: bool, seed: int) -> pd.DataFrame:
    loads = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9) if full else (0.1, 0.5, 0.9)
    # All requests count; about 60% of web-search requests are queries.
    requests = 25_000 if full else 600
    rows = []
    for scheme in SCHEMES:
        for load in loads:
            sc = testbed(f"fuso-loss-congestion-{scheme}-{load}", seed,
                         [queries(scheme, requests, load=load, background=True)], path_loss(0.02))
            flows = run(sc).flows
            bg = flows[flows["class"] == "background"]
            rows.append({"scheme": scheme, "load": load, **query_stats(flows),
                         "background_done": float(bg["completed"].astype(bool).mean())})
    return pd.DataFrame(rows)


INCAST_RESPONSE = 64 * 1024


def plot_incast(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels(1, 2, size=(11, 4.2))
    a, b = axes[0]
    _by_scheme(a, table, "fanout", "rct_mean_ms")
    a.set_xlabel("fanout")
    a.set_ylabel("request completion time (ms)")
    a.grid(True, alpha=0.3)
    _by_scheme(b, table, "fanout", "extra_load")
    b.set_xlabel("fanout")
    b.set_ylabel("extra load (redundant bytes / bytes sent)")
    b.grid(True, alpha=0.3)
    a.legend(fontsize="small")
    fig.suptitle(f"{cite.FUSO_SHORT}, Fig. 6: incast, 64 KB responses from H2–H6 to H1")
    return fig


@experiment(
    name="fuso-incast",
    document=f"{cite.FUSO} §5.2.3",
    figure="Fig. 6: request completion time and extra load vs fanout",
    compares="the schemes answering a request from H1 with 64 KB from each of `fanout` "
    "sender applications on H2–H6 (persistent connections, no failure loss)",
    reduced_time="~2 s",
    full_time="~10 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    fanouts = tuple(range(5, 75, 5)) if full else (10, 30, 50, 70)
    jobs = 100 if full else 15
    rows = []
    for scheme in SCHEMES:
        for n in fanouts:
            traffic = [{
                "pattern": "requests",
                "transport": scheme,
                "class": "query",
                "size": {"fixed": INCAST_RESPONSE},
                # One request at a time: 20 per second, far apart next to their ~10–50 ms.
                "rate_per_s": 20,
                "flows": jobs * n,
                "start_us": WARMUP_US,
                "requests": {"clients": [0], "servers": [1, 2, 3, 4, 5], "connections": 1,
                             "fanout": n},
            }]
            flows = run(testbed(f"fuso-incast-{scheme}-{n}", seed, traffic, [])).flows
            jct = analysis.job_stats(flows)["jct_ms"].to_numpy(dtype=float)
            stats = query_stats(flows)
            rows.append({"scheme": scheme, "fanout": n, "jobs": len(jct),
                         "rct_mean_ms": float(np.nanmean(jct)), "rct_p99_ms": analysis.percentile(jct, 99),
                         "timeout_fraction": stats["timeout_fraction"], "extra_load": stats["extra_load"],
                         "fuso_extra_load": stats["fuso_extra_load"]})
    return pd.DataFrame(rows)


def fabric(name: str, seed: int, traffic: list[dict[str, Any]], *, lossy: float = 0.05,
           duration_s: float = 600.0) -> dict[str, Any]:
    """§5.3's 4-pod fat tree: 4 spines, 2 aggregation and 2 ToR switches per pod, 8
    servers per ToR; 40 Gbps fabric, 10 Gbps servers, 1 MB buffers, ECN at 300 KB,
    ≈ 240 µs base RTT (see scenarios/fuso-fabric.toml); `lossy` of the links lossy, rates
    from the measured distribution without its > 60% part."""
    return {
        "name": name,
        "seed": seed,
        "duration_ms": duration_s * 1e3,
        "topology": {"fuso_fabric": {"pods": 4, "spines": 4, "aggs_per_pod": 2,
                                     "tors_per_pod": 2, "hosts_per_tor": 8}},
        "network": {
            "link": {"rate_gbps": 40, "delay_us": 20},
            "tiers": {"host": {"rate_gbps": 10}},
            "queue": {"limit_bytes": 1_048_576, "ecn_k_bytes": 307_200},
        },
        "tcp": BASE_TCP,
        "transports": transports(8),
        "faults": [{"kind": "random_lossy_links", "fraction": lossy}] if lossy > 0 else [],
        "traffic": traffic,
    }


def plot_fattree(table: pd.DataFrame) -> Figure:
    workloads = list(dict.fromkeys(table["workload"]))
    fig, axes = plots.panels(len(workloads), 2, size=(11, 4 * len(workloads)))
    for row, w in zip(axes, workloads):
        _fct_vs_load(row[0], row[1], table[table["workload"] == w])
        for ax in row:
            ax.set_title(w)
        row[0].legend(fontsize="small")
    fig.suptitle(f"{cite.FUSO_SHORT}, Fig. 8: 4-pod fat tree, 5% of links lossy, 8 subflows")
    return fig


@experiment(
    name="fuso-fattree",
    document=f"{cite.FUSO} §5.3",
    figure="Fig. 8: queries' average and 99th percentile FCT vs load, web search and data mining",
    compares="the schemes on the 64-server, 4-pod 10/40 Gbps fat tree with 5% of links "
    "lossy (rates from the measured 1–60% distribution), 8 subflows for MPTCP and FUSO, "
    "all servers clients and servers",
    reduced_time="~40 s",
    full_time="~3 h",
    plot=plot_fattree,
)
def run_fattree(full: bool, seed: int) -> pd.DataFrame:
    loads = (0.1, 0.3, 0.5, 0.7, 0.9) if full else (0.3,)
    requests = 32_000 if full else 600
    hosts = list(range(64))
    rows = []
    for workload in ("websearch", "datamining"):
        for scheme in SCHEMES:
            for load in loads:
                # 5 connections per pair and kind at full scale, as on the testbed; fewer
                # (each still persistent) keep the reduced run's 64 × 63 pairs small.
                traffic = [queries(scheme, requests, load=load, workload=workload, clients=hosts,
                                   servers=hosts, background=True,
                                   connections=5 if full else 1)]
                flows = run(fabric(f"fuso-fattree-{workload}-{scheme}-{load}", seed, traffic)).flows
                rows.append({"workload": workload, "scheme": scheme, "load": load,
                             **query_stats(flows)})
    return pd.DataFrame(rows)


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
    from matplotlib.ticker import NullFormatter

    fig, axes = plots.panels(size=(5.5, 4.2))
    ax = axes[0, 0]
    ps = np.geomspace(table["loss"].min(), table["loss"].max(), 50)
    for i, (size, g) in enumerate(table.groupby("size_bytes")):
        color = f"C{i}"
        label = f"{size // 1000} KB" if size < 1_000_000 else f"{size // 1_000_000} MB"
        ax.plot(ps, [timeout_lower_bound(p, int(size))["bound"] for p in ps], color=color,
                label=f"{label} (analysis)")
        g = g.sort_values("loss")
        # A zero fraction has no place on the log axis: an open marker on the axis instead.
        zero = g["timeout_fraction"] <= 0
        if zero.any():
            ax.plot(g.loc[zero, "loss"], np.zeros(int(zero.sum())), transform=ax.get_xaxis_transform(),
                    clip_on=False, linestyle="none", marker="o", fillstyle="none", color=color)
        g = g[~zero]
        y = g["timeout_fraction"]
        err = np.vstack([y - g["ci_low"].clip(upper=y), g["ci_high"] - y])
        ax.errorbar(g["loss"], y, yerr=err, fmt="o--", color=color, capsize=2,
                    label=f"{label} (simulation)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(TIMEOUT_LOSS_RATES), [f"{100 * p:g}%" for p in TIMEOUT_LOSS_RATES])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("random loss rate")
    ax.set_ylabel("timeout probability")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"TCP timeout probability under random loss\n({cite.FUSO_SHORT}, Fig. 2)")
    return fig


@experiment(
    name="fuso-timeout-probability",
    document=f"{cite.FUSO} §2.2",
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
