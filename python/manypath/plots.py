"""Figures from run and sweep tables (matplotlib, no display needed).

Every function takes the DataFrames of :class:`~manypath.Results` or
:class:`~manypath.SweepResults` and returns a Figure; :func:`save` writes it as PNG and
SVG. Grouping columns (``by``) can be any column, including a sweep's parameter columns.
"""

from __future__ import annotations

import io
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
    """CDF of the flow completion times (ms) of completed flows, one line per group."""
    fig, ax = _figure()
    done = flows[flows["completed"].astype(bool)]
    groups = _groups(done, by)
    for label, g in groups:
        _cdf(ax, g["fct_s"].to_numpy(dtype=float) * 1e3, label)
    ax.set_xlabel("flow completion time (ms)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    if logx and _spans_decades(done["fct_s"].to_numpy(dtype=float)):
        ax.set_xscale("log")
    ax.grid(True, alpha=0.3)
    _legend(ax, by if isinstance(by, str) else None, len(groups))
    return fig


def fct_vs_load(
    flows: pd.DataFrame, load: str, by: GroupBy = None, *, stats: Sequence[str] = ("mean", "p99")
) -> Figure:
    """FCT statistics (ms) against the offered load column ``load`` (e.g. the sweep
    parameter ``traffic.0.load``), one line per group and statistic."""
    fig, ax = _figure()
    done = flows[flows["completed"].astype(bool)]
    groups = _groups(done, by)
    for label, g in groups:
        per_load = g.groupby(load)["fct_s"]
        xs = np.array(sorted(per_load.groups), dtype=float)
        for stat in stats:
            if stat == "mean":
                ys = [float(per_load.get_group(x).mean()) * 1e3 for x in sorted(per_load.groups)]
            else:
                q = float(stat.lstrip("p"))
                ys = [analysis.percentile(per_load.get_group(x), q) * 1e3 for x in sorted(per_load.groups)]
            name = stat if by is None else f"{label} {stat}"
            ax.plot(xs, ys, marker="o", label=name)
    ax.set_xlabel(load)
    ax.set_ylabel("flow completion time (ms)")
    if _spans_decades(done["fct_s"].to_numpy(dtype=float)):
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def bars(values: pd.Series, ylabel: str, *, title: Optional[str] = None, ylim: Optional[tuple[float, float]] = None) -> Figure:
    """One bar per index entry."""
    fig, ax = _figure()
    labels = [str(i) for i in values.index]
    ax.bar(range(len(values)), values.to_numpy(dtype=float), color="C0")
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
    names = queues.set_index("port")
    for p in ports:
        s = samples[samples["port"] == p].sort_values("time_s")
        label = f"{names.at[p, 'node']} → {names.at[p, 'peer']}" if p in names.index else str(p)
        ax.plot(s["time_s"].to_numpy(dtype=float), s["bytes"].to_numpy(dtype=float) / 1e3, label=label,
                drawstyle="steps-post")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue length (KB)")
    ax.grid(True, alpha=0.3)
    _legend(ax, "port", len(ports))
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
    for label, g in groups:
        g = g.sort_values(x)
        ax.plot(g[x].to_numpy(dtype=float), g[y].to_numpy(dtype=float), marker="o", label=label)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
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

