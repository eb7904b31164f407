"""Small, reusable statistics over the flow and queue tables of a run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Union

import numpy as np
import pandas as pd

Numbers = Union[np.ndarray, pd.Series, Iterable[float]]
GroupBy = Union[str, Sequence[str], None]


def _array(values: Numbers) -> np.ndarray:
    if isinstance(values, (np.ndarray, pd.Series)):
        return np.asarray(values, dtype=float)
    return np.asarray(list(values), dtype=float)


def percentile(values: Numbers, q: float) -> float:
    """The q-th percentile (0–100, linear interpolation) ignoring NaN; NaN when empty."""
    a = _array(values)
    a = a[~np.isnan(a)]
    if a.size == 0:
        return math.nan
    return float(np.percentile(a, q))


def percentiles(values: Numbers, qs: Sequence[float] = (50, 95, 99)) -> dict[str, float]:
    """Several percentiles at once, keyed ``p50``, ``p99``, ``p99.9`` …"""
    return {f"p{q:g}": percentile(values, q) for q in qs}


def jain_index(values: Numbers) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.

    NaN for an empty input or when every value is zero, where fairness is undefined.
    """
    a = _array(values)
    if a.size == 0:
        return math.nan
    if np.isnan(a).any():
        raise ValueError("jain_index: values contain NaN")
    if (a < 0).any():
        raise ValueError("jain_index: values must be non-negative")
    sq = float(np.sum(a * a))
    if sq == 0.0:
        return math.nan
    return float(np.sum(a)) ** 2 / (a.size * sq)


def _by_list(by: GroupBy) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def completed_fct_ms(flows: pd.DataFrame) -> np.ndarray:
    """The flow completion times (ms) of the completed flows, in table order."""
    return flows.loc[flows["completed"].astype(bool), "fct_s"].to_numpy(dtype=float) * 1e3


def stat_columns(values: np.ndarray, stats: Sequence[str], prefix: str, unit: str = "ms") -> dict[str, float]:
    """Statistics of ``values`` as the columns of one table row, named
    ``{prefix}_{stat}_{unit}`` (``{prefix}_{stat}`` without a unit), in the order given:
    ``mean``, ``std``, ``min`` and ``max`` (NaN when there are no values; a NaN among them
    makes them NaN) and percentiles ``p50``, ``p99``, ``p99.9`` … (NaN ignored, see
    :func:`percentile`).
    """
    whole = {"mean": np.mean, "std": np.std, "min": np.min, "max": np.max}
    out = {}
    for stat in stats:
        name = f"{prefix}_{stat}_{unit}" if unit else f"{prefix}_{stat}"
        if stat in whole:
            out[name] = float(whole[stat](values)) if values.size else math.nan
        elif stat.startswith("p"):
            out[name] = percentile(values, float(stat[1:]))
        else:
            raise ValueError(f"stat_columns: unknown statistic {stat!r}")
    return out


def fct_stats(flows: pd.DataFrame, by: GroupBy = "class") -> pd.DataFrame:
    """Flow-completion-time statistics in milliseconds over completed flows.

    One row per group (or a single row labelled ``all`` when ``by`` is None) with
    columns flows, completed, fct_mean_ms, fct_p50_ms, fct_p99_ms, fct_max_ms.
    """
    keys = _by_list(by)

    def stats(g: pd.DataFrame) -> dict[str, float]:
        done = completed_fct_ms(g)
        return {
            "flows": len(g),
            "completed": int(done.size),
            **stat_columns(done, ("mean", "p50", "p99", "max"), "fct"),
        }

    if not keys:
        return pd.DataFrame([stats(flows)], index=pd.Index(["all"], name="group"))
    rows = {name: stats(g) for name, g in flows.groupby(keys if len(keys) > 1 else keys[0], sort=True)}
    columns = ["flows", "completed", "fct_mean_ms", "fct_p50_ms", "fct_p99_ms", "fct_max_ms"]
    out = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    if len(keys) > 1:
        out.index = pd.MultiIndex.from_tuples(out.index, names=keys)
    else:
        out.index.name = keys[0]
    return out.astype({"flows": int, "completed": int})


def goodput(flows: pd.DataFrame, duration_s: float) -> float:
    """Aggregate goodput in Gbit/s: all acknowledged bytes over ``duration_s``."""
    if duration_s <= 0:
        return math.nan
    return float(flows["bytes_acked"].sum()) * 8 / duration_s / 1e9


def goodput_by(flows: pd.DataFrame, duration_s: float, by: str = "class") -> pd.Series:
    """Goodput in Gbit/s per group, over ``duration_s``."""
    if duration_s <= 0:
        return flows.groupby(by)["bytes_acked"].sum() * math.nan
    return flows.groupby(by)["bytes_acked"].sum().astype(float) * 8 / duration_s / 1e9


def job_stats(flows: pd.DataFrame) -> pd.DataFrame:
    """Per job: flow count, completion, and job completion time (JCT).

    The JCT is the last finish minus the first start over the job's flows, NaN while
    any flow of the job is unfinished. Flows outside any job (job −1) are ignored.
    """
    jobs = flows[flows["job"] >= 0]
    rows = []
    for job, g in jobs.groupby("job", sort=True):
        done = bool(g["completed"].all())
        jct = float(g["finish_s"].max() - g["start_s"].min()) if done else math.nan
        rows.append(
            {
                "job": int(job),
                "flows": len(g),
                "completed": int(g["completed"].sum()),
                "bytes": int(g["size"].clip(lower=0).sum()),
                "jct_ms": jct * 1e3,
            }
        )
    return pd.DataFrame(rows, columns=["job", "flows", "completed", "bytes", "jct_ms"])


def port_totals(queues: pd.DataFrame, column: str) -> dict[str, int]:
    """Sum of a queue counter split by node kind: ``{"switch": …, "host": …}``."""
    kinds = queues.groupby("node_kind")[column].sum() if len(queues) else pd.Series(dtype=float)
    return {kind: int(kinds.get(kind, 0)) for kind in ("switch", "host")}


def interval_rates(samples: pd.DataFrame, after_s: float = 0.0) -> pd.DataFrame:
    """Each flow's goodput in every sampling interval of a ``flow_samples`` table: the
    bytes acknowledged (summed over subflows) between consecutive samples, as bit/s.

    Columns ``flow_id``, ``time_s`` (the interval's end) and ``rate_bps``; only intervals
    ending after ``after_s`` (e.g. a warm-up) are kept.
    """
    if samples.empty:
        return pd.DataFrame(columns=["flow_id", "time_s", "rate_bps"])
    acked = samples.groupby(["flow_id", "time_s"], as_index=False)["bytes_acked"].sum()
    acked = acked.sort_values(["flow_id", "time_s"])
    grouped = acked.groupby("flow_id")
    dt = grouped["time_s"].diff()
    rate = grouped["bytes_acked"].diff() * 8.0 / dt
    out = pd.DataFrame({"flow_id": acked["flow_id"], "time_s": acked["time_s"], "rate_bps": rate})
    out = out[out["rate_bps"].notna() & (out["time_s"] > after_s)]
    return out.reset_index(drop=True)
