"""Collective operations on a data-center fabric: the all-reduce algorithms against
message size next to their α–β costs (Thakur, Rabenseifner and Gropp 2005; Patarasuk and
Yuan 2009; Sanders, Speck and Träff 2009, NCCL's double binary trees), a mixture-of-experts
all-to-all on ECMP and on per-packet spraying, a training job's all-reduce under
web-search background traffic (Alizadeh et al., DCTCP, SIGCOMM 2010), and htsim's own ring
all-reduce connection matrix run unchanged next to htsim's measured times.

The fabric of the first three: a k-ary fat tree (k = 4 reduced, 16 hosts; k = 8 full, 128
hosts) of 100 Gb/s links with 1 µs of delay each, 9000-byte packets. NDP runs on trimming
queues (100 packets, trimmed at 8) with host NICs that send control packets first, and
its first window is one BDP of the longest path; DCTCP on 100-packet drop-tail queues
marking at 33 packets (30 KB per 10 Gb/s, as the HPCC authors set K), minimum and
initial RTO 1 ms, SACK. The htsim experiment uses htsim's settings instead (below).

Every collective's CCT runs from its first flow's start to its last byte's arrival; its
bound (``ideal_cct_us``) is manypath's α–β bound: the same transfers, each alone on its
idle path (``docs/scenarios.md``, the collectives table).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from .. import plots
from ..runner import matrix_text, run
from . import citations as cite
from .registry import experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[3]
MATRICES = ROOT / "scenarios" / "matrices"

RATE_GBPS = 100
DELAY_US = 1.0
LINK = {"rate_gbps": RATE_GBPS, "delay_us": DELAY_US}
PACKET_BYTES = 9000
#: NDP's payload in a 9000-byte packet (its header is 64 bytes); TCP's (40-byte header).
NDP_PAYLOAD = PACKET_BYTES - 64
TCP_MSS = PACKET_BYTES - 40
#: DCTCP's marking threshold: 30 KB per 10 Gb/s (the HPCC authors' setting), in packets.
DCTCP_K_PACKETS = 33
TCP = {"mss": TCP_MSS, "rto_min_us": 1000, "rto_initial_us": 1000, "sack": True}

KiB = 1024
MiB = 1024 * KiB


def network(scheme: str) -> dict[str, Any]:
    """``[network]``: NDP's trimming queues and control-first NICs, or DCTCP's marking
    drop-tail queues."""
    if scheme == "ndp":
        return {"link": LINK, "queue": {"limit_packets": 100, "trim": {}}, "host_queue": {"priority": True}}
    if scheme == "dctcp":
        return {"link": LINK, "queue": {"limit_packets": 100, "ecn_k_packets": DCTCP_K_PACKETS}}
    raise ValueError(f"unknown scheme {scheme!r}; known: ndp, dctcp")


def scenario(name: str, k: int, scheme: str, traffic: list[dict[str, Any]], seed: int,
             duration_ms: float = 5000) -> dict[str, Any]:
    """A run on the k-ary fat tree with ``scheme``'s network and transport; it ends when
    every flow has finished."""
    doc: dict[str, Any] = {
        "name": name,
        "seed": seed,
        "duration_ms": duration_ms,
        "stop_when_done": True,
        "topology": {"fat_tree": {"k": k}},
        "network": network(scheme),
        "traffic": traffic,
    }
    if scheme == "ndp":
        doc["transports"] = {"ndp": {"cc": "ndp"}}
    else:
        doc["tcp"] = dict(TCP)
        doc["transports"] = {"dctcp": {"cc": "dctcp"}}
    return doc


def collective(op: str, algorithm: str, transport: str, size: int, **extra: Any) -> dict[str, Any]:
    return {"pattern": "collective", "collective": op, "algorithm": algorithm, "transport": transport,
            "size": {"fixed": int(size)}, **extra}


# --- α and β of the fabric -----------------------------------------------------------------------


def hops(k: int, src: int, dst: int) -> int:
    """Links between two hosts of a k-ary fat tree (k/2 hosts per edge switch, k²/4 per pod)."""
    if src // (k // 2) == dst // (k // 2):
        return 2
    if src // (k * k // 4) == dst // (k * k // 4):
        return 4
    return 6


def beta_s_per_byte(payload: int = NDP_PAYLOAD) -> float:
    """β: seconds per payload byte at the line rate, headers included."""
    return PACKET_BYTES / payload * 8 / (RATE_GBPS * 1e9)


def alpha_s(links: float, message: float, payload: int = NDP_PAYLOAD) -> float:
    """α of a path of ``links`` links for a message of ``message`` bytes: the links' delays
    and the store and forward of its first packet at each switch (``links`` − 1)."""
    first = min(float(message), payload) * beta_s_per_byte(payload)
    return links * DELAY_US * 1e-6 + (links - 1) * first


def mean_hops(k: int, pairs: Sequence[tuple[int, int]]) -> float:
    return float(np.mean([hops(k, s, d) for s, d in pairs])) if len(pairs) else 0.0


# --- 1. allreduce-algorithms ---------------------------------------------------------------------

ALLREDUCE_ALGORITHMS = ("ring", "recursive_doubling", "halving_doubling", "double_binary_tree")
TREE_CHUNKS = 8
REDUCED_SIZES = (64 * KiB, 1 * MiB, 4 * MiB)
FULL_SIZES = (64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB)

#: The cost formulas (per algorithm: formula, source).
MODEL_SOURCE = {
    "ring": f"2(N−1)(α + Sβ/N): {cite.PATARASUK_YUAN_SHORT}; {cite.THAKUR_SHORT}",
    "recursive_doubling": f"log₂N(α + Sβ): {cite.THAKUR_SHORT}",
    "halving_doubling": f"2log₂N·α + 2(N−1)/N·Sβ (Rabenseifner): {cite.THAKUR_SHORT}",
    "double_binary_tree": f"(2h + C − 1)(α + Sβ/C), h = ⌊log₂N⌋: pipelined two trees, "
    f"{cite.TWO_TREE_SHORT}; {cite.NCCL_TREES_SHORT}",
}


def model_cct_s(algorithm: str, n: int, size: float, alpha: float, beta: float,
                chunks: int = TREE_CHUNKS) -> float:
    """The textbook cost of an all-reduce of ``size`` bytes over ``n`` ranks, one α per
    message and β per byte (no γ: the reduction's computation is not simulated)."""
    lg = math.log2(n)
    if algorithm == "ring":
        return 2 * (n - 1) * (alpha + size / n * beta)
    if algorithm in ("recursive_doubling", "butterfly"):
        return lg * (alpha + size * beta)
    if algorithm == "halving_doubling":
        return 2 * lg * alpha + 2 * (n - 1) / n * size * beta
    if algorithm == "double_binary_tree":
        h = math.floor(lg)
        return (2 * h + chunks - 1) * (alpha + size / chunks * beta)
    raise ValueError(f"no model for {algorithm!r}")


def step_message(algorithm: str, n: int, size: float, chunks: int = TREE_CHUNKS) -> float:
    """The message of one step (for α's first packet)."""
    return {"ring": size / n, "recursive_doubling": size, "halving_doubling": size / n,
            "double_binary_tree": size / (2 * chunks)}.get(algorithm, size)


def crossover_bytes(table: pd.DataFrame, a: str, b: str, column: str = "cct_us") -> float:
    """The message size at which algorithm ``b`` becomes faster than ``a`` (interpolated on
    log-log axes between the sizes measured), NaN if it never does or always is."""
    pa = table[table["algorithm"] == a].set_index("size_bytes")[column]
    pb = table[table["algorithm"] == b].set_index("size_bytes")[column]
    sizes = sorted(set(pa.index) & set(pb.index))
    diff = [math.log(pb[s]) - math.log(pa[s]) for s in sizes]
    for (s0, d0), (s1, d1) in zip(zip(sizes, diff), zip(sizes[1:], diff[1:])):
        if d0 > 0 >= d1:
            x = math.log(s0) + (math.log(s1) - math.log(s0)) * d0 / (d0 - d1)
            return float(math.exp(x))
    return math.nan


def model_crossover_bytes(n: int, alpha: float, beta: float) -> float:
    """Where the ring's cost meets recursive doubling's (one α for both):
    S* = α/β · (2(N−1) − log₂N) / (log₂N − 2(N−1)/N)."""
    lg = math.log2(n)
    return alpha / beta * (2 * (n - 1) - lg) / (lg - 2 * (n - 1) / n)


def allreduce_row(k: int, algorithm: str, size: int, seed: int) -> dict[str, Any]:
    extra = {"chunks": TREE_CHUNKS} if algorithm == "double_binary_tree" else {}
    doc = scenario(f"allreduce-{algorithm}-{size}", k, "ndp",
                   [collective("allreduce", algorithm, "ndp", size, **extra)], seed)
    res = run(doc)
    c = res.collectives.iloc[0]
    flows = res.flows
    n = int(c["ranks"])
    links = mean_hops(k, list(zip(flows["src"], flows["dst"])))
    beta = beta_s_per_byte()
    alpha = alpha_s(links, step_message(algorithm, n, size))
    return {
        "k": k,
        "ranks": n,
        "algorithm": algorithm,
        "size_bytes": size,
        "completed": bool(c["completed"]),
        "cct_us": float(c["cct_s"]) * 1e6,
        "ideal_cct_us": float(c["ideal_cct_s"]) * 1e6,
        "slowdown": float(c["slowdown"]),
        "mean_links": links,
        "alpha_us": alpha * 1e6,
        "model_cct_us": model_cct_s(algorithm, n, size, alpha, beta) * 1e6,
        "model_source": MODEL_SOURCE[algorithm],
        "retransmitted_packets": int(flows["packets_retx"].sum()),
    }


def plot_allreduce(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels()
    ax = axes[0][0]
    for i, (alg, g) in enumerate(table.groupby("algorithm", sort=False)):
        g = g.sort_values("size_bytes")
        style = plots.series_style(i)
        ax.plot(g["size_bytes"], g["cct_us"], label=alg, **style)
        ax.plot(g["size_bytes"], g["ideal_cct_us"], color=style["color"], linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("all-reduce size (bytes)")
    ax.set_ylabel("completion time (µs)")
    k = int(table["k"].iloc[0])
    ax.set_title(f"All-reduce, k = {k} fat tree, NDP (dashed: α–β bound)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig


@experiment(
    name="allreduce-algorithms",
    document=f"{cite.THAKUR_SHORT}; {cite.PATARASUK_YUAN_SHORT}; {cite.TWO_TREE_SHORT}; {cite.NCCL_TREES_SHORT}",
    figure="all-reduce completion time vs size: ring, recursive doubling, halving-doubling, "
    "double binary tree, with the α–β bound",
    compares="all-reduce by ring, recursive doubling, recursive halving-doubling and NCCL's double "
    "binary tree (8 chunks) on an idle fat tree (k = 4 reduced, k = 8 full) with NDP at 100 Gb/s; "
    "CCT against manypath's α–β bound and the textbook cost formulas",
    reduced_time="~2 s",
    full_time="~30 s",
    plot=plot_allreduce,
)
def run_allreduce(full: bool, seed: int) -> pd.DataFrame:
    k, sizes = (8, FULL_SIZES) if full else (4, REDUCED_SIZES)
    return pd.DataFrame([allreduce_row(k, a, s, seed) for a in ALLREDUCE_ALGORITHMS for s in sizes])


# --- 2. alltoall-moe -----------------------------------------------------------------------------

#: (scheme label, transport): DCTCP on ECMP (a flow keeps its hashed path) and NDP spraying.
MOE_SCHEMES = (("ecmp-dctcp", "dctcp"), ("spray-ndp", "ndp"))
MOE_ALGORITHMS = ("direct", "pairwise")
#: A rank's dispatch buffer: its tokens for every expert (one N-th to each rank).
MOE_REDUCED = (4, 4 * MiB)
MOE_FULL = (8, 16 * MiB)


def uplink_imbalance(queues: pd.DataFrame) -> float:
    """The busiest upward fabric link's bytes over the mean of all upward links (edge to
    aggregation, aggregation to core): 1 when the load is spread evenly, more when flows
    collide on a hashed path."""
    node = queues["node"].astype(str)
    peer = queues["peer"].astype(str)
    up = (node.str.startswith("edge") & peer.str.startswith("agg")) | (
        node.str.startswith("agg") & peer.str.startswith("core"))
    tx = queues.loc[up, "tx_bytes"].astype(float)
    return float(tx.max() / tx.mean()) if len(tx) and tx.mean() > 0 else math.nan


def alltoall_model_s(algorithm: str, n: int, size: float, alpha: float, beta: float) -> float:
    """Direct: every NIC sends (N−1)/N of its buffer at line rate after one α (the
    bandwidth bound); pairwise: N−1 steps of one block each, (N−1)(α + Sβ/N)
    (Thakur et al. 2005)."""
    if algorithm == "direct":
        return alpha + (n - 1) / n * size * beta
    return (n - 1) * (alpha + size / n * beta)


def alltoall_row(k: int, label: str, transport: str, algorithm: str, size: int, seed: int) -> dict[str, Any]:
    doc = scenario(f"moe-{label}-{algorithm}", k, transport,
                   [collective("alltoall", algorithm, transport, size)], seed)
    res = run(doc)
    c = res.collectives.iloc[0]
    flows = res.flows
    n = int(c["ranks"])
    payload = NDP_PAYLOAD if transport == "ndp" else TCP_MSS
    beta = beta_s_per_byte(payload)
    alpha = alpha_s(mean_hops(k, list(zip(flows["src"], flows["dst"]))), size / n, payload)
    return {
        "scheme": label,
        "algorithm": algorithm,
        "k": k,
        "ranks": n,
        "size_bytes": size,
        "per_peer_bytes": size // n,
        "completed": bool(c["completed"]),
        "cct_us": float(c["cct_s"]) * 1e6,
        "ideal_cct_us": float(c["ideal_cct_s"]) * 1e6,
        "slowdown": float(c["slowdown"]),
        "model_cct_us": alltoall_model_s(algorithm, n, size, alpha, beta) * 1e6,
        "model_source": ("α + (N−1)/N·Sβ, the NIC bound" if algorithm == "direct"
                         else f"(N−1)(α + Sβ/N): {cite.THAKUR_SHORT}"),
        "timeouts": int(flows["timeouts"].sum()),
        "retransmitted_packets": int(flows["packets_retx"].sum()),
        "uplink_imbalance": uplink_imbalance(res.queues),
    }


def plot_alltoall(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels()
    ax = axes[0][0]
    mean = table.groupby(["scheme", "algorithm"], sort=False)["slowdown"].mean()
    schemes = list(dict.fromkeys(table["scheme"]))
    plots.grouped_bars(ax, schemes, [(a, [float(mean.get((s, a), math.nan)) for s in schemes])
                                     for a in MOE_ALGORITHMS])
    ax.set_ylabel("CCT / α–β bound")
    ax.set_title("Mixture-of-experts all-to-all: ECMP (DCTCP) vs spraying (NDP)")
    plots.reference_line(ax, 1.0)
    ax.legend()
    return fig


@experiment(
    name="alltoall-moe",
    document=f"{cite.THAKUR_SHORT}: the algorithms of a mixture-of-experts layer's all-to-all",
    figure="all-to-all slowdown: DCTCP on ECMP vs NDP spraying, direct and pairwise",
    compares="the all-to-all of a mixture-of-experts layer (every rank sends one N-th of its "
    "buffer to each rank; 16 ranks × 4 MiB reduced, 128 × 16 MiB full) all at once (direct) or "
    "in N−1 pairwise steps, DCTCP on ECMP vs NDP per-packet spraying; CCT against the α–β bound, "
    "timeouts and the uplinks' imbalance",
    reduced_time="~1 s",
    full_time="~15 s",
    plot=plot_alltoall,
)
def run_alltoall(full: bool, seed: int) -> pd.DataFrame:
    k, size = MOE_FULL if full else MOE_REDUCED
    seeds = [seed, seed + 1, seed + 2] if full else [seed]
    rows = [dict(alltoall_row(k, label, transport, alg, size, s), seed=s)
            for label, transport in MOE_SCHEMES for alg in MOE_ALGORITHMS for s in seeds]
    return pd.DataFrame(rows)


# --- 3. training-background ----------------------------------------------------------------------

LOADS = (0.0, 0.3, 0.6)
#: (k, ranks, buffer, iterations, compute gap µs, background arrivals until ms, seeds)
TRAINING_REDUCED = (4, 8, 4 * MiB, 4, 50.0, 40.0, 1)
TRAINING_FULL = (8, 32, 16 * MiB, 4, 100.0, 150.0, 3)
#: The training job starts after the background has been running this long.
TRAINING_START_US = 500.0


def training_scenario(k: int, load: float, with_training: bool, ranks: int, size: int, iterations: int,
                      gap_us: float, until_ms: float, seed: int) -> dict[str, Any]:
    """Web-search flows between random hosts of the whole fabric at ``load`` (Poisson,
    until ``until_ms``) and, with ``with_training``, a ring all-reduce on ``ranks`` hosts
    spread evenly over the fabric, ``iterations`` times with ``gap_us`` of compute between
    them; all on DCTCP. The background entry comes first, so it draws the same flows with
    and without the training job."""
    traffic: list[dict[str, Any]] = []
    if load > 0:
        traffic.append({"pattern": "random_pairs", "transport": "dctcp", "class": "background",
                        "size": {"cdf": "websearch"}, "arrival": "poisson", "load": load,
                        "arrivals_until_ms": until_ms})
    if with_training:
        traffic.append(collective("allreduce", "ring", "dctcp", size, **{
            "class": "training", "ranks": ranks, "placement": "strided", "iterations": iterations,
            "gap_us": gap_us, "start_us": TRAINING_START_US}))
    name = f"training-{'job' if with_training else 'alone'}-{round(load * 100)}"
    return scenario(name, k, "dctcp", traffic, seed, duration_ms=5000)


def fct_slowdowns(flows: pd.DataFrame, start_s: float, end_s: float) -> pd.Series:
    """Slowdowns (FCT over the ideal on the idle fabric) of the background flows that
    started in [start_s, end_s) and finished."""
    f = flows[(flows["class"] == "background") & (flows["start_s"] >= start_s) & (flows["start_s"] < end_s)]
    f = f[f["completed"].astype(bool)]
    return (f["fct_s"] / f["ideal_fct_s"]).astype(float)


def training_rows(k: int, load: float, ranks: int, size: int, iterations: int, gap_us: float,
                  until_ms: float, seed: int) -> dict[str, Any]:
    res = run(training_scenario(k, load, True, ranks, size, iterations, gap_us, until_ms, seed))
    c = res.collectives
    done = c[c["completed"].astype(bool)]
    train = res.flows[res.flows["class"] == "training"]
    row: dict[str, Any] = {
        "load": load,
        "seed": seed,
        "k": k,
        "ranks": ranks,
        "size_bytes": size,
        "iterations": iterations,
        "completed": int(len(done)),
        "cct_mean_us": float(done["cct_s"].mean()) * 1e6,
        "cct_max_us": float(done["cct_s"].max()) * 1e6,
        "ideal_cct_us": float(c["ideal_cct_s"].mean()) * 1e6,
        "slowdown_mean": float(done["slowdown"].mean()),
        "slowdown_max": float(done["slowdown"].max()),
        "training_timeouts": int(train["timeouts"].sum()),
        "jct_us": float(done["jct_s"].max()) * 1e6,
    }
    nan = math.nan
    row.update(bg_flows=0, bg_p50_slowdown=nan, bg_p99_slowdown=nan, bg_alone_p50_slowdown=nan,
               bg_alone_p99_slowdown=nan)
    if load > 0:
        start, end = float(c["start_s"].min()), float(c["end_s"].max())
        alone = run(training_scenario(k, load, False, ranks, size, iterations, gap_us, until_ms, seed))
        s = fct_slowdowns(res.flows, start, end)
        s0 = fct_slowdowns(alone.flows, start, end)
        row.update(bg_flows=int(len(s)), bg_p50_slowdown=float(s.median()), bg_p99_slowdown=float(s.quantile(0.99)),
                   bg_alone_p50_slowdown=float(s0.median()), bg_alone_p99_slowdown=float(s0.quantile(0.99)))
    return row


def plot_training(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels(1, 2)
    mean = table.groupby("load").mean(numeric_only=True).reset_index()
    ax = axes[0][0]
    ax.plot(mean["load"], mean["slowdown_mean"], label="mean", **plots.series_style(0))
    ax.plot(mean["load"], mean["slowdown_max"], label="worst iteration", **plots.series_style(1))
    ax.set_xlabel("background load")
    ax.set_ylabel("all-reduce CCT / α–β bound")
    ax.set_title("Training all-reduce")
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax = axes[0][1]
    bg = mean[mean["load"] > 0]
    for i, (col, label) in enumerate([("bg_p50_slowdown", "p50, with training"),
                                      ("bg_alone_p50_slowdown", "p50, alone"),
                                      ("bg_p99_slowdown", "p99, with training"),
                                      ("bg_alone_p99_slowdown", "p99, alone")]):
        ax.plot(bg["load"], bg[col], label=label, **plots.series_style(i))
    ax.set_yscale("log")
    ax.set_xlabel("background load")
    ax.set_ylabel("background FCT slowdown")
    ax.set_title("Web-search background")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fig


@experiment(
    name="training-background",
    document=f"{cite.DCTCP}: its web-search workload behind a training job's all-reduce",
    figure="training all-reduce slowdown and background FCT slowdown vs background load",
    compares="a ring all-reduce job (8 ranks × 4 MiB reduced, 32 × 16 MiB full; 4 iterations with "
    "a compute gap) on DCTCP, alone and under web-search background flows at 30% and 60% load "
    "between all hosts; iteration CCT over the α–β bound, and the background's FCT slowdown "
    "(p50, p99) with and without the job",
    reduced_time="~2 s",
    full_time="~3.5 min",
    plot=plot_training,
)
def run_training(full: bool, seed: int) -> pd.DataFrame:
    k, ranks, size, iterations, gap, until, n_seeds = TRAINING_FULL if full else TRAINING_REDUCED
    rows = [training_rows(k, load, ranks, size, iterations, gap, until, s)
            for load in LOADS for s in range(seed, seed + n_seeds)]
    return pd.DataFrame(rows)


# --- 4. htsim-matrix -----------------------------------------------------------------------------

#: htsim's settings for its NDP runs (csg-htsim `main_ndp.cpp`): 100 Gb/s, 1 µs per link,
#: 15-packet trimming queues, a 15-packet first window. htsim's packets carry 9000 bytes of
#: payload and 64 of header; manypath's NDP packets are at most 9000 bytes on the wire, so
#: they carry 8936 (flows need at most one packet more, and each packet is 0.7% shorter).
HTSIM_WINDOW_PACKETS = 15
HTSIM_QUEUE_PACKETS = 15
#: htsim's header queue: twice the data queue's bytes, in 64-byte headers.
HTSIM_HEADER_QUEUE = 2 * HTSIM_QUEUE_PACKETS * 9000 // 64
HTSIM_SIZES = (64 * KiB, 256 * KiB, 1 * MiB)
HTSIM_FILES = {64 * KiB: "ring_16n_64KiB.cm", 256 * KiB: "ring_16n_256KiB.cm", 1 * MiB: "ring_16n_1024KiB.cm"}
HTSIM_SOURCE = "htsim_ndp (Broadcom/csg-htsim 841d9e7), -strat perm; seeds 1–8 and the default 13"

#: htsim's measured CCTs (µs, last finish): its ring matrix, with the default seed (13)
#: and seeds 1–8.
HTSIM_RING_CCT_US = {
    64 * KiB: (468.3, [468.635, 468.598, 467.403, 467.231, 467.988, 467.645, 467.711, 467.389]),
    256 * KiB: (1046.8, [1050.02, 1053.71, 1045.16, 1055.43, 1045.27, 1050.43, 1044.18, 1057.17]),
    1 * MiB: (3587.1, [3573.12, 3576.24, 3585.95, 3577.68, 3588.07, 3603.58, 3578.11, 3597.68]),
}
#: htsim's per-flow FCT (min, median, max, µs) in its ring matrix's default-seed run.
HTSIM_RING_FCT_US = {64 * KiB: (10.54, 13.75, 23.32), 256 * KiB: (26.57, 30.35, 50.30),
                     1 * MiB: (89.99, 100.31, 178.26)}
#: htsim's uncontended model of the ring matrix (the longest chain of 31 flows, each its
#: one-way time plus the last ACK's return, with NDP's 15-packet window), µs.
HTSIM_RING_MODEL_US = {64 * KiB: 457.7, 256 * KiB: 998.2, 1 * MiB: 3223.0}
#: htsim's measured CCTs of manypath's own ring all-reduce (16 ranks, 16 × size) written by
#: `manypath matrix` with its receive-done triggers made send-done (htsim never fires
#: receive-done triggers): default seed, then seeds 1–8.
HTSIM_MANYPATH_RING_CCT_US = {
    64 * KiB: (449.741, [451.462, 450.609, 451.922, 451.826, 452.255, 451.473, 452.032, 452.439]),
    256 * KiB: (1018.04, [1015.47, 1010.42, 1008.79, 1012.58, 1011.0, 1015.89, 1012.22, 1013.29]),
    1 * MiB: (3449.53, [3451.68, 3444.11, 3445.27, 3464.6, 3448.43, 3452.19, 3450.42, 3443.36]),
}

HTSIM_CASES = ("htsim matrix", "manypath ring, send-done", "manypath ring")


def htsim_network() -> dict[str, Any]:
    return {"link": LINK,
            "queue": {"limit_packets": HTSIM_QUEUE_PACKETS,
                      "trim": {"threshold_packets": HTSIM_QUEUE_PACKETS, "header_queue_packets": HTSIM_HEADER_QUEUE}},
            "host_queue": {"priority": True}}


def htsim_scenario(traffic: dict[str, Any], seed: int) -> dict[str, Any]:
    """htsim's 16-host k = 4 fat tree and NDP settings, with one traffic entry."""
    return {
        "name": "htsim-matrix",
        "seed": seed,
        "duration_ms": 100,
        "stop_when_done": True,
        "topology": {"fat_tree": {"k": 4}},
        "network": htsim_network(),
        "transports": {"ndp": {"cc": "ndp", "payload_bytes": NDP_PAYLOAD,
                               "window_bytes": HTSIM_WINDOW_PACKETS * PACKET_BYTES}},
        "traffic": [traffic],
    }


def manypath_ring(size: int, seed: int) -> dict[str, Any]:
    """manypath's ring all-reduce with flows of ``size`` (a buffer of 16 × size), htsim's settings."""
    return htsim_scenario(collective("allreduce", "ring", "ndp", 16 * size), seed)


def send_done_matrix(size: int, seed: int, folder: Path) -> Path:
    """manypath's ring all-reduce as a connection matrix whose steps wait for the
    previous step's send-done (its last ACK at the sender) instead of its receive-done."""
    text = matrix_text(manypath_ring(size, seed)).replace("recv_done_trigger", "send_done_trigger")
    path = folder / f"ring_send_done_{size}.cm"
    path.write_text(text, encoding="utf-8")
    return path


def _matrix_run(path: Path, seed: int) -> pd.DataFrame:
    return run(htsim_scenario({"pattern": "matrix", "transport": "ndp", "file": str(path)}, seed)).flows


def htsim_rows(size: int, seeds: Sequence[int], folder: Path) -> list[dict[str, Any]]:
    rows = []
    for case in HTSIM_CASES:
        ccts: list[float] = []
        first: pd.DataFrame | None = None
        ideal = math.nan
        for s in seeds:
            if case == "htsim matrix":
                flows = _matrix_run(MATRICES / HTSIM_FILES[size], s)
            elif case == "manypath ring, send-done":
                flows = _matrix_run(send_done_matrix(size, s, folder), s)
            else:
                res = run(manypath_ring(size, s))
                flows = res.flows
                if math.isnan(ideal):
                    ideal = float(res.collectives["ideal_cct_s"].iloc[0]) * 1e6
            # htsim's CCT: the last flow's finish (its last ACK at the sender).
            ccts.append(float(flows["finish_s"].max() - flows["start_s"].min()) * 1e6
                        if flows["completed"].all() else math.nan)
            first = first if first is not None else flows
        assert first is not None
        fct = first["fct_s"].astype(float) * 1e6
        h = {"htsim matrix": HTSIM_RING_CCT_US, "manypath ring, send-done": HTSIM_MANYPATH_RING_CCT_US}.get(case)
        hcct, hseeds = h[size] if h else (math.nan, [math.nan])
        hfct = HTSIM_RING_FCT_US[size] if case == "htsim matrix" else (math.nan,) * 3
        row = {
            "case": case,
            "size_bytes": size,
            "flows": int(len(first)),
            "completed": int(first["completed"].sum()),
            "seeds": len(seeds),
            "cct_us": ccts[0],
            "cct_median_us": float(np.nanmedian(ccts)),
            "cct_min_us": float(np.nanmin(ccts)),
            "cct_max_us": float(np.nanmax(ccts)),
            "htsim_cct_us": hcct,
            "htsim_cct_median_us": float(np.median(hseeds + [hcct])),
            "htsim_cct_min_us": float(min(hseeds + [hcct])),
            "htsim_cct_max_us": float(max(hseeds + [hcct])),
            "diff_pct": (ccts[0] / hcct - 1) * 100,
            "fct_min_us": float(fct.min()),
            "fct_median_us": float(fct.median()),
            "fct_max_us": float(fct.max()),
            "htsim_fct_min_us": hfct[0],
            "htsim_fct_median_us": hfct[1],
            "htsim_fct_max_us": hfct[2],
            "model_cct_us": HTSIM_RING_MODEL_US[size] if case == "htsim matrix" else ideal,
            "model_source": {"htsim matrix": "uncontended chain model (htsim's run notes)",
                             "manypath ring": "manypath's α–β bound"}.get(case, ""),
            "htsim_source": HTSIM_SOURCE if h else "",
        }
        rows.append(row)
    return rows


def plot_htsim(table: pd.DataFrame) -> Figure:
    fig, axes = plots.panels()
    ax = axes[0][0]
    sizes = sorted(table["size_bytes"].unique())
    series = []
    for case, label in (("htsim matrix", "htsim's ring matrix"), ("manypath ring, send-done", "manypath's ring, send-done")):
        t = table[table["case"] == case].set_index("size_bytes")
        series.append((label, [float(t.loc[s, "cct_us"] / t.loc[s, "htsim_cct_us"]) for s in sizes]))
    plots.grouped_bars(ax, [f"{s // KiB} KiB" for s in sizes], series)
    plots.reference_line(ax, 1.0)
    ax.legend(loc="lower right")
    ax.set_ylabel("manypath's CCT / htsim's")
    ax.set_title("Ring all-reduce matrices, 16 hosts, NDP: manypath vs htsim")
    return fig


@experiment(
    name="htsim-matrix",
    document=f"{cite.NDP}: its simulator htsim's ring all-reduce connection matrix (gen_allreduce.py)",
    figure="CCT and per-flow times of htsim's ring all-reduce matrix: manypath vs htsim",
    compares="htsim's ring all-reduce matrices (16 chains of 31 flows of 64 KiB, 256 KiB, 1 MiB, "
    "each started by the previous one's send-done) run unchanged on htsim's settings (k = 4 fat "
    "tree, 100 Gb/s, 1 µs, NDP, 15-packet queues and first window), and manypath's own ring of "
    "the same flow sizes, against htsim's measured CCTs and flow times (1 seed reduced, 8 full)",
    reduced_time="~1 s",
    full_time="~2 s",
    plot=plot_htsim,
)
def run_htsim(full: bool, seed: int) -> pd.DataFrame:
    seeds = list(range(seed, seed + 8)) if full else [seed]
    with tempfile.TemporaryDirectory(prefix="manypath-htsim-") as tmp:
        rows = [r for size in HTSIM_SIZES for r in htsim_rows(size, seeds, Path(tmp))]
    return pd.DataFrame(rows)

