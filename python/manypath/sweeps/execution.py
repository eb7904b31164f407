"""Running a sweep: validate every point, skip what is stored, and run the rest on a pool
of local processes or on Ray, storing each outcome as it arrives."""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results import jsonable
from ..runner import validate
from .spec import PathLike, RunSpec, Sweep, SweepError, SweepSpec, expand
from .store import Lock, clean_temporaries, last_line, run_status, store, write_manifest
from .worker import Outcome, execute


@dataclass
class SweepSummary:
    """What a sweep did. ``ok`` is true when every run of the sweep is stored without error."""

    name: str
    results_dir: Path
    total: int
    skipped: int = 0
    ran: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    not_run: int = 0
    wall_s: float = 0.0
    backend: str = "local"

    @property
    def ok(self) -> bool:
        return not self.failed and self.not_run == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "results_dir": str(self.results_dir),
            "backend": self.backend,
            "total": self.total,
            "completed": self.skipped + self.ran,
            "skipped": self.skipped,
            "ran": self.ran,
            "failed": len(self.failed),
            "not_run": self.not_run,
            "failed_runs": self.failed,
            "wall_s": self.wall_s,
        }


Progress = Callable[[int, int, int], None]
"""Called after each stored run with (done, failed, remaining)."""


def sweep(
    spec: SweepSpec,
    *,
    out: PathLike | None = None,
    jobs: int | None = None,
    ray: str | None = None,
    base_dir: PathLike | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> SweepSummary:
    """Run a sweep: a sweep file path or the same document as a dict.

    Each run not yet stored in ``out`` (default: the file's ``results`` key, else
    ``results/<name>``) is simulated and written to ``out/<run-id>/``. Runs go to a pool
    of ``jobs`` local processes (default: every core), or to Ray when ``ray`` is an
    address, ``"auto"`` (a running cluster) or ``"local"`` (start one here); if Ray is
    already initialised in this process, that connection is used. A failed run is
    recorded (``status = "failed"`` and ``error.txt``) and the others go on; rerunning
    retries it. ``on_start(total, already_stored)`` is called once the stored runs are
    known, ``progress`` after each run. Raises ``ValueError`` for an invalid sweep file
    or scenario.
    """
    started = time.perf_counter()
    plan = expand(spec, base_dir)
    _validate_all(plan)
    results_dir = Path(out) if out is not None else plan.results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    summary = SweepSummary(plan.name, results_dir, total=len(plan.runs), backend="ray" if ray else "local")
    with Lock(results_dir):
        clean_temporaries(results_dir)
        write_manifest(results_dir, plan)
        todo = [r for r in plan.runs if run_status(results_dir / r.run_id) != "ok"]
        summary.skipped = len(plan.runs) - len(todo)
        if on_start is not None:
            on_start(summary.total, summary.skipped)
        by_id = {r.run_id: r for r in todo}

        def record(outcome: Outcome) -> None:
            task = by_id[outcome.run_id]
            store(results_dir, plan.name, task, outcome)
            summary.ran += 1
            if outcome.error is not None:
                summary.failed.append(
                    {"run_id": task.run_id, "seed": task.seed, "params": task.params,
                     "error": last_line(outcome.error)}
                )
            if progress is not None:
                done = summary.skipped + summary.ran - len(summary.failed)
                progress(done, len(summary.failed), summary.total - summary.skipped - summary.ran)

        try:
            if not todo:
                pass
            elif ray:
                _run_ray(todo, ray, record)
            else:
                _run_local(todo, jobs, record)
        finally:
            summary.not_run = summary.total - summary.skipped - summary.ran
            summary.wall_s = time.perf_counter() - started
    return summary


def _validate_all(plan: Sweep) -> None:
    # A typo in a dotted path would otherwise fail every run of the sweep, one by one.
    problems = []
    checked: set[str] = set()
    for r in plan.runs:
        key = json.dumps(jsonable(r.params), sort_keys=True)
        if key in checked:  # seeds do not change validity
            continue
        checked.add(key)
        try:
            validate(r.text, base_dir=r.base_dir)
        except ValueError as e:
            label = ", ".join(f"{k}={v!r}" for k, v in r.params.items()) or "base scenario"
            problems.append(f"{label}:\n  " + str(e).replace("\n", "\n  "))
    if problems:
        raise SweepError("invalid scenario for:\n" + "\n".join(problems))


def _run_local(todo: Sequence[RunSpec], jobs: int | None, record: Callable[[Outcome], None]) -> None:
    jobs = max(1, jobs or os.cpu_count() or 1)
    if jobs == 1 or len(todo) == 1:
        for task in todo:
            record(execute(task))
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    # spawn, not fork: the parent may hold threads (Ray, progress bar) that fork would copy
    # in an undefined state.
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx)
    try:
        pending = {pool.submit(execute, t): t for t in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                task = pending.pop(fut)
                try:
                    outcome = fut.result()
                except BrokenProcessPool:
                    raise RuntimeError(
                        "a worker process died (out of memory or killed?); "
                        "rerun the sweep to run what is left"
                    ) from None
                except Exception:
                    outcome = Outcome(task.run_id, 0.0, error=traceback.format_exc())
                record(outcome)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _run_ray(todo: Sequence[RunSpec], address: str, record: Callable[[Outcome], None]) -> None:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'manypath[ray]'") from None
    if not ray.is_initialized():
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(execute)
    pending = {remote.remote(t): t for t in todo}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception:  # the worker died or the task could not be scheduled
                    outcome = Outcome(task.run_id, 0.0, error=traceback.format_exc())
                record(outcome)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
