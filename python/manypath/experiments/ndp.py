"""NDP (Handley et al., SIGCOMM 2017): receiver-driven transport on trimming switches.

Two of the paper's settings at packet level: the throughput of a permutation of
long-lived flows on a fat tree, NDP (per-packet spraying, trimming queues, pull pacing)
against DCTCP on ECMP and MPTCP with 8 subflows; and an incast of short responses, the
last response's completion time as the number of senders grows, NDP against DCTCP.

Settings as the paper and htsim's NDP configuration give them (docs/experiments.md lists
them): 10 Gb/s links with 1 µs of delay, 9000-byte packets for every transport, 8-packet
trimming queues with a header queue for NDP, a first window of 15 packets (htsim's
``cwnd``) and host NICs that send control packets before data (htsim's priority host
queues); DCTCP and MPTCP on 100-packet drop-tail queues (DCTCP marking at 15 packets).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import plots
from ..runner import run as run_scenario
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: 9000-byte packets on the wire for every transport (the paper's jumbo frames): NDP's
#: 64-byte header leaves 8936 bytes of payload; TCP's 40 leave 8960.
PACKET_BYTES = 9000
TCP_MSS = PACKET_BYTES - 40
#: htsim's NDP first window, 15 packets (`NdpSrc::_cwnd`).
NDP_WINDOW_BYTES = 15 * PACKET_BYTES
#: Each incast sender's response: 450 KB, 50 NDP packets.
RESPONSE_BYTES = 450_000
SCHEMES = ("ndp", "dctcp", "mptcp")
REDUCED_FAN_IN = (4, 16, 64)
FULL_FAN_IN = (1, 4, 8, 16, 32, 64, 100, 150, 200)
LINK = {"rate_gbps": 10, "delay_us": 1}


def transports(scheme: str) -> dict[str, Any]:
    """The transport table of ``scheme`` (named as the scheme)."""
    if scheme == "ndp":
        return {"ndp": {"cc": "ndp", "window_bytes": NDP_WINDOW_BYTES}}
    if scheme == "dctcp":
        return {"dctcp": {"cc": "dctcp"}}
    if scheme == "mptcp":
        return {"mptcp": {"cc": "lia", "subflows": 8}}
    raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")


def network(scheme: str) -> dict[str, Any]:
    """NDP's trimming queues and control-first host NICs; TCP's drop-tail queues (with
    DCTCP's marking threshold)."""
    if scheme == "ndp":
        return {"link": LINK, "queue": {"limit_packets": 100, "trim": {}},
                "host_queue": {"priority": True}}
    queue: dict[str, Any] = {"limit_packets": 100}
    if scheme == "dctcp":
        queue["ecn_k_packets"] = 15
    return {"link": LINK, "queue": queue}


def permutation_scenario(k: int, scheme: str, seed: int, duration_ms: float) -> dict[str, Any]:
    """A permutation of long-lived flows of ``scheme`` on a k-ary fat tree."""
    return {
        "name": f"ndp-permutation-k{k}-{scheme}",
        "seed": seed,
        "duration_ms": duration_ms,
        "measure_from_ms": duration_ms / 5,
        "topology": {"fat_tree": {"k": k}},
        "network": network(scheme),
        "tcp": {"mss": TCP_MSS, "rto_min_us": 1000},
        "transports": transports(scheme),
        "traffic": [{"pattern": "permutation", "transport": scheme, "size": "long_lived"}],
    }


def incast_scenario(fan_in: int, scheme: str, seed: int) -> dict[str, Any]:
    """``fan_in`` senders of a star each answer the receiver (host 0) with one response."""
    return {
        "name": f"ndp-incast-n{fan_in}-{scheme}",
        "seed": seed,
        "duration_ms": 2000,
        "topology": {"star": {"senders": fan_in}},
        "network": network(scheme),
        "tcp": {"mss": TCP_MSS, "rto_min_us": 1000},
        "transports": transports(scheme),
        "traffic": [{"pattern": "incast", "transport": scheme, "receiver": 0, "senders": fan_in,
                     "size": {"fixed": RESPONSE_BYTES}}],
    }


def plot_permutation(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels()
    ax = axes[0][0]
    plots.grouped_bars(ax, list(table["scheme"]), [(None, list(table["throughput_fraction"]))])
    ax.set_ylabel("throughput (fraction of host capacity)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Fat-tree permutation: NDP, DCTCP, MPTCP ({cite.NDP_SHORT})")
    return fig


@experiment(
    name="ndp-permutation",
    document=f"{cite.NDP} §6",
    figure="permutation throughput on a fat tree: NDP vs DCTCP vs MPTCP",
    compares="NDP on trimming switches (spraying, pull pacing) vs DCTCP on ECMP vs MPTCP "
    "(LIA, 8 subflows), a permutation of long-lived flows on a fat tree (k = 4 reduced, "
    "k = 8 full), 9000-byte packets; aggregate goodput over the host capacity",
    reduced_time="~5 s",
    full_time="~2 min",
    plot=plot_permutation,
)
def run_permutation(full: bool, seed: int) -> pd.DataFrame:
    k, duration = (8, 20.0) if full else (4, 10.0)
    seeds = [seed, seed + 1] if full else [seed]
    rows = []
    for scheme in SCHEMES:
        runs = [run_scenario(permutation_scenario(k, scheme, s, duration)) for s in seeds]
        fractions = [r.counters["goodput_fraction"] for r in runs]
        rows.append({
            "scheme": scheme,
            "k": k,
            "throughput_fraction": sum(fractions) / len(fractions),
            "worst_flow_gbps": min(float(r.flows["goodput_bps"].min()) for r in runs) / 1e9,
            "timeouts": int(sum(r.flows["timeouts"].sum() for r in runs)),
        })
    return pd.DataFrame(rows)


def incast_row(scheme: str, fan_in: int, seed: int) -> dict[str, Any]:
    res = run_scenario(incast_scenario(fan_in, scheme, seed))
    flows = res.flows
    done = flows[flows["completed"].astype(bool)]
    all_done = len(done) == len(flows)
    last_ms = float(flows["finish_s"].max() - flows["start_s"].min()) * 1e3 if all_done else math.nan
    # Every byte through the receiver's link at its line rate, with its headers.
    payload = PACKET_BYTES - (64 if scheme == "ndp" else 40)
    ideal_ms = fan_in * RESPONSE_BYTES * PACKET_BYTES / payload * 8 / 10e9 * 1e3
    queues = res.queues
    return {
        "scheme": scheme,
        "fan_in": fan_in,
        "completed": int(len(done)),
        "last_fct_ms": last_ms,
        "ideal_ms": ideal_ms,
        "slowdown": last_ms / ideal_ms,
        "timeouts": int(flows["timeouts"].sum()),
        "retransmitted_packets": int(flows["packets_retx"].sum()),
        "trimmed": int(queues["trimmed"].sum()) if "trimmed" in queues else 0,
        "drops": int(queues["drops"].sum()),
    }


def plot_incast(table: pd.DataFrame) -> Figure:
    fig = plots.line(table, "fan_in", "last_fct_ms", by="scheme",
                     xlabel="number of senders", ylabel="last response's completion (ms)",
                     title=f"Incast, 450 KB per sender ({cite.NDP_SHORT})", logx=True, logy=True)
    ax = fig.axes[0]
    ideal = table[table["scheme"] == "ndp"].sort_values("fan_in")
    ax.plot(ideal["fan_in"], ideal["ideal_ms"], color="grey", linestyle="--", linewidth=1,
            label="line rate")
    ax.legend()
    return fig


@experiment(
    name="ndp-incast",
    document=f"{cite.NDP} §6",
    figure="incast: completion time of the last response vs number of senders",
    compares="NDP on trimming switches vs DCTCP (min RTO 1 ms), n senders of a star answer "
    "one receiver with 450 KB each; the last response's completion against the receiver "
    "link's line rate, timeouts and retransmissions",
    reduced_time="~3 s",
    full_time="~1 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    fan_ins = FULL_FAN_IN if full else REDUCED_FAN_IN
    return pd.DataFrame([incast_row(s, n, seed) for s in ("ndp", "dctcp") for n in fan_ins])
