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

from . import _toml, analysis, plots
from .collectives import collective_rows
from .fabric_svg import fabric_svg
from .provenance import PROVENANCE_FILE, SCENARIO_FILE
from .results import COUNTERS_FILE, FLOWS_FILE, REPORT_FILE, Results, load_run
from .sweeps.loading import SweepResults, is_sweep_dir, load_sweep
from .sweeps.store import SWEEP_FILE
from .signals import SIGNALS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = Union[str, "os.PathLike[str]"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; font-variant-numeric: tabular-nums; }
.table-box { max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; } td { white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; width: 36em; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.9em; }
.failed { color: #b00; }
.mixed { background: #fff3cd; border: 2px solid #b00; padding: 0.6em 1em; font-weight: 600; }
"""


def write_report(directory: PathLike, out: PathLike | None = None, *, allow_mixed: bool = False) -> Path:
    """Render the report of ``directory`` (a run or a sweep) into ``out``
    (default ``directory/report.html``), atomically. A sweep's report shows its current
    generation, or every generation with ``allow_mixed``."""
    src = Path(directory)
    target = Path(out) if out is not None else src / REPORT_FILE
    text = render(src, allow_mixed=allow_mixed)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target


def render(directory: PathLike, *, allow_mixed: bool = False) -> str:
    """The report of a run or sweep directory as one HTML document."""
    src = Path(directory)
    if (src / FLOWS_FILE).is_file() and (src / COUNTERS_FILE).is_file():
        return _run_report(src, load_run(src))
    if is_sweep_dir(src):
        return _sweep_report(src, load_sweep(src, allow_mixed=allow_mixed))
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
    # A table wider than the page scrolls inside its own box, never past the page.
    return (f'<div class="table-box"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _pairs(items: Sequence[tuple[str, Any]]) -> str:
    return _table(pd.DataFrame([(k, _cell(v)) for k, v in items], columns=["", "value"]))


def _has_flows(flows: pd.DataFrame) -> bool:
    return len(flows) > 0 and bool(flows["completed"].astype(bool).any())


# --- A run ------------------------------------------------------------------------------------


def _run_report(src: Path, res: Results) -> str:
    c = res.counters
    summary = res.summary()
    signals = summary["congestion_signals"]
    body = [
        "<h2>Run</h2>",
        _pairs(
            [("directory", str(src)), ("seed", c.get("seed")), ("simulated time (ms)", _ms(c.get("sim_time_s"))),
             ("flows", len(res.flows)), ("completed", int(res.flows["completed"].sum()) if len(res.flows) else 0),
             *((label, signals[key]) for key, label, _ in SIGNALS if key in signals),
             ("events", c.get("events")), ("packet-hops", c.get("packet_hops")), ("wall time (s)", c.get("wall_s"))]
        ),
    ]
    meta = src / "run.json"
    if meta.is_file():
        info = json.loads(meta.read_text(encoding="utf-8"))
        body.append(_pairs([("run id", info.get("run_id")), ("status", info.get("status")),
                            ("version", info.get("version")),
                            *((f"parameter {k}", v) for k, v in info.get("params", {}).items())]))
    body += ["<h2>Flow completion times</h2>",
             "<p>FCT and slowdown over the finished flows that started after the warm-up; "
             "unfinished flows were still running when the run ended (censored).</p>",
             _table(_fct_display(analysis.fct_stats(res.flows, by="class")), index=True)]
    if len(res.flows) and "size" in res.flows.columns and (res.flows["size"] >= 0).any():
        body += ["<h3>By flow size</h3>", _table(_fct_display(analysis.bucket_stats(res.flows)), index=True)]
    warnings = analysis.censoring_warnings(res.flows) if len(res.flows) else []
    if warnings:
        body.append('<ul class="failed">' + "".join(f"<li>{html.escape(w)}</li>" for w in warnings) + "</ul>")
    if summary["long_lived_goodput"]:
        body += _long_lived(summary["long_lived_goodput"])
    if summary["collectives"]:
        body += _collectives(summary["collectives"])
    figures = []
    if len(res.collectives):
        figures.append(_figure(plots.cct_cdf(res.collectives), "collective completion time CDF per job"))
        # The slowest completed run's steps.
        done = res.collectives[res.collectives["completed"].astype(bool)]
        if len(done):
            worst = int(done["cct_s"].astype(float).idxmax())
            row = res.collectives.loc[worst]
            what = f"{row['collective']} by {row['algorithm']}, job {row['job']} iteration {row['iteration']}"
            figures.append(_figure(plots.step_timeline(res.collective_steps, worst, what),
                                   f"the steps of the slowest collective run ({what})"))
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
    if res.trace is not None and len(res.trace):
        figures.append(_figure(plots.trace_occupancy(res.trace, res.queues),
                               "queue length after each event of the traced ports (event trace)"))
    if len(res.flow_samples):
        # The flow with the most subflows, the first such: its cwnd traces.
        sub = res.flow_samples.groupby("flow_id")["subflow"].max()
        flow_id = int(sub.idxmax())
        figures.append(_figure(plots.cwnd_traces(res.flow_samples, flow_id),
                               f"congestion window of each subflow of flow {flow_id}"))
    body += ["<h2>Figures</h2>", *figures]
    drawing = fabric_svg(res.queues)
    if drawing is not None:
        body += ["<h2>Fabric</h2>",
                 "<p>Nodes layered by their distance from the hosts (hosts at the bottom); each link "
                 "coloured from green (idle) to red (saturated) by its busier direction's utilisation, "
                 "the hottest labelled with utilisation, drops (d) and ECN marks (m). Hover over a link "
                 "for its numbers.</p>", drawing]
    queues = res.queues
    if len(queues):
        busiest = queues.sort_values(["drops", "max_packets"], ascending=False).head(10)
        if {"node", "peer"} <= set(busiest.columns):
            busiest = busiest.assign(**{"node → peer": [f"{n} → {p}" for n, p in
                                                        zip(busiest["node"], busiest["peer"])]})
        cols = [c for c in ("port", "node → peer", "node_kind", "tier", "utilization", "drops", "ecn_marks",
                            "max_packets", "mean_packets") if c in busiest]
        body += ["<h2>Busiest queues</h2>", _table(busiest[cols])]
    # The provenance once: the run's own record (provenance.json), as loaded.
    prov = res.provenance
    if not prov and (src / PROVENANCE_FILE).is_file():
        prov = json.loads((src / PROVENANCE_FILE).read_text(encoding="utf-8"))
    if prov:
        body += ["<h2>Provenance</h2>", _pairs([(str(k), v) for k, v in prov.items()])]
    scenario = src / "scenario.toml"
    if scenario.is_file():
        body += ["<h2>Scenario</h2>", f"<pre>{html.escape(scenario.read_text(encoding='utf-8'))}</pre>"]
    return _page(f"manypath run: {res.name or src.name}", body)


def _collectives(jobs: list[dict[str, Any]]) -> list[str]:
    """Each collective job's completion times against the α–β bound
    (``summary()["collectives"]``)."""
    headers, rows = collective_rows(jobs)
    return ["<h2>Collectives</h2>",
            "<p>A collective's completion time (CCT) runs from its first flow's start to the last byte of its "
            "last flow reaching its receiver; the ideal is the α–β bound: the algorithm's transfers alone on "
            "their idle paths, in the order the run starts them. JCT: the job's first start to its last "
            "completed iteration's end.</p>",
            _table(pd.DataFrame(rows, columns=headers))]


def _long_lived(doc: dict[str, Any]) -> list[str]:
    """The goodput of long-lived flows per class over the measurement window
    (``summary()["long_lived_goodput"]``)."""
    def share(v: Any) -> str:
        return "-" if v is None else f"{100 * float(v):.1f}%"

    rows = [(name, c["flows"], c["bytes"] / 1e6, c["goodput_gbps"], share(c["share"]))
            for name, c in doc["classes"].items()]
    if len(rows) > 1:
        rows.append(("all", sum(int(c["flows"]) for c in doc["classes"].values()), doc["bytes"] / 1e6,
                     doc["goodput_gbps"], share(1.0 if doc["bytes"] else None)))
    table = pd.DataFrame(rows, columns=["class", "flows", "delivered (MB)", "goodput (Gbit/s)", "share"])
    return ["<h2>Long-lived flows</h2>",
            f"<p>Long-lived flows never finish, so they have no FCT: per class, the bytes they delivered "
            f"in the measurement window ({_cell(doc['from_s'] * 1e3)} to {_cell(doc['end_s'] * 1e3)} ms), "
            "that as goodput over the window, and each class's share of every long-lived flow's bytes.</p>",
            _table(table)]


_FCT_HEADERS = {
    "unmeasured": "warm-up", "censored": "unfinished", "long_lived": "long-lived", "censored_pct": "unfinished %",
    "fct_mean_ms": "FCT mean (ms)", "fct_p50_ms": "p50 (ms)", "fct_p99_ms": "p99 (ms)", "fct_max_ms": "max (ms)",
    "slowdown_mean": "slowdown mean", "slowdown_p50": "slowdown p50", "slowdown_p99": "slowdown p99",
}


def _fct_display(stats: pd.DataFrame) -> pd.DataFrame:
    """An FCT table as a reader wants it: readable headers, no long-lived column when
    there are none, no slowdown columns when the run has no ideal FCTs."""
    drop = [c for c in analysis.SLOWDOWN_COLUMNS if stats[c].isna().all()]
    if not stats["long_lived"].any():
        drop.append("long_lived")
    return stats.drop(columns=drop).rename(columns=_FCT_HEADERS)


def _ms(v: Any) -> Any:
    return None if v is None else float(v) * 1e3


# --- A sweep ----------------------------------------------------------------------------------


def _sweep_report(src: Path, sw: SweepResults) -> str:
    runs = sw.runs
    ok = runs[runs["status"] == "ok"]
    failed = runs[runs["status"] != "ok"]
    body = [
        *_generation_notice(sw),
        "<h2>Sweep</h2>",
        _pairs([("directory", str(src)), ("runs", len(runs)), ("completed", len(ok)), ("failed", len(failed)),
                ("parameters", ", ".join(sw.params) or "none"),
                ("seeds", ", ".join(str(s) for s in sorted(runs["seed"].dropna().unique()))),
                ("generation", "all, pooled" if sw.mixed else f"{sw.generation} of {len(sw.generations)}")]),
    ]
    # Pooled generations are told apart everywhere a parameter combination is.
    point_params = ["generation", *sw.params] if sw.mixed else sw.params
    flows = plots.label_params(sw.flows, point_params)
    queues = plots.label_params(sw.queues, point_params)
    if len(flows):
        goodput = _run_goodput(flows, runs)
        per_point = analysis.seed_aggregate(goodput, "point", ["goodput_gbps"])
        n = _n_seeds(per_point["runs"])
        stats = _sweep_table(flows, goodput)
        body += ["<h2>Per parameter combination (all seeds)</h2>", _ci_note(), _table(stats, index=True)]
        body += _censoring_notes(flows)
        figures = []
        if _has_flows(flows):
            figures.append(_figure(plots.fct_cdf(flows, by="point"), "FCT CDF per parameter combination"))
            loads = [p for p in sw.params if p.rsplit(".", 1)[-1] == "load"]
            numeric = [p for p in sw.params if pd.api.types.is_numeric_dtype(flows[p])]
            x = loads[0] if loads else (numeric[0] if numeric else None)
            if x is not None and flows[x].nunique() > 1:
                others = [p for p in sw.params if p != x]
                by = plots.label_params(flows, others, "rest") if others else flows
                figures.append(_figure(plots.fct_vs_load(by, x, "rest" if others else None),
                                       f"FCT vs {plots.param_label(x)}: mean over seeds (n = {n}), "
                                       f"{analysis.CI_LEVEL:.0%} confidence interval, clipped at the "
                                       "axis floor on a log axis"))
        figures.append(_figure(plots.bars(per_point["goodput_gbps"], "goodput (Gbit/s)",
                                          low=per_point["goodput_gbps_ci_low"],
                                          high=per_point["goodput_gbps_ci_high"]),
                               f"aggregate goodput: mean over seeds (n = {n}), "
                               f"{analysis.CI_LEVEL:.0%} confidence interval"))
        jain = flows.groupby("point")["goodput_bps"].apply(lambda v: analysis.jain_index(v.fillna(0)))
        figures.append(_figure(plots.bars(jain, "Jain's fairness index", ylim=(0, 1.05)),
                               "Jain's fairness index of per-flow goodput"))
        if len(queues) and (queues["node_kind"] == "switch").any():
            figures.append(_figure(plots.queue_cdf(queues, "mean_packets", by="point"),
                                   "mean queue length over switch ports"))
        body += ["<h2>Figures</h2>", *figures]
    body += _base_scenario(src, sw)
    body += _provenance(src, runs)
    body += ["<h2>Runs</h2>", _table(runs.drop(columns=["error"]))]
    if len(failed):
        items = "".join(f"<li><code>{html.escape(str(r.run_id))}</code>: {html.escape(str(r.error))}</li>"
                        for r in failed.itertuples())
        body += ['<h2 class="failed">Failed runs</h2>', f'<ul class="failed">{items}</ul>']
    return _page(f"manypath sweep: {sw.name}", body)


def _n_seeds(runs: pd.Series) -> str:
    """The runs (seeds) per parameter combination: one number, or the range."""
    lo, hi = int(runs.min()), int(runs.max())
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _ci_note() -> str:
    return (f"<p>Flow counts are summed over the seeds. Each statistic is computed per run, then "
            f"averaged over the runs (n = runs, one per seed) with its {analysis.CI_LEVEL:.0%} "
            "Student-t confidence interval in brackets; FCTs are over finished flows that started "
            "after the warm-up.</p>")


def _sweep_table(flows: pd.DataFrame, goodput: pd.DataFrame) -> pd.DataFrame:
    """Per parameter combination: flow counts over its runs, then mean FCT, p99 FCT, p99
    slowdown and goodput as "mean [CI low, CI high]" over the runs."""
    stats = analysis.sweep_fct_table(flows, "point")
    stats = stats.join(analysis.seed_aggregate(goodput, "point", ["goodput_gbps"]).drop(columns="runs"))
    out = stats[["runs", "flows", "started", "unmeasured", "completed", "censored", "censored_pct"]].copy()
    out = out.rename(columns={"unmeasured": "warm-up", "censored": "unfinished", "censored_pct": "unfinished %"})
    for col, name in (("fct_mean_ms", "FCT mean (ms)"), ("fct_p99_ms", "FCT p99 (ms)"),
                      ("slowdown_p99", "slowdown p99"), ("goodput_gbps", "goodput (Gbit/s)")):
        if col == "slowdown_p99" and stats[col].isna().all():
            continue
        out[name] = [_with_ci(m, lo, hi) for m, lo, hi in
                     zip(stats[col], stats[f"{col}_ci_low"], stats[f"{col}_ci_high"])]
    return out


def _with_ci(mean: float, low: float, high: float) -> str:
    if mean is None or math.isnan(mean):
        return "-"
    if math.isnan(low):
        return _cell(float(mean))
    return f"{_cell(float(mean))} [{_cell(float(low))}, {_cell(float(high))}]"


def _censoring_notes(flows: pd.DataFrame) -> list[str]:
    """The censoring warnings, one per parameter combination and class they concern."""
    notes = []
    for point, g in flows.groupby("point", sort=True):
        notes += [f"{point}: {w}" for w in analysis.censoring_warnings(g, by="class")]
    if not notes:
        return []
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return [f'<ul class="failed">{items}</ul>']


def _base_scenario(src: Path, sw: SweepResults) -> list[str]:
    """The base scenario of the generation shown (from the manifest), with its digest; for
    directories written before the manifest kept it, the scenario of the first stored run."""
    manifest = src / SWEEP_FILE
    doc = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    # A report that pools generations shows every base scenario; otherwise the one shown.
    shown = None if getattr(sw, "mixed", False) else getattr(sw, "generation", None) or doc.get("current")
    gens = [g for g in doc.get("generations", []) if g.get("base_scenario") is not None]
    gens = [g for g in gens if shown is None or g.get("generation") == shown] or gens[-1:]
    out = ["<h2>Base scenario</h2>"]
    for g in gens:
        base = g["base_scenario"]
        text = base if isinstance(base, str) else _toml.dumps(base)
        out += [_pairs([("generation", g.get("generation")), ("SHA-256", g.get("base_sha256"))]),
                f"<pre>{html.escape(text)}</pre>"]
    if gens:
        return out
    for run_dir in (src / str(r) for r in sw.runs["run_id"]):
        if not (run_dir / SCENARIO_FILE).is_file():
            continue
        out += [f"<p>Not kept by this sweep's manifest; the scenario of run <code>{html.escape(run_dir.name)}"
                "</code>, with its parameter values applied:</p>",
                f"<pre>{html.escape((run_dir / SCENARIO_FILE).read_text(encoding='utf-8'))}</pre>"]
        return out
    return out + ["<p>Not recorded: this sweep was stored before sweeps kept their base scenario.</p>"]


def _provenance(src: Path, runs: pd.DataFrame) -> list[str]:
    """What produced the runs: manypath versions and source revisions, when they ran,
    how many scenario digests (one per parameter combination and seed is expected)."""
    records = []
    for run_id in runs["run_id"]:
        path = src / str(run_id) / PROVENANCE_FILE
        if path.is_file():
            records.append(json.loads(path.read_text(encoding="utf-8")))
    if not records:
        return ["<h2>Provenance</h2>", "<p>No run of this sweep recorded its provenance.</p>"]

    def distinct(key: str) -> str:
        return ", ".join(sorted({str(r.get(key)) for r in records}))

    times = sorted(str(r["ran_at"]) for r in records if r.get("ran_at"))
    return ["<h2>Provenance</h2>", _pairs([
        ("runs with provenance", f"{len(records)} of {len(runs)}"),
        ("manypath version", distinct("manypath_version")),
        ("source revision", distinct("source_revision")),
        ("ran", f"{times[0]} to {times[-1]}" if times else None),
        ("scenario digests", len({r.get("scenario_sha256") for r in records})),
        ("Python", distinct("python")),
    ])]

def _generation_notice(sw: SweepResults) -> list[str]:
    """A banner when the report pools generations, a note when it leaves some out."""
    gens = sw.generations
    if sw.mixed and len(gens) > 1:
        return [f'<p class="mixed">Mixed generations: this report pools the runs of {len(gens)} sweep '
                "generations, whose base scenarios differ. Runs of different generations with equal "
                "parameter values are different experiments; every table and figure below separates them "
                "by generation.</p>", _table(gens)]
    others = len(gens) - 1
    if others > 0:
        return [f'<p class="mixed">This directory holds {len(gens)} sweep generations (different base '
                f"scenarios); this report shows generation {sw.generation} only. "
                "<code>manypath report --allow-mixed</code> shows them all, marked.</p>", _table(gens)]
    return []


def _run_goodput(flows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Aggregate goodput of each run, over that run's simulated time."""
    sim = runs.set_index("run_id")["sim_time_s"]
    per_run = flows.groupby(["run_id", "point"], sort=False)["bytes_acked"].sum().reset_index()
    per_run["goodput_gbps"] = [
        b * 8 / float(sim[r]) / 1e9 if sim.get(r) else math.nan
        for r, b in zip(per_run["run_id"], per_run["bytes_acked"])
    ]
    return per_run
