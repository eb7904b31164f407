"""Executing one run of a sweep, in whichever process or Ray worker it was sent to."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Any, Optional

from .. import provenance
from ..results import Results
from ..runner import run
from .spec import RunSpec


@dataclass
class Outcome:
    """What a worker hands back: the results, or the error that replaced them.

    ``provenance`` is taken where the run ran (a Ray node may have another manypath
    installed than the driver). ``interrupted`` marks a run stopped before its end (a
    Ctrl-C that reached the worker): its tables cover part of the simulated time, so it
    is never stored as a result.
    """

    run_id: str
    wall_s: float
    results: Optional[Results] = None
    error: Optional[str] = None
    provenance: Optional[dict[str, Any]] = None
    interrupted: bool = False


def execute(task: RunSpec) -> Outcome:
    """Simulate one run, on ``task.threads`` threads (replacing the scenario's
    ``parallel.threads``; ``None``: the scenario's own). Never raises for a failed
    simulation: the error is the outcome."""
    record = provenance.record(task.text, task.seed)
    start = time.perf_counter()
    try:
        res = run(task.text, seed=task.seed, base_dir=task.base_dir, threads=task.threads)
        wall = time.perf_counter() - start
        record["threads"] = res.provenance.get("threads")
        if res.counters.get("partial"):
            return Outcome(task.run_id, wall, provenance=record, interrupted=True)
        return Outcome(task.run_id, wall, results=res, provenance=record)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a Rust panic arrives as pyo3's PanicException, a BaseException
        return Outcome(task.run_id, time.perf_counter() - start, error=traceback.format_exc(), provenance=record)
