"""Figures from run and sweep tables (matplotlib, no display needed).

Every function takes the DataFrames of :class:`~manypath.Results` or
:class:`~manypath.SweepResults` and returns a Figure; :func:`save` writes it as PNG and
SVG. Grouping columns (``by``) can be any column, including a sweep's parameter columns.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
import pandas as pd

from . import analysis

if TYPE_CHECKING:
    from matplotlib.figure import Figure

GroupBy = Union[str, Sequence[str], None]
SIZE = (6.4, 4.0)


def _figure() -> tuple[Figure, Any]:
    fig, axes = panels()
    return fig, axes[0, 0]


def panels(rows: int = 1, cols: int = 1, *, size: tuple[float, float] = SIZE,
           sharey: bool = False) -> tuple[Figure, np.ndarray]:
    """A figure of ``rows`` × ``cols`` axes (a 2-D array, whatever the shape), laid out
    so that titles, labels and legends do not overlap."""
    # The object API, not pyplot: no global state, no GUI backend, safe in worker processes.
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=100, layout="constrained")
    return fig, fig.subplots(rows, cols, sharey=sharey, squeeze=False)


def reference_line(ax: Any, y: float, label: Optional[str] = None, x: float = 0.0) -> None:
    """A grey dashed horizontal line at ``y`` (a baseline or a limit), named by ``label``
    just above it at ``x``."""
    ax.axhline(y, color="grey", linestyle="--", linewidth=1)
    if label:
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(0, 4), fontsize="small",
                    color="grey")


def grouped_bars(ax: Any, groups: Sequence[str],
                 series: Sequence[tuple[Optional[str], Sequence[float]]]) -> None:
    """Bars side by side in each group, one per series (``(label, one value per group)``),
    with each group's name under the middle of its bars."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for i, (label, values) in enumerate(series):
        ax.bar(x + i * width, values, width, label=label)
    ax.set_xticks(x + 0.4 - width / 2, groups)


#: Marker and line style of the i-th series: a line hidden under another (two schemes
#: that behave alike) still shows its markers, and the figure reads in black and white.
STYLES: tuple[dict[str, Any], ...] = (
    {"marker": "o", "linestyle": "-"},
    {"marker": "s", "linestyle": "--", "fillstyle": "none"},
    {"marker": "^", "linestyle": "-."},
    {"marker": "D", "linestyle": ":", "fillstyle": "none"},
    {"marker": "v", "linestyle": "-"},
    {"marker": "P", "linestyle": "--"},
    {"marker": "X", "linestyle": "-."},
    {"marker": "*", "linestyle": ":"},
)


def series_style(i: int) -> dict[str, Any]:
    """Keyword arguments of ``ax.plot`` for the i-th series: colour, marker, line style;
    markers shrink a little with i so that coinciding points stay visible."""
    style = dict(STYLES[i % len(STYLES)])
    style.update(color=f"C{i % 10}", markersize=max(7.5 - 0.6 * (i % len(STYLES)), 4.0))
    return style


def log_axis(ax: Any, which: str = "x", values: Optional[Any] = None, *, minor_labels: bool = True) -> None:
    """A log axis labelled in plain numbers (0.125, 2, 40). Minor ticks are labelled only
    when the axis spans less than about a decade (and not at all with ``minor_labels``
    off, e.g. when the major ticks are set by hand), so labels never pile up.

    When ``values`` (what the axis will show) contain zeros, which a log axis cannot
    place, the axis is symmetric-log instead: linear from 0 up to the decade below the
    smallest positive value and logarithmic above, with 0 a labelled tick, so a zero is
    drawn as zero, never as a small made-up value."""
    from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    set_scale = ax.set_xscale if which == "x" else ax.set_yscale
    a = np.asarray([] if values is None else values, dtype=float)
    a = a[~np.isnan(a)]
    if a.size and (a == 0).any() and (a > 0).any():
        threshold = 10.0 ** math.floor(math.log10(float(a[a > 0].min())))
        set_scale("symlog", linthresh=threshold, linscale=0.4)
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
        # Nothing is negative: end just below zero (room for the markers at 0), not at the
        # mirror image of the data that autoscaling would give.
        (ax.set_xlim if which == "x" else ax.set_ylim)(-0.5 * threshold, None)
        return
    class Plain(LogFormatter):
        # LogFormatter decides which ticks get a label; the label is the plain number.
        def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
            return f"{x:g}"

    set_scale("log")
    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1, 0.4))
                             if minor_labels else NullFormatter())


#: Readable axis labels of the sweep parameters and columns that figures plot most.
PARAM_LABELS: dict[str, str] = {
    "load": "offered load",
    "traffic.0.load": "offered load",
    "traffic.1.load": "offered load (second traffic entry)",
    "network.queue.ecn_k_packets": "ECN marking threshold K (packets)",
    "network.queue.limit_packets": "queue limit (packets)",
    "network.queue.limit_bytes": "queue limit (bytes)",
    "network.link.rate_gbps": "link rate (Gbit/s)",
    "network.link.delay_us": "link delay (µs)",
    "traffic.0.senders": "senders",
    "traffic.0.subflows": "subflows",
    "duration_ms": "simulated time (ms)",
    "tcp.rto_min_us": "minimum RTO (µs)",
    "tcp.init_cwnd_packets": "initial window (packets)",
    "topology.fat_tree.k": "fat-tree k",
    "seed": "seed",
}


def param_label(path: str) -> str:
    """An axis label for a sweep parameter path: the known ones by name ("traffic.0.load"
    → "offered load"), others by their last part with the rest in parentheses
    ("transports.mp.subflows" → "subflows (transports.mp)")."""
    if path in PARAM_LABELS:
        return PARAM_LABELS[path]
    if "." not in path:
        return path.replace("_", " ")
    head, last = path.rsplit(".", 1)
    short = PARAM_LABELS.get(last, last.replace("_", " "))
    return f"{short} ({head})"


def _groups(df: pd.DataFrame, by: GroupBy) -> list[tuple[str, pd.DataFrame]]:
    if by is None:
        return [("all", df)]
    keys = [by] if isinstance(by, str) else list(by)
    out = []
    for name, g in df.groupby(keys if len(keys) > 1 else keys[0], sort=True):
        values = name if isinstance(name, tuple) else (name,)
        label = ", ".join(f"{k}={v}" if len(keys) > 1 or not isinstance(by, str) else str(v)
                          for k, v in zip(keys, values))
        out.append((label, g))
    return out


def _cdf(ax: Any, values: np.ndarray, label: str) -> None:
    values = np.sort(values[~np.isnan(values)])
    if values.size == 0:
        return
    y = np.arange(1, values.size + 1) / values.size
    ax.step(values, y, where="post", label=label)


def _spans_decades(values: np.ndarray) -> bool:
    # A log axis over less than a decade shows no labelled tick worth reading.
    values = values[~np.isnan(values)]
    return values.size > 0 and bool((values > 0).all()) and float(values.max() / values.min()) >= 10


def _legend(ax: Any, title: Optional[str], n: int) -> None:
    if n > 1:
        ax.legend(title=title, fontsize="small")


def fct_cdf(flows: pd.DataFrame, by: GroupBy = "class", *, logx: bool = True) -> Figure:
    """CDF of the flow completion times (ms) of the completed measured flows, one line per
    group, each labelled with how many of its flows finished, started and were generated
    (the CDF says nothing of the flows still running at the end)."""
    fig, ax = _figure()
    groups = _groups(flows, by)
    for label, g in groups:
        counts = analysis.flow_counts(g)
        done = analysis.measured_fct(g)["fct_s"].to_numpy(dtype=float) * 1e3
        _cdf(ax, done, f"{label}: {counts['completed']:,} / {counts['started']:,} / {counts['flows']:,}")
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of finished flows")
    ax.set_ylim(0, 1.02)
    if logx and _spans_decades(analysis.measured_fct(flows)["fct_s"].to_numpy(dtype=float)):
        log_axis(ax, "x")
    ax.grid(True, alpha=0.3)
    title = by if isinstance(by, str) else "flows"
    ax.legend(title=f"{title}: finished / started / generated", fontsize="small", title_fontsize="small")
    return fig


def fct_vs_load(
    flows: pd.DataFrame, load: str, by: GroupBy = None, *, stats: Sequence[str] = ("mean", "p99"),
    run: str = "run_id", level: float = analysis.CI_LEVEL, method: str = "t",
) -> Figure:
    """FCT statistics (ms) against the offered load column ``load`` (e.g. the sweep
    parameter ``traffic.0.load``), one line per group and statistic, over the completed
    measured flows.

    With several runs (seeds) per point (a ``run`` column), each point is the mean over
    the runs of the per-run statistic and its bar the ``level`` confidence interval over
    the runs (:func:`analysis.mean_ci`); with one run, the statistic of its flows. On a
    log axis (FCTs spanning a decade) an interval reaching below the axis floor, the
    decade under the smallest point (with 2 seeds a Student-t interval often reaches
    below zero), is clipped there; the legend says so and gives n, the seeds per point."""
    fig, ax = _figure()
    groups = _groups(flows, by)
    keys = [load, run] if run in flows.columns else [load]
    lines = []
    runs: set[int] = set()
    for label, g in groups:
        per_run = analysis.fct_stats(g, by=keys).reset_index()
        for stat in stats:
            col = f"fct_{stat}_ms"
            if col not in per_run.columns:
                per_run[col] = [analysis.percentile(analysis.measured_fct(part)["fct_s"] * 1e3, float(stat[1:]))
                                for _, part in g.groupby(keys, sort=True)]
            agg = analysis.seed_aggregate(per_run, load, [col], level, method)
            low, high = agg[f"{col}_ci_low"].to_numpy(dtype=float), agg[f"{col}_ci_high"].to_numpy(dtype=float)
            runs.update(int(n) for n, lo in zip(agg["runs"], low) if not math.isnan(lo))
            lines.append((f"{stat}" if by is None else f"{label} {stat}", agg.index.to_numpy(dtype=float),
                          agg[col].to_numpy(dtype=float), low, high))
    done = analysis.measured_fct(flows)["fct_s"].to_numpy(dtype=float)
    logy = _spans_decades(done)
    means = np.concatenate([ys for _, _, ys, _, _ in lines]) if lines else np.array([])
    positive = means[means > 0]
    floor = 10.0 ** math.floor(math.log10(float(positive.min()))) if logy and positive.size else None
    clipped = False
    for i, (name, xs, ys, low, high) in enumerate(lines):
        style = series_style(i)
        if np.isfinite(low).any():
            if floor is not None:
                clipped |= bool((low < floor).any())
                low = np.where(np.isnan(low), low, np.maximum(low, floor))
            err = np.vstack([np.nan_to_num(ys - low), np.nan_to_num(high - ys)])
            ax.errorbar(xs, ys, yerr=err, capsize=3, label=name, **style)
        else:
            ax.plot(xs, ys, label=name, **style)
    ax.set_xlabel(param_label(load))
    ax.set_ylabel("flow completion time (ms)")
    if logy:
        log_axis(ax, "y")
        if floor is not None:
            ax.set_ylim(bottom=floor)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", title=_ci_note(runs, level, method, clipped))
    return fig


def _ci_note(runs: set[int], level: float, method: str, clipped: bool) -> Optional[str]:
    """The legend's title for confidence-interval bars over ``runs`` seeds per point
    (None: no point has an interval)."""
    if not runs:
        return None
    name = "Student-t" if method == "t" else "bootstrap"
    n = f"{min(runs)}" if len(runs) == 1 else f"{min(runs)}–{max(runs)}"
    note = f"bars: {level:.0%} CI over seeds ({name}, n = {n})"
    return note + "\nclipped at the axis floor" if clipped else note


def bars(values: pd.Series, ylabel: str, *, title: Optional[str] = None, ylim: Optional[tuple[float, float]] = None,
         low: Optional[pd.Series] = None, high: Optional[pd.Series] = None) -> Figure:
    """One bar per index entry; with ``low`` and ``high`` (e.g. a confidence interval,
    same index) an error bar on each."""
    fig, ax = _figure()
    labels = [str(i) for i in values.index]
    ys = values.to_numpy(dtype=float)
    err = None
    if low is not None and high is not None:
        err = np.vstack([np.nan_to_num(ys - low.reindex(values.index).to_numpy(dtype=float)),
                         np.nan_to_num(high.reindex(values.index).to_numpy(dtype=float) - ys)])
    ax.bar(range(len(values)), ys, color="C0", yerr=err, capsize=4 if err is not None else 0)
    ax.set_xticks(range(len(values)), labels, rotation=30 if max(map(len, labels), default=0) > 8 else 0,
                  ha="right" if max(map(len, labels), default=0) > 8 else "center")
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def goodput_bars(flows: pd.DataFrame, duration_s: float, by: str = "class") -> Figure:
    """Goodput (Gbit/s) per group over a run of ``duration_s`` simulated seconds."""
    return bars(analysis.goodput_by(flows, duration_s, by), "goodput (Gbit/s)")


def fairness_bars(flows: pd.DataFrame, by: str = "class", value: str = "goodput_bps") -> Figure:
    """Jain's fairness index of the flows' ``value`` within each group."""
    jain = flows.groupby(by)[value].apply(lambda v: analysis.jain_index(v.fillna(0)))
    return bars(jain, "Jain's fairness index", ylim=(0, 1.05))


def queue_cdf(
    queues: pd.DataFrame, column: str = "mean_packets", by: GroupBy = None, *, node_kind: Optional[str] = "switch"
) -> Figure:
    """CDF over ports of a queue-length column (mean, max or a percentile, in packets)."""
    fig, ax = _figure()
    ports = queues if node_kind is None else queues[queues["node_kind"] == node_kind]
    groups = _groups(ports, by)
    for label, g in groups:
        _cdf(ax, g[column].to_numpy(dtype=float), label)
    ax.set_xlabel(f"{column.replace('_', ' ')} per {node_kind or ''} port".replace("  ", " "))
    ax.set_ylabel("fraction of ports")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    _legend(ax, by if isinstance(by, str) else None, len(groups))
    return fig


def queue_timeseries(samples: pd.DataFrame, queues: pd.DataFrame, *, ports: Optional[Sequence[int]] = None,
                     top: int = 4) -> Figure:
    """Queue length (KB) over time of the given switch ports, or of the ``top`` ports with
    the largest mean in a ``queue_samples`` table; labelled from the queue table."""
    fig, ax = _figure()
    if ports is None:
        means = samples.groupby("port")["bytes"].mean().sort_values(ascending=False)
        ports = [int(p) for p in means.index[:top]]
    _port_steps(ax, samples.sort_values("time_s"), queues, ports, "bytes", 1e3)
    ax.set_ylabel("queue length (KB)")
    return fig


def _port_steps(ax: Any, rows: pd.DataFrame, queues: pd.DataFrame, ports: Sequence[int], column: str,
                scale: float) -> None:
    """One step line per port of ``rows[column] / scale`` over ``time_s``, labelled
    ``node → peer`` from the queue table."""
    names = queues.set_index("port")
    for p in ports:
        s = rows[rows["port"] == p]
        label = f"{names.at[p, 'node']} → {names.at[p, 'peer']}" if p in names.index else str(p)
        ax.plot(s["time_s"].to_numpy(dtype=float), s[column].to_numpy(dtype=float) / scale, label=label,
                drawstyle="steps-post")
    ax.set_xlabel("time (s)")
    ax.grid(True, alpha=0.3)
    _legend(ax, "port", len(ports))


def trace_occupancy(trace: pd.DataFrame, queues: pd.DataFrame, *, ports: Optional[Sequence[int]] = None,
                    top: int = 4) -> Figure:
    """Queue length (packets) of traced ports after each event of an event trace
    (``output.trace``): exact, every change, unlike the sampled series. Default: the
    ``top`` ports with the highest peak."""
    fig, ax = _figure()
    if ports is None:
        peaks = trace.groupby("port")["queue_packets"].max().sort_values(ascending=False)
        ports = [int(p) for p in peaks.index[:top]]
    _port_steps(ax, trace, queues, ports, "queue_packets", 1.0)
    ax.set_ylabel("queue length (packets)")
    return fig


def cwnd_traces(samples: pd.DataFrame, flow_id: int) -> Figure:
    """Congestion window over time of each subflow of one flow (``flow_samples``)."""
    fig, ax = _figure()
    flow = samples[samples["flow_id"] == flow_id]
    subflows = sorted(flow["subflow"].unique())
    for k in subflows:
        s = flow[flow["subflow"] == k].sort_values("time_s")
        ax.plot(s["time_s"].to_numpy(dtype=float), s["cwnd_bytes"].to_numpy(dtype=float) / 1e3,
                label=f"subflow {k}", drawstyle="steps-post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("congestion window (KB)")
    ax.set_title(f"flow {flow_id}")
    ax.grid(True, alpha=0.3)
    _legend(ax, None, len(subflows))
    return fig


def cct_cdf(collectives: pd.DataFrame) -> Figure:
    """CDF of the completion times (ms) of the completed collective runs, one line per
    job, with each job's α–β bound as a dotted vertical line."""
    fig, ax = _figure()
    jobs = sorted(collectives["job"].unique())
    for i, job in enumerate(jobs):
        g = collectives[collectives["job"] == job]
        done = g[g["completed"].astype(bool)]
        first = g.iloc[0]
        label = f"job {job}: {first['collective']} by {first['algorithm']}, {len(done)} / {len(g)}"
        _cdf(ax, done["cct_s"].to_numpy(dtype=float) * 1e3, label)
        ideal = float(g["ideal_cct_s"].astype(float).mean()) * 1e3
        if math.isfinite(ideal):
            ax.axvline(ideal, linestyle=":", color=ax.lines[-1].get_color() if ax.lines else None)
    ax.set_xlabel("collective completion time (ms); dotted: the α–β bound")
    ax.set_ylabel("fraction of completed runs")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(title="job: completed / runs", fontsize="small", title_fontsize="small")
    return fig


def step_timeline(steps: pd.DataFrame, collective_id: int, title: str = "") -> Figure:
    """One collective run's steps as bars from their first flow's start to their last
    byte's arrival (ms), step 0 at the top."""
    fig, ax = _figure()
    s = steps[steps["collective_id"] == collective_id].sort_values("step")
    start = s["start_s"].to_numpy(dtype=float) * 1e3
    length = s["duration_s"].to_numpy(dtype=float) * 1e3
    ax.barh(s["step"].to_numpy(), length, left=start, height=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("step")
    if title:
        ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def line(
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    by: GroupBy = None,
    xlabel: Optional[str] = None,
    ylabel: Optional[str] = None,
    title: Optional[str] = None,
    logx: bool = False,
    logy: bool = False,
) -> Figure:
    """``y`` against ``x`` with markers, one line per group (an experiment's figure)."""
    fig, ax = _figure()
    groups = _groups(df, by)
    for i, (label, g) in enumerate(groups):
        g = g.sort_values(x)
        ax.plot(g[x].to_numpy(dtype=float), g[y].to_numpy(dtype=float), label=label, **series_style(i))
    ax.set_xlabel(xlabel or param_label(x))
    ax.set_ylabel(ylabel or y)
    if logx:
        log_axis(ax, "x", df[x])
        xs = np.unique(df[x].to_numpy(dtype=float))
        if 1 < xs.size <= 8 and ax.get_xscale() == "log":
            # A few x values: label each of them, and nothing else.
            from matplotlib.ticker import NullFormatter

            ax.set_xticks(xs, [f"{v:g}" for v in xs])
            ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        log_axis(ax, "y", df[y])
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax, by if isinstance(by, str) else None, len(groups))
    return fig


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def save(fig: Figure, directory: Union[str, os.PathLike[str]], stem: str,
         formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write ``directory/stem.png`` and ``.svg``, each atomically (temporary name, rename)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        target = out / f"{stem}.{fmt}"
        tmp = out / f".{stem}.{fmt}.tmp"
        fig.savefig(tmp, format=fmt, dpi=150 if fmt == "png" else None)
        os.replace(tmp, target)
        written.append(target)
    return written


def label_params(df: pd.DataFrame, params: Sequence[str], column: str = "point") -> pd.DataFrame:
    """Add a column naming each row's parameter combination, e.g. ``K=20, load=0.5``:
    the natural group of a sweep's rows."""
    if not params:
        return df.assign(**{column: "base"})
    short = {p: p.rsplit(".", 1)[-1] for p in params}
    if len(set(short.values())) < len(short):  # two paths end alike: keep them whole
        short = {p: p for p in params}
    labels = [", ".join(f"{short[p]}={v}" for p, v in zip(params, row))
              for row in df[list(params)].itertuples(index=False, name=None)]
    return df.assign(**{column: labels})

