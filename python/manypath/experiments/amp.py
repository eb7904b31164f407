"""The AMP document's microbenchmarks (Kheirkhah and Lee, §3, §4.1 and §5.2): TCP incast
with multipath flows, the minimum window syndrome, and traffic shifting speed.

Settings follow the document and the authors' ns-3 scripts (docs: reference defaults):
a star of 10 Gbps links (5 µs each), 100-packet queues marking at K, 1400-byte segments,
initial window 1, minimum RTO 200 ms, 4 subflows per multipath flow.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import analysis
from .registry import experiment

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
    from ..plots import line

    first = table[table["size_kb"] == table["size_kb"].min()]
    return line(first, "flows", "fct_mean_ms", by="scheme", xlabel="number of flows (k)",
                ylabel="mean flow completion time (ms)", logy=True,
                title=f"Incast, {int(first['size_kb'].iloc[0])} KB, 4 subflows (AMP Fig. 2, 8)")


@experiment(
    name="amp-incast",
    document="AMP (000) §3.1 and §5.2",
    figure="Fig. 2 and Fig. 8: mean and std of FCT vs number of flows",
    compares="DCTCP, DCM, XMP, AMP (4 subflows): k flows of 128/256/512 KB join one "
    "10 Gbps bottleneck 50 µs apart, every second; FCT mean/std, timeouts",
    reduced_time="~2 s",
    full_time="~1 min",
    plot=plot_incast,
)
def run_incast(full: bool, seed: int) -> pd.DataFrame:
    from .. import run

    sizes = (128, 256, 512) if full else (128,)
    repeat = 20 if full else 3
    rows = []
    for size_kb in sizes:
        for flows in (10, 20, 30, 40):
            for scheme in SCHEMES:
                res = run(incast_scenario(scheme, flows, size_kb * 1024, repeat, seed))
                f = res.flows
                fct_ms = f["fct_s"].to_numpy(dtype=float) * 1e3
                rows.append({
                    "scheme": scheme,
                    "size_kb": size_kb,
                    "flows": flows,
                    "completed": int(f["completed"].sum()),
                    "fct_mean_ms": float(fct_ms.mean()),
                    "fct_std_ms": float(fct_ms.std()),
                    "fct_p99_ms": analysis.percentile(fct_ms, 99),
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
    from ..plots import line

    return line(table, "subflows", "ratio", by="scheme", xlabel="subflows of the multipath flow",
                ylabel="multipath / DCTCP goodput",
                title="Minimum window syndrome: 8 DCTCP flows, K = 10 (AMP Fig. 4a, 9)")


@experiment(
    name="amp-syndrome",
    document="AMP (000) §3.2 and §5.2",
    figure="Fig. 4(a) and Fig. 9: goodput of a multipath flow vs 8 DCTCP flows",
    compares="DCM, XMP, AMP with 2-8 subflows against 8 DCTCP flows at a 10 Gbps "
    "bottleneck marking at K = 10; goodput per class, Jain's index",
    reduced_time="~1 s",
    full_time="~20 s",
    plot=plot_syndrome,
)
def run_syndrome(full: bool, seed: int) -> pd.DataFrame:
    from .. import run

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
    from .. import run

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
    from ..plots import bars

    traces = table.attrs.get("traces")
    if traces is None:
        return bars(table.set_index("scheme")["shift_ms"], "traffic shifting time (ms)",
                    title="Traffic shifting (AMP Fig. 6, 11)")
    import matplotlib.pyplot as plt

    schemes = list(table["scheme"])
    fig, axes = plt.subplots(1, len(schemes), figsize=(3.6 * len(schemes), 3.2), sharey=True)
    for ax, scheme, shift in zip(np.atleast_1d(axes), schemes, table["shift_ms"]):
        t = traces[traces["scheme"] == scheme]
        for k, label in ((0, "upper path (subflow 0)"), (1, "lower path (subflow 1)")):
            s = t[t["subflow"] == k]
            ax.plot(s["ms_after_switch"], s["cwnd_bytes"] / 1400, drawstyle="steps-post", label=label)
        if not math.isnan(shift):
            ax.axvline(shift, color="grey", linestyle="--", linewidth=1)
        ax.set_title(f"{scheme.upper()}: shift {shift:.1f} ms")
        ax.set_xlabel("ms after the upper path's DCTCP flow starts")
        ax.grid(True, alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("cwnd (packets)")
    np.atleast_1d(axes)[0].legend(fontsize="small")
    fig.tight_layout()
    return fig


@experiment(
    name="amp-traffic-shifting",
    document="AMP (000) §4.1 and §5.2",
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
