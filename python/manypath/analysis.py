"""Small, reusable statistics over the flow and queue tables of a run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Union

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


# --- Which flows an FCT statistic covers ------------------------------------------------------
#
# A flow of the table was generated; it started if its first packet left before the run
# ended; it was measured if it started inside the measurement window (after the warm-up);
# a measured flow of finite size either completed or was still running at the end
# (censored: its FCT is only known to exceed the time it ran). FCT statistics are over
# the completed measured flows, and always travel with these counts, so a percentile
# that left out slow flows says so. Result directories written before the `started`,
# `measured` and `ideal_fct_s` columns existed read as: every flow with a start time
# started, every flow measured, no ideal FCT (slowdown NaN).


def _mask(flows: pd.DataFrame, column: str, default: pd.Series) -> pd.Series:
    if column in flows.columns:
        return flows[column].fillna(False).astype(bool)
    return default


def started_mask(flows: pd.DataFrame) -> pd.Series:
    """Whether each flow started (its ``started`` column; a start time in older tables)."""
    fallback = flows["start_s"].notna() if "start_s" in flows.columns else pd.Series(True, index=flows.index)
    return _mask(flows, "started", fallback)


def measured_mask(flows: pd.DataFrame) -> pd.Series:
    """Whether each flow counts in FCT statistics: it started inside the measurement
    window (its ``measured`` column; every started flow in older tables)."""
    return _mask(flows, "measured", pd.Series(True, index=flows.index)) & started_mask(flows)


def finite_mask(flows: pd.DataFrame) -> pd.Series:
    """Whether each flow has a size, i.e. is not long-lived (size −1), so it can finish."""
    if "size" not in flows.columns:
        return pd.Series(True, index=flows.index)
    return flows["size"] >= 0


def measured_fct(flows: pd.DataFrame) -> pd.DataFrame:
    """The completed, measured flows: the rows every FCT statistic is over."""
    return flows[flows["completed"].astype(bool) & measured_mask(flows)]


def censored_mask(flows: pd.DataFrame) -> pd.Series:
    """Measured flows of finite size still running when the run ended."""
    return measured_mask(flows) & finite_mask(flows) & ~flows["completed"].astype(bool)


def slowdown(flows: pd.DataFrame) -> pd.Series:
    """Each flow's slowdown: its FCT over ``ideal_fct_s``, the FCT of a flow of its size
    alone on its idle path (1 is as fast as the network allows). NaN for unfinished
    flows and in tables without ``ideal_fct_s``."""
    if "ideal_fct_s" not in flows.columns:
        return pd.Series(math.nan, index=flows.index, dtype=float)
    ideal = flows["ideal_fct_s"].astype(float)
    fct = flows["fct_s"].astype(float).where(flows["completed"].astype(bool))
    return fct / ideal.where(ideal > 0)


#: The counts an FCT table carries beside its statistics, in order: ``flows`` (generated),
#: ``started``, ``unmeasured`` (started in the warm-up, left out), ``completed`` (measured
#: and finished), ``censored`` (measured, finite, unfinished), ``long_lived`` (measured,
#: no size: never meant to finish) and ``censored_pct`` (censored as a percentage of
#: completed + censored). started = unmeasured + completed + censored + long_lived.
COUNT_COLUMNS = ["flows", "started", "unmeasured", "completed", "censored", "long_lived", "censored_pct"]
FCT_COLUMNS = ["fct_mean_ms", "fct_p50_ms", "fct_p99_ms", "fct_max_ms"]
SLOWDOWN_COLUMNS = ["slowdown_mean", "slowdown_p50", "slowdown_p99"]


def flow_counts(flows: pd.DataFrame) -> dict[str, float]:
    """The counts of :data:`COUNT_COLUMNS` for one group of flows."""
    started = started_mask(flows)
    measured = measured_mask(flows)
    done = int((flows["completed"].astype(bool) & measured).sum())
    censored = int(censored_mask(flows).sum())
    return {
        "flows": len(flows),
        "started": int(started.sum()),
        "unmeasured": int((started & ~measured).sum()),
        "completed": done,
        "censored": censored,
        "long_lived": int((measured & ~finite_mask(flows)).sum()),
        "censored_pct": 100.0 * censored / (done + censored) if done + censored else math.nan,
    }


def _fct_row(g: pd.DataFrame) -> dict[str, float]:
    done = measured_fct(g)
    fct = done["fct_s"].to_numpy(dtype=float) * 1e3
    slow = slowdown(done).to_numpy(dtype=float)
    return {
        **flow_counts(g),
        **stat_columns(fct, ("mean", "p50", "p99", "max"), "fct"),
        **stat_columns(slow, ("mean", "p50", "p99"), "slowdown", unit=""),
    }


def _grouped(flows: pd.DataFrame, keys: list[str], row: Any, columns: list[str]) -> pd.DataFrame:
    if not keys:
        return pd.DataFrame([row(flows)], index=pd.Index(["all"], name="group"), columns=columns)
    # observed=False keeps every category of a categorical key (each size bucket), even
    # empty; dropna=False keeps the rows whose key is missing (a parameter a point left out).
    grouped = flows.groupby(keys if len(keys) > 1 else keys[0], sort=True, observed=False, dropna=False)
    rows = {name: row(g) for name, g in grouped}
    out = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    if len(keys) > 1:
        out.index = pd.MultiIndex.from_tuples(out.index, names=keys)
    else:
        out.index.name = keys[0]
    return out


def fct_stats(flows: pd.DataFrame, by: GroupBy = "class") -> pd.DataFrame:
    """Flow-completion-time statistics over the completed, measured flows, with the
    counts that say what they leave out.

    One row per group (or a single row labelled ``all`` when ``by`` is None) with the
    columns of :data:`COUNT_COLUMNS`, then fct_mean_ms, fct_p50_ms, fct_p99_ms,
    fct_max_ms and slowdown_mean, slowdown_p50, slowdown_p99 (NaN without an
    ``ideal_fct_s`` column).
    """
    out = _grouped(flows, _by_list(by), _fct_row, COUNT_COLUMNS + FCT_COLUMNS + SLOWDOWN_COLUMNS)
    ints = {c: int for c in COUNT_COLUMNS[:-1]}
    return out.fillna({c: 0 for c in ints}).astype(ints)


# --- Size buckets -----------------------------------------------------------------------------

#: Bucket edges in bytes: < 100 KB (queries, RPCs), 100 KB–10 MB, > 10 MB (background),
#: the split most data-center transport papers report. 1 KB = 1,000 bytes.
DEFAULT_SIZE_EDGES: tuple[float, ...] = (100e3, 10e6)


def size_label(n_bytes: float) -> str:
    """A byte count as a short label: ``100 KB``, ``10 MB``, ``1.5 GB`` (decimal units)."""
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if n_bytes >= scale:
            return f"{n_bytes / scale:g} {unit}"
    return f"{n_bytes:g} B"


def bucket_labels(edges: Sequence[float] = DEFAULT_SIZE_EDGES) -> list[str]:
    """The names of the buckets ``edges`` cut: ``< 100 KB``, ``100 KB–10 MB``, ``> 10 MB``."""
    _check_edges(edges)
    if not edges:
        return ["all sizes"]
    inner = [f"{size_label(a)}–{size_label(b)}" for a, b in zip(edges, edges[1:])]
    return [f"< {size_label(edges[0])}", *inner, f"> {size_label(edges[-1])}"]


def _check_edges(edges: Sequence[float]) -> None:
    values = [float(e) for e in edges]
    if any(not math.isfinite(e) or e <= 0 for e in values) or values != sorted(set(values)):
        raise ValueError(f"size bucket edges must be positive, finite and increasing, got {list(edges)}")


def size_bucket(flows: pd.DataFrame, edges: Sequence[float] = DEFAULT_SIZE_EDGES) -> pd.Series:
    """Each flow's size bucket (an ordered categorical named by :func:`bucket_labels`):
    a flow of exactly an edge's size falls in the bucket above it. Long-lived flows
    (size −1) fall in none (NaN)."""
    labels = bucket_labels(edges)
    sizes = flows["size"].astype(float)
    codes = np.searchsorted(np.asarray(edges, dtype=float), sizes.to_numpy(), side="right")
    codes = np.where(sizes.to_numpy() >= 0, codes, -1)
    return pd.Series(pd.Categorical.from_codes(codes, categories=labels, ordered=True),
                     index=flows.index, name="size_bucket")


def bucket_stats(flows: pd.DataFrame, edges: Sequence[float] = DEFAULT_SIZE_EDGES,
                 by: GroupBy = None) -> pd.DataFrame:
    """:func:`fct_stats` per size bucket (within each group of ``by``): counts, FCT and
    slowdown of the flows < 100 KB, 100 KB–10 MB and > 10 MB by default. Every bucket
    has a row, empty ones with zero counts and NaN statistics; long-lived flows are in none."""
    keys = [*_by_list(by), "size_bucket"]
    sized = flows[finite_mask(flows)]  # long-lived flows belong to no bucket
    return fct_stats(sized.assign(size_bucket=size_bucket(sized, edges)), by=keys)


# --- Censoring --------------------------------------------------------------------------------


def censoring_warnings(flows: pd.DataFrame, by: GroupBy = "class", *, threshold_pct: float = 1.0,
                       edges: Sequence[float] = DEFAULT_SIZE_EDGES, q: float = 99) -> list[str]:
    """A sentence for each group whose unfinished (censored) flows exceed ``threshold_pct``
    percent of its measured finite flows, naming the size bucket hit hardest: there the
    ``q``-th percentile FCT over finished flows understates the truth, since the flows it
    left out had run longer than many that finished."""
    out = []
    stats = fct_stats(flows, by=by)
    for name, row in stats.iterrows():
        if not row["censored_pct"] > threshold_pct:
            continue
        label = ", ".join(map(str, name)) if isinstance(name, tuple) else str(name)
        group = flows if by is None else _select(flows, _by_list(by), name)
        worst = bucket_stats(group, edges)["censored_pct"].dropna()
        censored, n = int(row["censored"]), int(row["completed"] + row["censored"])
        subject = f"p{q:g} FCT of {'all flows' if by is None else f'class {label}'} is a lower bound"
        if len(worst) > 1 and worst.max() > row["censored_pct"]:
            out.append(f"{subject}: {worst.max():.0f}% of its flows {worst.idxmax()} did not finish "
                       f"({censored:,} of {n:,}, {row['censored_pct']:.1f}%, in all)")
        else:
            out.append(f"{subject}: {censored:,} of its {n:,} flows ({row['censored_pct']:.1f}%) did not finish")
    return out


def _select(flows: pd.DataFrame, keys: list[str], name: Any) -> pd.DataFrame:
    values = name if isinstance(name, tuple) else (name,)
    mask = pd.Series(True, index=flows.index)
    for k, v in zip(keys, values):
        mask &= flows[k] == v
    return flows[mask]


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


# --- Uncertainty across seeds -----------------------------------------------------------------
#
# A sweep repeats each parameter combination with several seeds; each run gives one value
# of a statistic (its mean FCT, its p99, its goodput). The seeds are independent
# replications, so the n per-run values are an i.i.d. sample and the interval is over
# them: n is the number of runs (seeds), never the number of flows, whose FCTs within
# one run are correlated.

#: The confidence level of every interval unless told otherwise.
CI_LEVEL = 0.95
CI_METHODS = ("t", "bootstrap")


def _betacf(a: float, b: float, x: float) -> float:
    # Continued fraction of the regularized incomplete beta function (modified Lentz).
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on
    :func:`t_cdf`, to 1e-12)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile: need 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return 0.5 * (lo + hi)


def mean_ci(values: Numbers, level: float = CI_LEVEL, method: str = "t", *,
            resamples: int = 10_000, seed: int = 0) -> tuple[float, float, float, int]:
    """The mean of ``values`` (one per seed; NaN ignored) and a ``level`` confidence
    interval for it: ``(mean, low, high, n)``.

    ``method="t"``: mean ± t(1 − (1 − level)/2, n − 1) · s/√n, Student's t with the
    sample standard deviation s (exact for normal per-seed values, good for a handful of
    seeds). ``method="bootstrap"``: the percentile interval of the means of ``resamples``
    resamples with replacement (seeded by ``seed``, so reports are reproducible); it
    needs no normality but is too narrow for very few seeds. With fewer than two values
    the interval is NaN.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"mean_ci: level must lie strictly between 0 and 1, got {level}")
    if method not in CI_METHODS:
        raise ValueError(f"mean_ci: method must be one of {', '.join(CI_METHODS)}, got {method!r}")
    a = _array(values)
    a = a[~np.isnan(a)]
    n = int(a.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(a.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    if method == "t":
        half = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1) * float(a.std(ddof=1)) / math.sqrt(n)
        return mean, mean - half, mean + half, n
    rng = np.random.default_rng(seed)
    means = a[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    return mean, float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha)), n


def seed_aggregate(per_run: pd.DataFrame, by: GroupBy, columns: Sequence[str],
                   level: float = CI_LEVEL, method: str = "t") -> pd.DataFrame:
    """Aggregate a table with one row per run (per seed) over the seeds: for each group
    of ``by`` and each column, ``{column}`` (the mean over runs), ``{column}_ci_low``,
    ``{column}_ci_high`` (see :func:`mean_ci`), and ``runs``, the number of runs (n)."""
    keys = _by_list(by)

    def row(g: pd.DataFrame) -> dict[str, float]:
        out: dict[str, float] = {"runs": len(g)}
        for col in columns:
            mean, low, high, _ = mean_ci(g[col], level, method)
            out.update({col: mean, f"{col}_ci_low": low, f"{col}_ci_high": high})
        return out

    names = ["runs", *(f"{c}{s}" for c in columns for s in ("", "_ci_low", "_ci_high"))]
    return _grouped(per_run, keys, row, names).astype({"runs": int})


def sweep_fct_table(flows: pd.DataFrame, by: GroupBy, *, run: str = "run_id",
                    stats: Sequence[str] = ("fct_mean_ms", "fct_p99_ms", "slowdown_p99"),
                    level: float = CI_LEVEL, method: str = "t") -> pd.DataFrame:
    """A sweep's FCT table: per group of ``by`` (e.g. a parameter combination), the flow
    counts summed over its runs, and each statistic of ``stats`` computed per run and
    aggregated over the runs (seeds) with a confidence interval (:func:`seed_aggregate`)."""
    keys = _by_list(by)
    per_run = fct_stats(flows, by=[*keys, run])
    counts = per_run.groupby(level=keys if keys else None, sort=True)[COUNT_COLUMNS[:-1]].sum() \
        if keys else per_run[COUNT_COLUMNS[:-1]].sum().to_frame("all").T
    done = counts["completed"] + counts["censored"]
    counts["censored_pct"] = (100.0 * counts["censored"] / done.where(done > 0)).astype(float)
    agg = seed_aggregate(per_run.reset_index(), keys or None, stats, level, method)
    if not keys:
        agg.index = counts.index
    return counts.join(agg)
