"""A self-contained static HTML report of a run directory or a sweep directory.

Figures are embedded as base64 PNG and the styles inline, so the single file opens
anywhere (a browser without network access, a CI artifact, an e-mail attachment).
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import pandas as pd

from . import analysis, plots
from .results import COUNTERS_FILE, FLOWS_FILE, Results, load_run
from .sweeps.loading import SweepResults, is_sweep_dir, load_sweep

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = Union[str, "os.PathLike[str]"]
REPORT_FILE = "report.html"

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; width: 36em; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.9em; }
.failed { color: #b00; }
"""


def write_report(directory: PathLike, out: PathLike | None = None) -> Path:
    """Render the report of ``directory`` (a run or a sweep) into ``out``
    (default ``directory/report.html``), atomically."""
    src = Path(directory)
    target = Path(out) if out is not None else src / REPORT_FILE
    text = render(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target


def render(directory: PathLike) -> str:
    """The report of a run or sweep directory as one HTML document."""
    src = Path(directory)
    if (src / FLOWS_FILE).is_file() and (src / COUNTERS_FILE).is_file():
        return _run_report(src, load_run(src))
    if is_sweep_dir(src):
        return _sweep_report(src, load_sweep(src))
    raise FileNotFoundError(2, "not a run or sweep results directory", str(src))


# --- Building blocks ------------------------------------------------------------------------


def _page(title: str, body: Sequence[str]) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def _figure(fig: Figure, caption: str) -> str:
    data = base64.b64encode(plots.png_bytes(fig)).decode("ascii")
    return (
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return _cell(v.item())
    return str(v)


def _table(df: pd.DataFrame, index: bool = False) -> str:
    if index:
        df = df.reset_index()
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False, name=None):
        rows.append("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in rec) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _pairs(items: Sequence[tuple[str, Any]]) -> str:
    return _table(pd.DataFrame([(k, _cell(v)) for k, v in items], columns=["", "value"]))


def _has_flows(flows: pd.DataFrame) -> bool:
    return len(flows) > 0 and bool(flows["completed"].astype(bool).any())


# --- A run ------------------------------------------------------------------------------------


def _run_report(src: Path, res: Results) -> str:
    c = res.counters
    body = [
        "<h2>Run</h2>",
        _pairs(
            [("directory", str(src)), ("seed", c.get("seed")), ("simulated time (ms)", _ms(c.get("sim_time_s"))),
             ("flows", len(res.flows)), ("completed", int(res.flows["completed"].sum()) if len(res.flows) else 0),
             ("events", c.get("events")), ("packet-hops", c.get("packet_hops")), ("wall time (s)", c.get("wall_s"))]
        ),
    ]
    meta = src / "run.json"
    if meta.is_file():
        info = json.loads(meta.read_text(encoding="utf-8"))
        body.append(_pairs([("run id", info.get("run_id")), ("status", info.get("status")),
                            ("version", info.get("version")),
                            *((f"parameter {k}", v) for k, v in info.get("params", {}).items())]))
    body += ["<h2>Flow completion times</h2>", _table(analysis.fct_stats(res.flows, by="class"), index=True)]
    figures = []
    if _has_flows(res.flows):
        figures.append(_figure(plots.fct_cdf(res.flows, by="class"), "FCT CDF per class"))
    duration = res.duration_s
    if len(res.flows) and duration > 0:
        figures.append(_figure(plots.goodput_bars(res.flows, duration, by="class"), "goodput per class"))
        figures.append(_figure(plots.fairness_bars(res.flows, by="class"), "Jain's fairness index of per-flow goodput"))
    if len(res.queues) and (res.queues["node_kind"] == "switch").any():
        figures.append(_figure(plots.queue_cdf(res.queues, "mean_packets"), "mean queue length over switch ports"))
        figures.append(_figure(plots.queue_cdf(res.queues, "max_packets"), "maximum queue length over switch ports"))
    if len(res.queue_samples):
        figures.append(_figure(plots.queue_timeseries(res.queue_samples, res.queues),
                               "queue length over time of the four fullest sampled ports"))
    if len(res.flow_samples):
        # The flow with the most subflows, the first such: its cwnd traces.
        sub = res.flow_samples.groupby("flow_id")["subflow"].max()
        flow_id = int(sub.idxmax())
        figures.append(_figure(plots.cwnd_traces(res.flow_samples, flow_id),
                               f"congestion window of each subflow of flow {flow_id}"))
    body += ["<h2>Figures</h2>", *figures]
    queues = res.queues
    if len(queues):
        busiest = queues.sort_values(["drops", "max_packets"], ascending=False).head(10)
        cols = [c for c in ("port", "node_kind", "tier", "utilization", "drops", "ecn_marks", "max_packets",
                            "mean_packets") if c in busiest]
        body += ["<h2>Busiest queues</h2>", _table(busiest[cols])]
    scenario = src / "scenario.toml"
    if scenario.is_file():
        body += ["<h2>Scenario</h2>", f"<pre>{html.escape(scenario.read_text(encoding='utf-8'))}</pre>"]
    if res.provenance:
        body += ["<h2>Provenance</h2>", _pairs(list(res.provenance.items()))]
    return _page(f"manypath run: {res.name or src.name}", body)


def _ms(v: Any) -> Any:
    return None if v is None else float(v) * 1e3


# --- A sweep ----------------------------------------------------------------------------------


def _sweep_report(src: Path, sw: SweepResults) -> str:
    runs = sw.runs
    ok = runs[runs["status"] == "ok"]
    failed = runs[runs["status"] != "ok"]
    body = [
        "<h2>Sweep</h2>",
        _pairs([("directory", str(src)), ("runs", len(runs)), ("completed", len(ok)), ("failed", len(failed)),
                ("parameters", ", ".join(sw.params) or "none"),
                ("seeds", ", ".join(str(s) for s in sorted(runs["seed"].dropna().unique())))]),
    ]
    flows = plots.label_params(sw.flows, sw.params)
    queues = plots.label_params(sw.queues, sw.params)
    if len(flows):
        stats = analysis.fct_stats(flows, by="point")
        goodput = _run_goodput(flows, runs)
        stats["goodput_gbps"] = goodput.groupby("point")["goodput_gbps"].mean()
        stats["jain"] = flows.groupby("point")["goodput_bps"].apply(lambda v: analysis.jain_index(v.fillna(0)))
        body += ["<h2>Per parameter combination (all seeds)</h2>", _table(stats, index=True)]
        figures = []
        if _has_flows(flows):
            figures.append(_figure(plots.fct_cdf(flows, by="point"), "FCT CDF per parameter combination"))
            loads = [p for p in sw.params if p.rsplit(".", 1)[-1] == "load"]
            numeric = [p for p in sw.params if pd.api.types.is_numeric_dtype(flows[p])]
            x = loads[0] if loads else (numeric[0] if numeric else None)
            if x is not None and flows[x].nunique() > 1:
                others = [p for p in sw.params if p != x]
                by = plots.label_params(flows, others, "rest") if others else flows
                figures.append(_figure(plots.fct_vs_load(by, x, "rest" if others else None), f"FCT vs {x}"))
        figures.append(_figure(plots.bars(goodput.groupby("point")["goodput_gbps"].mean(), "goodput (Gbit/s)"),
                               "aggregate goodput (mean over seeds)"))
        figures.append(_figure(plots.bars(stats["jain"], "Jain's fairness index", ylim=(0, 1.05)),
                               "Jain's fairness index of per-flow goodput"))
        if len(queues) and (queues["node_kind"] == "switch").any():
            figures.append(_figure(plots.queue_cdf(queues, "mean_packets", by="point"),
                                   "mean queue length over switch ports"))
        body += ["<h2>Figures</h2>", *figures]
    body += ["<h2>Runs</h2>", _table(runs.drop(columns=["error"]))]
    if len(failed):
        items = "".join(f"<li><code>{html.escape(str(r.run_id))}</code>: {html.escape(str(r.error))}</li>"
                        for r in failed.itertuples())
        body += ['<h2 class="failed">Failed runs</h2>', f'<ul class="failed">{items}</ul>']
    return _page(f"manypath sweep: {sw.name}", body)


def _run_goodput(flows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Aggregate goodput of each run, over that run's simulated time."""
    sim = runs.set_index("run_id")["sim_time_s"]
    per_run = flows.groupby(["run_id", "point"], sort=False)["bytes_acked"].sum().reset_index()
    per_run["goodput_gbps"] = [
        b * 8 / float(sim[r]) / 1e9 if sim.get(r) else math.nan
        for r, b in zip(per_run["run_id"], per_run["bytes_acked"])
    ]
    return per_run
