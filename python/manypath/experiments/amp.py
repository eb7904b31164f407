"""The AMP document's experiments (Kheirkhah and Lee): the microbenchmarks of §3, §4.1 and
§5.2 (TCP incast with multipath flows, the minimum window syndrome, traffic shifting
speed) and the large-scale fat-tree simulations of §5.3 (distributed reads with
background traffic, the general workload of short and long flows).

Microbenchmark settings follow the document and the authors' ns-3 scripts (docs:
reference defaults): a star of 10 Gbps links (5 µs each), 100-packet queues marking at K,
1400-byte segments, initial window 1, minimum RTO 200 ms, 4 subflows per multipath flow.
The fat-tree settings are described with `fattree` below.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import analysis, plots
from ..runner import run
from .registry import experiment
from . import citations as cite

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SCHEMES = ("dctcp", "dcm", "xmp", "amp")
AMP_TCP = {"rto_min_us": 200_000, "init_cwnd_packets": 1, "mss": 1400}


def star(senders: int, k: int, traffic: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {
        "topology": {"star": {"senders": senders}},
        "network": {
            "link": {"rate_gbps": 10, "delay_us": 5},
            "queue": {"limit_packets": 100, "ecn_k_packets": k},
        },
        "tcp": AMP_TCP,
        "traffic": traffic,
        **top,
    }


def incast_scenario(scheme: str, flows: int, size: int, repeat: int, seed: int) -> dict[str, Any]:
    """`flows` flows of `size` bytes join host 0's link 50 µs apart, every second."""
    traffic = [
        {
            "pattern": "incast",
            "transport": scheme,
            "receiver": 0,
            "senders": flows,
            "stagger_us": 50,
            "size": {"fixed": size},
            "repeat": repeat,
            "interval_us": 1_000_000,
        }
    ]
    return star(flows, 10, traffic, name=f"amp-incast-{scheme}-{flows}-{size}", seed=seed,
                duration_ms=1000 * repeat + 5000)


def plot_incast(table: pd.DataFrame) -> Figure:
    first = table[table["size_kb"] == table["size_kb"].min()]
    return plots.line(first, "flows", "fct_mean_ms", by="scheme", xlabel="number of flows (k)",
                      ylabel="mean flow completion time (ms)", logy=True,
                      title=f"Incast, {int(first['size_kb'].iloc[0])} KB, 4 subflows ({cite.AMP_SHORT}, Fig. 2, 8)")


@experiment(
    name="amp-incast",
    document=f"{cite.AMP} §3.1 and §5.2",
    figure="Fig. 2 and Fig. 8: mean and std of FCT vs number of flows",
    compares="DCTCP, DCM, XMP, AMP (4 subflows): k flows of 128/256/512 KB join one "
    "10 Gbps bottleneck 50 µs apart, every second; FCT mean/std, timeouts",
    reduced_time="~2 s",
    full_time="~1 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    sizes = (128, 256, 512) if full else (128,)
    repeat = 20 if full else 3
    rows = []
    for size_kb in sizes:
        for flows in (10, 20, 30, 40):
            for scheme in SCHEMES:
                res = run(incast_scenario(scheme, flows, size_kb * 1024, repeat, seed))
                f = res.flows
                # Over every flow: one left unfinished makes the mean NaN, not lower.
                fct_ms = f["fct_s"].to_numpy(dtype=float) * 1e3
                rows.append({
                    "scheme": scheme,
                    "size_kb": size_kb,
                    "flows": flows,
                    "completed": int(f["completed"].sum()),
                    **analysis.stat_columns(fct_ms, ("mean", "std", "p99"), "fct"),
                    "timeouts": int(f["timeouts"].sum()),
                    "flows_with_timeout": int((f["timeouts"] > 0).sum()),
                    "ssr_suppressions": int(f["ssr_suppressions"].sum()),
                })
    return pd.DataFrame(rows)


def syndrome_scenario(scheme: str, subflows: int, dctcp_flows: int, k: int, duration_ms: float,
                      seed: int) -> dict[str, Any]:
    """One multipath flow with `subflows` subflows and `dctcp_flows` DCTCP flows to host 0."""
    traffic: list[dict[str, Any]] = [
        {"pattern": "pair", "src": 1, "dst": 0, "transport": "mp", "class": "multipath",
         "size": "long_lived"}
    ]
    traffic += [
        {"pattern": "pair", "src": 2 + i, "dst": 0, "transport": "dctcp", "class": "dctcp",
         "size": "long_lived"}
        for i in range(dctcp_flows)
    ]
    return star(dctcp_flows + 1, k, traffic, name=f"amp-syndrome-{scheme}-{subflows}", seed=seed,
                duration_ms=duration_ms, warmup_ms=duration_ms / 5,
                transports={"mp": {"cc": scheme, "subflows": subflows}})


def plot_syndrome(table: pd.DataFrame) -> Figure:
    return plots.line(table, "subflows", "ratio", by="scheme", xlabel="subflows of the multipath flow",
                      ylabel="multipath / DCTCP goodput",
                      title=f"Minimum window syndrome: 8 DCTCP flows, K = 10 ({cite.AMP_SHORT}, Fig. 4a, 9)")


@experiment(
    name="amp-syndrome",
    document=f"{cite.AMP} §3.2 and §5.2",
    figure="Fig. 4(a) and Fig. 9: goodput of a multipath flow vs 8 DCTCP flows",
    compares="DCM, XMP, AMP with 2-8 subflows against 8 DCTCP flows at a 10 Gbps "
    "bottleneck marking at K = 10; goodput per class, Jain's index",
    reduced_time="~1 s",
    full_time="~20 s",
    plot=plot_syndrome,
)
def run_syndrome(full: bool, seed: int) -> pd.DataFrame:
    duration = 1000.0 if full else 100.0
    rows = []
    for scheme in ("dcm", "xmp", "amp"):
        for subflows in (range(2, 9) if full else (2, 4, 8)):
            f = run(syndrome_scenario(scheme, subflows, 8, 10, duration, seed)).flows
            mp = float(f.loc[f["class"] == "multipath", "goodput_bps"].iloc[0])
            dctcp = f.loc[f["class"] == "dctcp", "goodput_bps"]
            rows.append({
                "scheme": scheme,
                "subflows": subflows,
                "multipath_gbps": mp / 1e9,
                "dctcp_mean_gbps": float(dctcp.mean()) / 1e9,
                "ratio": mp / float(dctcp.mean()) if dctcp.mean() > 0 else math.nan,
                "jain": analysis.jain_index(f["goodput_bps"].to_numpy()),
                "ssr_suppressions": int(f["ssr_suppressions"].sum()),
            })
    return pd.DataFrame(rows)


# Traffic shifting (§4.1 Fig. 5/6, §5.2 Fig. 11): senders S1, S2, S3 on leaf 0 (hosts 0-2),
# receivers D1, D2, D3 on leaf 1 (hosts 3-5); two spines, so two paths: path 0 (spine 0)
# is the upper path, path 1 (spine 1) the lower one.
SHIFT_SCHEMES = ("mptcp-beta4", "dcm", "xmp", "amp")
# "MPTCP with β = 4" (§4.1): LIA's increase with a cut by 1/4 per marked window.
MPTCP_BETA4 = {"cc": "lia", "ecn": True, "beta": 4}
SHIFT_SAMPLE_US = 100
SHIFT_WINDOW_US = 500
SHIFT_SHARE = 0.1
SHIFT_HORIZON_MS = 50.0
SHIFT_TRACE_MS = (-1.0, 15.0)


def shifting_scenario(scheme: str, phase_s: float, seed: int, mss: int = 1400) -> dict[str, Any]:
    """The multipath flow S2 -> D2 (2 subflows, one per path) from 0; DCTCP S3 -> D3 on the
    lower path during (phase, 2 phase); DCTCP S1 -> D1 on the upper path from 2 phase."""
    us = phase_s * 1e6
    horizon_us = SHIFT_HORIZON_MS * 1e3
    traffic = [
        {"pattern": "pair", "src": 1, "dst": 4, "transport": "mp", "class": "multipath",
         "size": "long_lived", "paths": [0, 1]},
        {"pattern": "pair", "src": 2, "dst": 5, "transport": "dctcp", "class": "lower",
         "size": "long_lived", "paths": [1], "start_us": us, "stop_us": 2 * us},
        {"pattern": "pair", "src": 0, "dst": 3, "transport": "dctcp", "class": "upper",
         "size": "long_lived", "paths": [0], "start_us": 2 * us},
    ]
    queue = {"limit_packets": 100, "ecn_k_packets": 10}
    return {
        "name": f"amp-shifting-{scheme}",
        "seed": seed,
        "duration_ms": (2 * us + horizon_us) / 1e3,
        "stop_when_done": False,
        "topology": {"leaf_spine": {"leaves": 2, "spines": 2, "hosts_per_leaf": 3}},
        # Hosts' NIC queues mark like the switches', so a sender's own NIC never hides a
        # backlog from ECN (the host link is as fast as a path).
        "network": {"link": {"rate_gbps": 10, "delay_us": 5}, "queue": queue, "host_queue": queue},
        "tcp": {**AMP_TCP, "mss": mss},
        "transports": {"mp": {**(MPTCP_BETA4 if scheme == "mptcp-beta4" else {"cc": scheme}),
                               "subflows": 2}},
        "traffic": traffic,
        "output": {"flow_sample_us": SHIFT_SAMPLE_US},
    }


def subflow_rates(samples: pd.DataFrame, flow_id: int) -> pd.DataFrame:
    """Per-sample delivery rate (bytes/s) of each subflow of `flow_id`, over the
    `SHIFT_WINDOW_US` before each sample, with the cwnd: columns time_s, subflow,
    rate, cwnd_bytes."""
    f = samples[samples["flow_id"] == flow_id].sort_values(["subflow", "time_s"])
    lag = max(1, SHIFT_WINDOW_US // SHIFT_SAMPLE_US)
    out = []
    for k, g in f.groupby("subflow"):
        t = g["time_s"].to_numpy(dtype=float)
        b = g["bytes_acked"].to_numpy(dtype=float)
        rate = np.full(len(t), np.nan)
        rate[lag:] = (b[lag:] - b[:-lag]) / (t[lag:] - t[:-lag])
        out.append(pd.DataFrame({"time_s": t, "subflow": int(k), "rate": rate,
                                 "cwnd_bytes": g["cwnd_bytes"].to_numpy(dtype=float)}))
    return pd.concat(out, ignore_index=True)


def shift_time_ms(rates: pd.DataFrame, switch_s: float, horizon_ms: float = SHIFT_HORIZON_MS,
                  share: float = SHIFT_SHARE) -> float:
    """Time after `switch_s` until the upper subflow (subflow 0)'s share of the connection's
    delivery rate falls below `share` and stays below it until `horizon_ms` after the
    switch; NaN if it never does."""
    wide = rates.pivot(index="time_s", columns="subflow", values="rate")
    wide = wide[(wide.index > switch_s) & (wide.index <= switch_s + horizon_ms / 1e3 + 1e-9)]
    total = wide.sum(axis=1)
    upper_share = (wide[0] / total.where(total > 0)).to_numpy()
    times = wide.index.to_numpy(dtype=float)
    above = ~(upper_share < share)
    if above[-1]:
        return math.nan
    # Shifting is done from the sample after the last one at or above the share (the rate
    # of a sample covers the window before it, so it ends SHIFT_WINDOW_US earlier).
    last = np.flatnonzero(above)
    first_below = times[last[-1] + 1] if len(last) else times[0]
    return max(0.0, (first_below - switch_s) * 1e3 - SHIFT_WINDOW_US / 1e3)


def shifting_row(scheme: str, phase_s: float, seed: int) -> tuple[dict[str, Any], pd.DataFrame]:
    res = run(shifting_scenario(scheme, phase_s, seed))
    switch = 2 * phase_s
    rates = subflow_rates(res.flow_samples, 0)
    wide = rates.pivot(index="time_s", columns="subflow", values="rate")
    before = wide[(wide.index > switch - 0.01) & (wide.index <= switch)]
    after = wide[(wide.index > switch + 0.03) & (wide.index <= switch + SHIFT_HORIZON_MS / 1e3)]
    cwnd = rates.pivot(index="time_s", columns="subflow", values="cwnd_bytes")
    upper_cwnd = cwnd[cwnd.index > switch][0]
    floor = 2 * 1400
    at_floor = upper_cwnd[upper_cwnd <= floor]
    row = {
        "scheme": scheme,
        "shift_ms": shift_time_ms(rates, switch),
        "cwnd_floor_ms": (float(at_floor.index[0]) - switch) * 1e3 if len(at_floor) else math.nan,
        "upper_share_before": float(before[0].sum() / before.sum(axis=1).sum()),
        "upper_share_after": float(after[0].sum() / after.sum(axis=1).sum()),
        "mp_gbps_after": float(after.sum(axis=1).mean() * 8 / 1e9),
        "upper_cwnd_at_switch_kb": float(cwnd[cwnd.index <= switch][0].iloc[-1] / 1e3),
    }
    lo, hi = SHIFT_TRACE_MS
    trace = rates[(rates["time_s"] >= switch + lo / 1e3) & (rates["time_s"] <= switch + hi / 1e3)].copy()
    trace["scheme"] = scheme
    trace["ms_after_switch"] = (trace["time_s"] - switch) * 1e3
    return row, trace


def plot_shifting(table: pd.DataFrame) -> Figure:
    """Per-subflow congestion windows around the switch (Fig. 6/11), one panel per scheme,
    from the traces `run_shifting` keeps in ``table.attrs``; without them, the shift times."""
    traces = table.attrs.get("traces")
    if traces is None:
        return plots.bars(table.set_index("scheme")["shift_ms"], "traffic shifting time (ms)",
                          title=f"Traffic shifting ({cite.AMP_SHORT}, Fig. 6, 11)")
    schemes = list(table["scheme"])
    fig, axes = plots.panels(1, len(schemes), size=(3.6 * len(schemes), 3.2), sharey=True)
    for ax, scheme, shift in zip(axes[0], schemes, table["shift_ms"]):
        t = traces[traces["scheme"] == scheme]
        for k, label in ((0, "upper path (subflow 0)"), (1, "lower path (subflow 1)")):
            s = t[t["subflow"] == k]
            ax.plot(s["ms_after_switch"], s["cwnd_bytes"] / 1400, drawstyle="steps-post", label=label)
        if not math.isnan(shift):
            ax.axvline(shift, color="grey", linestyle="--", linewidth=1)
        ax.set_title(f"{scheme.upper()}: shift {shift:.1f} ms")
        ax.set_xlabel("ms after the upper path's DCTCP flow starts")
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("cwnd (packets)")
    axes[0, 0].legend(fontsize="small")
    return fig


# --- Large-scale fat-tree experiments (§5.3, Fig. 12-14) ---------------------------------
#
# The authors' fat-tree script (reference defaults): k = 8 (128 servers), 1 Gbps links of
# 20 µs, 100-packet queues marking at K = 10 on every device (hosts included), 1400-byte
# segments, initial window 1, minimum RTO 200 ms, and a 64 KB receive window per subflow.

FATTREE_RATE_GBPS = 1.0
FATTREE_DELAY_US = 20
RCV_WND_BYTES = 65536
MULTIPATH = ("amp", "dcm", "xmp")


def fattree(k: int, rate_gbps: float, rcv_wnd_bytes: int | None, traffic: list[dict[str, Any]],
            transports: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A k-ary fat tree with the AMP document's links and queues; `rcv_wnd_bytes` None
    lifts the receive-window cap."""
    queue = {"limit_packets": 100, "ecn_k_packets": 10}
    tcp = dict(AMP_TCP) if rcv_wnd_bytes is None else {**AMP_TCP, "rcv_wnd_bytes": rcv_wnd_bytes}
    return {
        "topology": {"fat_tree": {"k": k}},
        "network": {
            "link": {"rate_gbps": rate_gbps, "delay_us": FATTREE_DELAY_US},
            "queue": queue,
            "host_queue": queue,
        },
        "tcp": tcp,
        "transports": transports,
        "traffic": traffic,
        "stop_when_done": False,
        **top,
    }


def long_transport(scheme: str, subflows: int) -> dict[str, Any]:
    """The transport of the long (background) flows: DCTCP, or a multipath scheme."""
    return {"cc": "dctcp"} if scheme == "dctcp" else {"cc": scheme, "subflows": subflows}


def fattree_incast_scenario(
    scheme: str,
    subflows: int,
    *,
    duration_ms: float,
    background_mean_bytes: float,
    k: int = 8,
    rate_gbps: float = FATTREE_RATE_GBPS,
    parallel: int = 8,
    fanout: int = 10,
    request_bytes: int = 2048,
    reply_bytes: int = 65536,
    think_us: float = 0.0,
    rcv_wnd_bytes: int | None = RCV_WND_BYTES,
    seed: int = 1,
) -> dict[str, Any]:
    """Fig. 12: `parallel` closed loops of distributed reads over DCTCP (a client sends
    `request_bytes` to `fanout` random servers, each answers `reply_bytes`), while every
    host sends Pareto(1.5) long flows back to back to random hosts over `scheme`."""
    duration_s = duration_ms / 1e3
    # Enough jobs and background flows to outlast the run: a job cannot end before the
    # client's link has carried its answers, a long flow not before its host's link has
    # carried the Pareto minimum (mean/3 at shape 1.5).
    min_jct_s = fanout * reply_bytes * 8 / (rate_gbps * 1e9)
    jobs = math.ceil(duration_s / min_jct_s) + 1
    min_long_s = background_mean_bytes / 3 * 8 / (rate_gbps * 1e9)
    restarts = math.ceil(duration_s / min_long_s) + 1
    reads: dict[str, Any] = {
        "pattern": "jobs", "transport": "dctcp", "class": "reply",
        "size": {"fixed": reply_bytes}, "repeat": jobs,
        "jobs": {"parallel": parallel, "fanout": fanout, "request_bytes": request_bytes},
    }
    if think_us > 0:
        reads["interval_us"] = think_us
    background = {
        "pattern": "each_to_random", "transport": "long", "class": "background",
        "size": {"pareto": {"mean": background_mean_bytes, "shape": 1.5}},
        "repeat": restarts, "closed_loop": True,
    }
    return fattree(k, rate_gbps, rcv_wnd_bytes, [reads, background],
                   {"long": long_transport(scheme, subflows)},
                   name=f"amp-fattree-incast-{scheme}-{subflows}", seed=seed,
                   duration_ms=duration_ms)


def job_completion(flows: pd.DataFrame, after_s: float = 0.0) -> pd.DataFrame:
    """Per job that started at or after `after_s`: its answers and JCT (see
    :func:`analysis.job_stats`)."""
    jobs = flows[flows["job"] >= 0]
    starts = jobs.groupby("job")["start_s"].min()
    keep = starts.index[starts >= after_s]
    return analysis.job_stats(jobs[jobs["job"].isin(keep)])


JCT_QUANTILES = (10, 25, 50, 75, 90, 99)


def plot_fattree_incast(table: pd.DataFrame) -> Figure:
    """Fig. 12: one panel per subflow count, each the JCT CDF drawn through the table's
    percentiles, the DCTCP baseline in every panel."""
    counts = sorted(int(s) for s in table.loc[table["scheme"] != "dctcp", "subflows"].unique())
    fig, panels = plots.panels(1, max(len(counts), 1), size=(12, 4), sharey=True)
    axes = panels[0]
    qs = [0.0, *(q / 100 for q in JCT_QUANTILES), 1.0]
    for ax, n in zip(axes, counts):
        rows = table[(table["scheme"] == "dctcp") | (table["subflows"] == n)]
        for _, r in rows.iterrows():
            xs = [r["jct_min_ms"], *(r[f"jct_p{q}_ms"] for q in JCT_QUANTILES), r["jct_max_ms"]]
            ax.plot(xs, qs, marker=".", label=str(r["scheme"]))
        ax.set_xscale("log")
        ax.set_title(f"{n} subflows")
        ax.set_xlabel("job completion time (ms)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("fraction of jobs")
    axes[0].legend(title="background", fontsize="small")
    return fig


@experiment(
    name="amp-traffic-shifting",
    document=f"{cite.AMP} §4.1 and §5.2",
    figure="Fig. 6 and Fig. 11: per-subflow cwnd around the switch, traffic shifting time",
    compares="MPTCP with beta = 4, DCM, XMP, AMP (2 subflows pinned to the two paths of a 2x2 leaf-spine): a "
    "DCTCP flow on the lower path, then one on the upper path; time until the multipath "
    "flow's upper subflow carries < 10% of its traffic",
    reduced_time="~3 s",
    full_time="~20 s",
    plot=plot_shifting,
)
def run_shifting(full: bool, seed: int) -> pd.DataFrame:
    phase = 1.0 if full else 0.2
    rows, traces = [], []
    for scheme in SHIFT_SCHEMES:
        row, trace = shifting_row(scheme, phase, seed)
        rows.append(row)
        traces.append(trace)
    table = pd.DataFrame(rows)
    table.attrs["traces"] = pd.concat(traces, ignore_index=True)
    return table


@experiment(
    name="amp-fattree-incast",
    document=f"{cite.AMP} §5.3, incast with background traffic",
    figure="Fig. 12: CDF of job completion times with 4, 6, 8 subflows",
    compares="8 closed loops of DCTCP distributed reads (2 KB requests to 10 servers, "
    "64 KB answers) on a k = 8 fat tree, each host sending Pareto background flows back "
    "to back over DCTCP, AMP, DCM or XMP (4/6/8 subflows); JCT mean, p50, p90, p99",
    reduced_time="~1 min",
    full_time="~1.5 h (10 runs of 5-12 min, 2.3 GB each)",
    plot=plot_fattree_incast,
)
def run_fattree_incast(full: bool, seed: int) -> pd.DataFrame:
    # Full: the document's 192 MB mean and a run long enough for ~1000 long flows to
    # finish; reduced: 3 MB flows for 0.5 s (so background flows restart many times).
    duration_ms, mean_bytes = (30_000.0, 192e6) if full else (500.0, 3e6)
    cases = [("dctcp", 1)] + [(s, n) for n in (4, 6, 8) for s in MULTIPATH]
    return pd.DataFrame([incast_row(s, n, duration_ms, mean_bytes, seed) for s, n in cases])


def incast_row(scheme: str, subflows: int, duration_ms: float, mean_bytes: float,
               seed: int) -> dict[str, Any]:
    """One row of the `amp-fattree-incast` table: the JCTs of the jobs that start after
    the first tenth of the run, with `scheme` carrying the background."""
    res = run(fattree_incast_scenario(scheme, subflows, duration_ms=duration_ms,
                                      background_mean_bytes=mean_bytes, seed=seed))
    f = res.flows
    jct = job_completion(f, duration_ms / 1e3 / 10)["jct_ms"].to_numpy(dtype=float)
    done = jct[~np.isnan(jct)]
    job_flows = f[f["job"] >= 0]
    bg = f[f["class"] == "background"]
    row: dict[str, Any] = {
        "scheme": scheme,
        "subflows": subflows,
        "jobs": int(done.size),
        **analysis.stat_columns(done, ("mean", *(f"p{q}" for q in JCT_QUANTILES), "min", "max"), "jct"),
        "job_timeouts": int(job_flows["timeouts"].sum()),
        "background_done": int(bg["completed"].sum()),
        "background_gbps_per_host": float(bg["bytes_acked"].sum()) * 8
        / (duration_ms / 1e3) / 1e9 / 128,
        "ssr_suppressions": int(bg["ssr_suppressions"].sum()),
    }
    return row


def permutation_pairs(hosts: int, seed: int) -> list[tuple[int, int]]:
    """A random permutation traffic matrix: every host sends to one other host and
    receives from one (a derangement drawn from `seed`)."""
    rng = np.random.default_rng(seed)
    while True:
        perm = rng.permutation(hosts)
        if not (perm == np.arange(hosts)).any():
            return [(int(s), int(d)) for s, d in enumerate(perm)]


def fattree_general_scenario(
    scheme: str,
    subflows: int,
    *,
    duration_ms: float,
    workload: str = "uniform",
    k: int = 8,
    rate_gbps: float = FATTREE_RATE_GBPS,
    short_rate_per_s: float | None = None,
    rcv_wnd_bytes: int | None = RCV_WND_BYTES,
    seed: int = 1,
) -> dict[str, Any]:
    """Fig. 13 and 14 on a permutation traffic matrix (each host at most one sending and
    one receiving peer).

    `uniform` (Fig. 13): half the pairs, drawn at random, carry a long-lived flow over
    `scheme` for the whole run; the other half carry short DCTCP flows of 1 KB–1 MB
    (uniform), Poisson at `short_rate_per_s` in total (default 256/s, the authors'
    script: one arrival process over all short pairs), until 0.2 s before the end (at
    most a fifth of the run).

    `datamining` (Fig. 14): every pair carries Poisson flows, 780 µs apart on average
    (`short_rate_per_s` per pair overrides it), 127 per host, sized by the data-mining
    distribution; flows of at least 100 KB are long and use `scheme`, the others DCTCP.
    """
    pairs = permutation_pairs(k**3 // 4, seed)
    traffic: list[dict[str, Any]] = []
    if workload == "uniform":
        rng = np.random.default_rng([seed, 1])
        long = set(rng.choice(len(pairs), size=len(pairs) // 2, replace=False).tolist())
        shorts = [p for i, p in enumerate(pairs) if i not in long]
        rate = (short_rate_per_s or 256.0) / len(shorts)
        until_us = duration_ms * 1e3 - min(200e3, duration_ms * 1e3 / 5)
        for i, (src, dst) in enumerate(pairs):
            if i in long:
                traffic.append({"pattern": "pair", "src": src, "dst": dst, "transport": "long",
                                "class": "long", "size": "long_lived"})
            else:
                traffic.append({"pattern": "pair", "src": src, "dst": dst, "transport": "dctcp",
                                "class": "short",
                                "size": {"uniform": {"min": 1024, "max": 1024 * 1024}},
                                "arrival": "poisson", "rate_per_s": rate, "until_us": until_us})
        warmup_ms = duration_ms / 10
    elif workload == "datamining":
        rate = short_rate_per_s or 1e6 / 780
        for src, dst in pairs:
            traffic.append({"pattern": "pair", "src": src, "dst": dst, "transport": "dctcp",
                            "class": "short", "size": {"cdf": "datamining"},
                            "arrival": "poisson", "rate_per_s": rate, "flows": len(pairs) - 1,
                            "size_split": {"at_bytes": 100 * 1024, "transport": "long",
                                           "class": "long"}})
        warmup_ms = 0.0
    else:
        raise ValueError(f"unknown workload {workload!r} (uniform or datamining)")
    return fattree(k, rate_gbps, rcv_wnd_bytes, traffic, {"long": long_transport(scheme, subflows)},
                   name=f"amp-fattree-general-{workload}-{scheme}-{subflows}", seed=seed,
                   duration_ms=duration_ms, warmup_ms=warmup_ms)


def plot_fattree_general(table: pd.DataFrame) -> Figure:
    """Fig. 13 and 14: short-flow FCT (p90, p99) per long-flow scheme and workload, the
    long flows' goodput, and the mean utilization per tier."""
    fig, axes = plots.panels(1, 3, size=(12, 4))
    ax_fct, ax_good, ax_util = axes[0]
    schemes = list(dict.fromkeys(table["scheme"]))

    def by_scheme(workload: str) -> pd.DataFrame:
        return table[table["workload"] == workload].set_index("scheme").reindex(schemes)

    plots.grouped_bars(ax_fct, schemes, [(f"{w} {q}", by_scheme(w)[f"short_fct_{q}_ms"])
                                         for w in dict.fromkeys(table["workload"]) for q in ("p90", "p99")])
    ax_fct.set_ylabel("short-flow FCT (ms)")
    ax_fct.legend(fontsize="small")
    uni = by_scheme("uniform")
    plots.grouped_bars(ax_good, schemes, [(None, uni["long_goodput_gbps"])])
    ax_good.set_ylabel("mean long-flow goodput (Gbit/s), uniform")
    plots.grouped_bars(ax_util, schemes, [(tier, uni[f"util_{tier}"]) for tier in ("edge_agg", "agg_core")])
    ax_util.set_ylabel("mean link utilization, uniform")
    ax_util.legend(fontsize="small")
    for ax in axes[0]:
        ax.grid(True, axis="y", alpha=0.3)
    return fig


@experiment(
    name="amp-fattree-general",
    document=f"{cite.AMP} §5.3, general workload",
    figure="Fig. 13 (short FCT, long goodput, utilization) and Fig. 14 (data mining FCT)",
    compares="k = 8 fat tree, permutation matrix: long flows over DCTCP, AMP, DCM or XMP "
    "(4 subflows) with short DCTCP flows (uniform 1 KB-1 MB, or data mining < 100 KB); "
    "short-flow FCT, long-flow goodput, utilization per tier",
    reduced_time="~1 min",
    full_time="~6 min",
    plot=plot_fattree_general,
)
def run_fattree_general(full: bool, seed: int) -> pd.DataFrame:
    # Full: the document's 10 s; the data-mining flows all arrive within ~0.1 s, so its
    # run ends when most short flows are long done.
    durations = {"uniform": 10_000.0 if full else 600.0, "datamining": 1_000.0 if full else 150.0}
    return pd.DataFrame([
        general_row(workload, scheme, 4, duration_ms, seed)
        for workload, duration_ms in durations.items()
        for scheme in ("dctcp", *MULTIPATH)
    ])


def general_row(workload: str, scheme: str, subflows: int, duration_ms: float,
                seed: int) -> dict[str, Any]:
    """One row of the `amp-fattree-general` table: one workload, one long-flow scheme."""
    res = run(fattree_general_scenario(scheme, subflows, duration_ms=duration_ms,
                                       workload=workload, seed=seed))
    f, q = res.flows, res.queues
    short = f[f["class"] == "short"]
    fct = analysis.completed_fct_ms(short)
    long = f[f["class"] == "long"]
    switch = q[q["node_kind"] == "switch"]
    row: dict[str, Any] = {
        "workload": workload,
        "scheme": scheme,
        "subflows": 1 if scheme == "dctcp" else subflows,
        "short_flows": len(short),
        "short_done": int(fct.size),
        **analysis.stat_columns(fct, ("mean", "p90", "p99"), "short_fct"),
        "short_timeouts": int(short["timeouts"].sum()),
        "long_flows": len(long),
        "long_goodput_gbps": float(long["goodput_bps"].mean()) / 1e9,
    }
    for tier in ("edge_agg", "agg_core"):
        row[f"util_{tier}"] = float(switch.loc[switch["tier"] == tier, "utilization"].mean())
    return row
