"""What a run's summary reports beyond flow completion times: the goodput of long-lived
flows per class over the measurement window (they never finish, so they have no FCT),
and the congestion signals the run counted (PFC frames, CNPs, trimmed packets, NACKs)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import analysis
from .signals import SIGNALS

#: The columns of :func:`long_lived_goodput`'s table, one row per class.
LONG_LIVED_COLUMNS = ["flows", "bytes", "goodput_gbps", "share"]


def window_bytes(flows: pd.DataFrame, end_s: float, from_s: float, *, flow_level: bool = False) -> pd.Series:
    """The bytes each flow delivered (acknowledged) in the measurement window
    [``from_s``, ``end_s``].

    A flow that started in the window delivered all it acknowledged there. The table
    holds, for a long-lived flow that started in the warm-up, its goodput over the
    window (``goodput_bps``, bytes acknowledged after the warm-up over the time since):
    its bytes are that rate times the window. At flow level every flow runs at its
    steady rate through the window, and ``bytes_acked`` is what it delivered there (as
    it is for every flow of a table without ``goodput_bps``).
    """
    acked = flows["bytes_acked"].astype("int64")
    if flow_level or "goodput_bps" not in flows.columns:  # a table without it: all acknowledged
        return acked
    start = flows["start_s"].astype(float)
    in_warmup = start < from_s
    if not in_warmup.any():
        return acked
    span = (end_s - np.maximum(start, from_s)).clip(lower=0.0)
    from_rate = (flows["goodput_bps"].astype(float) * span / 8.0).round()
    return acked.where(~in_warmup, from_rate.fillna(0).astype("int64"))


def long_lived_goodput(flows: pd.DataFrame, end_s: float, from_s: float, *, by: str = "class",
                       flow_level: bool = False) -> pd.DataFrame:
    """Per group of ``by`` that has long-lived flows (size −1) that started: ``flows``,
    ``bytes`` delivered in the measurement window [``from_s``, ``end_s``] (see
    :func:`window_bytes`), ``goodput_gbps`` (those bytes over the window) and ``share``
    (of every long-lived flow's bytes, 0–1). Groups without long-lived flows have no row;
    an empty window gives NaN goodput."""
    if "size" not in flows.columns or not len(flows):
        return pd.DataFrame(columns=LONG_LIVED_COLUMNS)
    long_lived = flows[(flows["size"] < 0) & analysis.started_mask(flows)]
    if not len(long_lived):
        return pd.DataFrame(columns=LONG_LIVED_COLUMNS)
    got = long_lived.assign(_bytes=window_bytes(long_lived, end_s, from_s, flow_level=flow_level))
    per = got.groupby(by, sort=True).agg(flows=("_bytes", "size"), bytes=("_bytes", "sum"))
    window = end_s - from_s
    total = int(per["bytes"].sum())
    per["goodput_gbps"] = per["bytes"] * 8 / window / 1e9 if window > 0 else math.nan
    per["share"] = per["bytes"] / total if total else math.nan
    return per[LONG_LIVED_COLUMNS]


def long_lived_summary(flows: pd.DataFrame, end_s: float, from_s: float, *,
                       flow_level: bool = False) -> dict[str, Any] | None:
    """The summary's ``long_lived_goodput``: the measurement window (``from_s``,
    ``end_s``, ``window_s``), the bytes and goodput of every long-lived flow together,
    and per class with long-lived flows its flows, bytes, goodput and share; ``None``
    when no long-lived flow started or the run's end is unknown. Non-finite numbers are
    ``None``."""
    if math.isnan(end_s):
        return None
    table = long_lived_goodput(flows, end_s, from_s, flow_level=flow_level)
    if not len(table):
        return None
    window = end_s - from_s
    total = int(table["bytes"].sum())
    return {
        "from_s": from_s,
        "end_s": end_s,
        "window_s": window,
        "bytes": total,
        "goodput_gbps": _finite(total * 8 / window / 1e9) if window > 0 else None,
        "classes": {
            str(name): {
                "flows": int(row["flows"]),
                "bytes": int(row["bytes"]),
                "goodput_gbps": _finite(row["goodput_gbps"]),
                "share": _finite(row["share"]),
            }
            for name, row in table.iterrows()
        },
    }


def congestion_signals(flows: pd.DataFrame, queues: pd.DataFrame, counters: Mapping[str, Any]) -> dict[str, int]:
    """The congestion signals of :data:`SIGNALS` the run counted, only those above zero
    (a run without PFC, RoCE, trimming or NDP has none)."""

    def column(table: pd.DataFrame, name: str) -> int:
        return int(table[name].fillna(0).sum()) if name in table.columns and len(table) else 0

    counts = {
        "pfc_pauses": _count(counters.get("pfc_pauses")),
        "pfc_resumes": _count(counters.get("pfc_resumes")),
        "cnps": column(flows, "cnps"),
        "trims": column(queues, "trimmed"),
        "nacks": column(flows, "nacks") + column(flows, "naks"),
    }
    return {key: counts[key] for key, _, _ in SIGNALS if counts[key] > 0}


def _count(v: Any) -> int:
    """A counter as a whole number: 0 when missing (or NaN, as older directories read)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return 0
    return int(v)


def _finite(x: Any) -> float | None:
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x
