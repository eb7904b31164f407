"""Executing one run of a sweep, in whichever process or Ray worker it was sent to."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Optional

from ..results import Results
from ..runner import run
from .spec import RunSpec


@dataclass
class Outcome:
    """What a worker hands back: the results, or the error that replaced them."""

    run_id: str
    wall_s: float
    results: Optional[Results] = None
    error: Optional[str] = None


def execute(task: RunSpec) -> Outcome:
    """Simulate one run. Never raises for a failed simulation: the error is the outcome."""
    start = time.perf_counter()
    try:
        res = run(task.text, seed=task.seed, base_dir=task.base_dir)
        return Outcome(task.run_id, time.perf_counter() - start, results=res)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a Rust panic arrives as pyo3's PanicException, a BaseException
        return Outcome(task.run_id, time.perf_counter() - start, error=traceback.format_exc())
