"""Collective operations' results: the ``collectives`` table (one row per run of a
collective job, i.e. per iteration) and ``collective_steps`` (one row per step of each),
summarised per job for the printed summary, ``--json`` and the report.

A collective's completion time (CCT) runs from its first flow's start to the last byte
of its last flow reaching its receiver; ``ideal_cct_s`` is the α–β lower bound on the
fabric's rates and delays (the algorithm's transfers alone on their idle paths, as the
run orders them); ``slowdown`` is their ratio; ``jct_s`` is the job's time from its first
iteration's start to this iteration's end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Only types: the summary's text needs no pandas (quick CLI start-up).
    import pandas as pd

COLLECTIVES_FILE = "collectives.parquet"
COLLECTIVE_COLUMNS = [
    "job", "iteration", "collective", "algorithm", "ranks", "bytes", "flows", "completed",
    "start_s", "end_s", "cct_s", "ideal_cct_s", "slowdown", "jct_s", "straggler_rank",
    "straggler_host",
]
COLLECTIVE_STEPS_FILE = "collective_steps.parquet"
COLLECTIVE_STEP_COLUMNS = ["collective_id", "step", "flows", "bytes", "start_s", "end_s", "duration_s"]


def job_summary(collectives: pd.DataFrame) -> list[dict[str, Any]] | None:
    """Per collective job: what it is, its iterations and how many completed, the CCT's
    mean, median and maximum over the completed ones, the α–β bound, the slowdown's mean
    and maximum, and the job's completion time (its last completed iteration's
    ``jct_s``). ``None`` when the run has no collectives."""
    if not len(collectives):
        return None
    out = []
    for job, g in collectives.groupby("job", sort=True):
        done = g[g["completed"].astype(bool)]
        cct = done["cct_s"].astype(float)
        slow = done["slowdown"].astype(float)
        first = g.iloc[0]
        out.append({
            "job": int(job),  # type: ignore[call-overload]
            "collective": str(first["collective"]),
            "algorithm": str(first["algorithm"]),
            "ranks": int(first["ranks"]),
            "bytes": int(first["bytes"]),
            "iterations": int(len(g)),
            "completed": int(len(done)),
            "cct_mean_s": _finite(cct.mean()),
            "cct_p50_s": _finite(cct.median()),
            "cct_max_s": _finite(cct.max()),
            "ideal_cct_s": _finite(g["ideal_cct_s"].astype(float).mean()),
            "slowdown_mean": _finite(slow.mean()),
            "slowdown_max": _finite(slow.max()),
            "jct_s": _finite(done["jct_s"].astype(float).max()) if len(done) else None,
        })
    return out


def collective_rows(jobs: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The printed summary's collectives table: headers and one row per job (times in ms)."""
    def ms(v: Any) -> str:
        return "-" if v is None else f"{float(v) * 1e3:.4g}"

    def x(v: Any) -> str:
        return "-" if v is None else f"{float(v):.3f}"

    headers = ["job", "collective", "algorithm", "ranks", "MB", "done", "CCT mean (ms)", "max (ms)",
               "ideal (ms)", "slowdown", "JCT (ms)"]
    rows = [[str(j["job"]), j["collective"], j["algorithm"], str(j["ranks"]), f"{j['bytes'] / 1e6:.4g}",
             f"{j['completed']}/{j['iterations']}", ms(j["cct_mean_s"]), ms(j["cct_max_s"]),
             ms(j["ideal_cct_s"]), x(j["slowdown_mean"]), ms(j["jct_s"])] for j in jobs]
    return headers, rows


def _finite(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
