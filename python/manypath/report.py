"""Plain-text rendering of run summaries and experiment tables for the terminal."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only annotations: the command line imports this module at every start
    import pandas as pd

    from .experiments.registry import Experiment

from .collectives import collective_rows
from .signals import SIGNALS


def fmt(value: Any, digits: int = 3) -> str:
    """A number as a person wants to read it: thousands separators, fixed decimals, '-' for missing."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:,.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first column left-aligned, others right."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])


def pairs(items: Sequence[tuple[str, str]]) -> str:
    """Label/value lines with the values aligned."""
    width = max((len(k) for k, _ in items), default=0)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in items)


def si(value: Any) -> str:
    """A rate with an SI prefix, e.g. 4.52 M."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    v = float(value)
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.2f} {prefix}"
    return f"{v:.0f}"


def run_summary(summary: Mapping[str, Any], counters: Mapping[str, Any]) -> str:
    """The table ``manypath run`` prints."""
    sim_ms = float(counters.get("sim_time_s", math.nan)) * 1e3
    title = (
        f"{summary.get('name') or 'scenario'}: {fmt(summary.get('generated', summary['flows']))} flows "
        f"generated, {fmt(summary.get('started', summary['flows']))} started, "
        f"{fmt(summary['completed'])} completed, {fmt(summary.get('censored', 0))} unfinished, "
        f"{fmt(sim_ms, 3)} ms simulated"
    )
    classes = _fct_table("class", summary["classes"])
    if summary.get("size_buckets"):
        classes += "\n\n" + _fct_table("size", summary["size_buckets"])
    classes += "".join(f"\nwarning: {w}" for w in summary.get("warnings", []))
    if summary.get("long_lived_goodput"):
        classes += "\n\n" + long_lived_table(summary["long_lived_goodput"])
    if summary.get("collectives"):
        headers, rows = collective_rows(summary["collectives"])
        classes += "\n\ncollectives (CCT: first start to last byte received; ideal: the α–β bound):\n"
        classes += table(headers, rows)
    signals = [(label, fmt(summary.get("congestion_signals", {}).get(key))) for key, label, _ in SIGNALS
               if summary.get("congestion_signals", {}).get(key)]
    drops, marks = summary["drops"], summary["ecn_marks"]
    if counters.get("level") == "flow":
        converged = "converged" if counters.get("converged") else "not converged"
        totals = pairs(
            [
                ("goodput", f"{fmt(summary['goodput_gbps'], 2)} Gbit/s"),
                ("fraction", fmt(_float(counters.get("goodput_fraction")), 3)),
                ("flow model", str(counters.get("flow_model", ""))),
                ("iterations", f"{fmt(_int(counters.get('iterations')))} ({converged})"),
                ("wall time", f"{fmt(_float(counters.get('wall_s')), 2)} s"),
            ]
        )
        return f"{title} (flow level: steady state)\n\n{classes}\n\n{totals}"
    totals = pairs(
        [
            ("goodput", f"{fmt(summary['goodput_gbps'], 2)} Gbit/s"),
            ("drops", f"switch {fmt(drops['switch'])}, host {fmt(drops['host'])}"),
            ("link losses", fmt(summary.get("link_losses", 0))),
            ("ECN marks", f"switch {fmt(marks['switch'])}, host {fmt(marks['host'])}"),
            ("timeouts", fmt(summary["timeouts"])),
            *signals,
            ("events", fmt(_int(counters.get("events")))),
            ("packet-hops", fmt(_int(counters.get("packet_hops")))),
            ("wall time", f"{fmt(_float(counters.get('wall_s')), 2)} s"),
            ("hops/s", si(counters.get("hops_per_s"))),
        ]
    )
    return f"{title}\n\n{classes}\n\n{totals}"


def long_lived_table(doc: Mapping[str, Any]) -> str:
    """The goodput of long-lived flows per class (``summary["long_lived_goodput"]``):
    a line naming the measurement window, then per class its flows, the megabytes
    (10^6 bytes) they delivered in the window, that as Gbit/s over the window and its
    share of all long-lived flows' bytes; a last row ``all`` when there are several
    classes."""
    ms = 1e3
    head = (f"long-lived flows, over the measurement window {fmt(doc['from_s'] * ms)} to "
            f"{fmt(doc['end_s'] * ms)} ms:")
    rows = [[name, fmt(c["flows"]), fmt(c["bytes"] / 1e6), fmt(c["goodput_gbps"]), _percent(c["share"])]
            for name, c in doc["classes"].items()]
    if len(rows) > 1:
        flows = sum(int(c["flows"]) for c in doc["classes"].values())
        rows.append(["all", fmt(flows), fmt(doc["bytes"] / 1e6), fmt(doc["goodput_gbps"]),
                     _percent(1.0 if doc["bytes"] else None)])
    return head + "\n" + table(["class", "flows", "delivered MB", "goodput Gbit/s", "share"], rows)


def _percent(v: Any) -> str:
    return "-" if v is None else f"{100 * float(v):.1f}%"


def _fct_table(first: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    """Counts and FCT statistics per class or size bucket: generated, started, left out
    as started in the warm-up, finished, still running at the end (and long-lived, when
    there are any), then FCT and slowdown (when known) over the finished measured flows."""
    cols: list[tuple[str, str, int]] = [
        ("flows", "flows", 0), ("started", "started", 0), ("warm-up", "unmeasured", 0),
        ("done", "completed", 0), ("unfinished", "censored", 0),
    ]
    if any(c.get("long_lived") for c in groups.values()):
        cols.append(("long-lived", "long_lived", 0))
    cols += [("FCT mean ms", "fct_mean_ms", 3), ("p50 ms", "fct_p50_ms", 3), ("p99 ms", "fct_p99_ms", 3)]
    if any(c.get("slowdown_p50") is not None for c in groups.values()):
        cols += [("slowdown p50", "slowdown_p50", 2), ("p99", "slowdown_p99", 2)]
    rows = [[name, *(fmt(c.get(key), digits) for _, key, digits in cols)] for name, c in groups.items()]
    return table([first, *(h for h, _, _ in cols)], rows)


def _int(v: Any) -> int | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def frame(df: pd.DataFrame) -> str:
    """An experiment's result table."""
    headers = [str(c) for c in df.columns]
    rows = [[fmt(_plain(v)) for v in rec] for rec in df.itertuples(index=False, name=None)]
    return table(headers, rows)


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v


def experiment_list(experiments: Sequence[Experiment]) -> str:
    """The listing ``manypath reproduce`` prints without a name."""
    if not experiments:
        return "no experiments registered"
    width = max(len(e.name) for e in experiments)
    pad = " " * (width + 2)
    blocks = []
    for e in experiments:
        blocks.append(
            f"{e.name.ljust(width)}  {e.document}: {e.figure}\n"
            f"{pad}{e.compares}\n"
            f"{pad}time: {e.reduced_time} reduced, {e.full_time} with --full"
        )
    return "\n\n".join(blocks)
