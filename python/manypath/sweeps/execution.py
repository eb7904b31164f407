"""Running a sweep: validate every point, skip what is stored, and run the rest on a pool
of local processes or on Ray, storing each outcome as it arrives.

Ctrl-C (SIGINT) stops a sweep in two steps. The first stops handing out runs and lets
the runs in progress finish; each is stored as it arrives. The second stops the runs in
progress at once (local workers are killed, Ray tasks cancelled) and drops them. Either
way every run stored before is whole, and ``sweep`` raises :class:`SweepInterrupted`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from ..results import jsonable
from ..runner import validate
from .errors import NO_RAY_CLUSTER, BackendUnavailable
from .spec import PathLike, RunSpec, Sweep, SweepError, SweepSpec, Threads, check_threads, expand
from .store import Lock, clean_temporaries, last_line, run_status, start_generation, store
from .worker import Outcome, execute


@dataclass
class SweepSummary:
    """What a sweep did. ``ok`` is true when every run of the sweep is stored without error.

    ``generation`` is the generation of the results directory the runs went to;
    ``new_generation`` is true when this sweep started it, and ``base_changes`` then lists
    what changed in the base scenario since the previous generation (None when that one
    recorded no base). ``interrupted`` is true when Ctrl-C stopped the sweep; ``dropped``
    counts the runs that were in progress and were stopped (not stored).
    """

    name: str
    results_dir: Path
    total: int
    skipped: int = 0
    ran: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    not_run: int = 0
    wall_s: float = 0.0
    backend: str = "local"
    generation: int = 0
    new_generation: bool = False
    previous_generation: Optional[int] = None
    base_changes: Optional[list[str]] = field(default_factory=list)
    interrupted: bool = False
    dropped: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and self.not_run == 0 and not self.interrupted

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
            "generation": self.generation,
            "new_generation": self.new_generation,
            "previous_generation": self.previous_generation,
            "base_changes": self.base_changes,
            "interrupted": self.interrupted,
            "dropped": self.dropped,
        }


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep. Raised once every finished run is stored; ``summary`` tells
    what was kept. A ``KeyboardInterrupt``, so code that does not look for it stops as on
    any Ctrl-C."""

    def __init__(self, summary: SweepSummary) -> None:
        super().__init__(f"sweep {summary.name} interrupted")
        self.summary = summary


Progress = Callable[[int, int, int], None]
"""Called after each stored run with (done, failed, remaining)."""


def _print_note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sweep(
    spec: SweepSpec,
    *,
    out: PathLike | None = None,
    jobs: int | None = None,
    ray: str | None = None,
    threads: Threads = None,
    base_dir: PathLike | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_interrupt: Callable[[str], None] | None = _print_note,
) -> SweepSummary:
    """Run a sweep: a sweep file path or the same document as a dict.

    Each run not yet stored in ``out`` (default: the file's ``results`` key, else
    ``results/<name>``) is simulated and written to ``out/<run-id>/``. Runs go to a pool
    of ``jobs`` local processes (default: every core), or to Ray when ``ray`` is an
    address, ``"auto"`` (a running cluster) or ``"local"`` (start one here); if Ray is
    already initialised in this process, that connection is used. Each run gets
    ``threads`` threads (a whole number or ``"auto"``, else the file's ``threads``);
    when neither is given, a run gets 1 thread if several run at once (more than one
    local worker, or Ray) and its scenario's own ``parallel.threads`` otherwise (see
    :func:`run_threads`). A failed run is
    recorded (``status = "failed"`` and ``error.txt``) and the others go on; rerunning
    retries it. If the base scenario differs from the one of the runs stored in ``out``,
    the runs start a new generation there (see :func:`load_sweep`); nothing stored is
    replaced. ``on_start(total, already_stored)`` is called once the stored runs are
    known, ``progress`` after each run, ``on_interrupt(message)`` on Ctrl-C (default: the
    message goes to stderr).

    Raises ``ValueError`` for an invalid sweep file or scenario, and
    :class:`SweepInterrupted` (a ``KeyboardInterrupt``) after Ctrl-C, once the finished
    runs are stored.
    """
    started = time.perf_counter()
    plan = expand(spec, base_dir)
    asked = check_threads(threads, "threads") if threads is not None else plan.threads
    _validate_all(plan)
    results_dir = Path(out) if out is not None else plan.results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    summary = SweepSummary(plan.name, results_dir, total=len(plan.runs), backend="ray" if ray else "local")
    stop = _Stop(on_interrupt)
    with Lock(results_dir):
        clean_temporaries(results_dir)
        gen = start_generation(results_dir, plan)
        summary.generation, summary.new_generation = gen.number, gen.new
        summary.previous_generation, summary.base_changes = gen.previous, gen.changes
        todo = [r for r in plan.runs if run_status(results_dir / r.run_id) != "ok"]
        summary.skipped = len(plan.runs) - len(todo)
        if on_start is not None:
            on_start(summary.total, summary.skipped)
        by_id = {r.run_id: r for r in todo}

        def record(outcome: Outcome) -> None:
            task = by_id[outcome.run_id]
            if outcome.interrupted:  # stopped part way: its tables are no result
                summary.dropped += 1
                return
            with stop.storing():
                store(results_dir, task, outcome, sweep=plan.name, generation=gen.number,
                      base_sha256=plan.base_digest)
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
            with stop.installed():
                if not todo:
                    pass
                elif ray:
                    summary.dropped += _run_ray(todo, ray, asked, record, stop)
                else:
                    summary.dropped += _run_local(todo, jobs, asked, record, stop)
        except KeyboardInterrupt:
            stop.requests = max(stop.requests, 1)
        finally:
            summary.not_run = summary.total - summary.skipped - summary.ran
            summary.wall_s = time.perf_counter() - started
            # A Ctrl-C during the last runs, which then finished, left nothing undone.
            summary.interrupted = stop.requests > 0 and summary.not_run > 0
    if summary.interrupted:
        raise SweepInterrupted(summary)
    return summary


def run_threads(asked: Threads, workers: int) -> Threads:
    """The threads each run of a sweep is given (``None``: its scenario's own
    ``parallel.threads``). What the sweep asks for, if anything; otherwise 1 thread when
    ``workers`` runs go at once: each already has a core (Ray and the local pool hand out
    one run per core by default), and a run's threads wait for each other at every
    synchronisation window, so threads sharing cores with other runs would slow it down
    instead of speeding it up. With one worker, the scenario decides (``"auto"`` by
    default: threads on fabrics of 512 hosts or more when the cores are free)."""
    if asked is not None:
        return asked
    return 1 if workers > 1 else None


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


class _Stop:
    """Ctrl-C during a sweep. The first stops handing out runs; the second raises
    KeyboardInterrupt at once, except while a run is being stored (the next check()
    raises it then), so no write is cut short."""

    def __init__(self, notify: Callable[[str], None] | None) -> None:
        self.requests = 0
        self.notify = notify
        self._storing = False
        self._told = False

    @property
    def soft(self) -> bool:
        return self.requests >= 1

    @property
    def hard(self) -> bool:
        return self.requests >= 2

    def _handler(self, signum: int, frame: Any) -> None:
        self.requests += 1
        if self.hard and not self._storing:
            raise KeyboardInterrupt
        try:
            self._tell()
        except (RuntimeError, OSError):
            pass  # stderr was being written when the signal came: check() tells in a moment

    @contextmanager
    def installed(self) -> Iterator[None]:
        # Signal handlers belong to the main thread; elsewhere Ctrl-C is not ours to take.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, self._handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @contextmanager
    def storing(self) -> Iterator[None]:
        # A second Ctrl-C meanwhile is acted on by the next check(), once the run is counted.
        self._storing = True
        try:
            yield
        finally:
            self._storing = False

    def check(self) -> None:
        """Tell about a new Ctrl-C once (outside the signal handler, where printing is
        safe), and raise KeyboardInterrupt on the second."""
        if self.hard:
            raise KeyboardInterrupt
        self._tell()

    def _tell(self) -> None:
        if self.soft and not self._told:
            if self.notify is not None:
                self.notify("interrupted: starting no more runs, finishing the runs in progress "
                            "(Ctrl-C again to stop them now)")
            self._told = True


def _run_local(todo: Sequence[RunSpec], jobs: int | None, asked: Threads, record: Callable[[Outcome], None],
               stop: _Stop) -> int:
    """Run ``todo`` here (``jobs`` = 1) or on a pool of processes; returns how many runs in
    progress a second Ctrl-C stopped."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    workers = min(jobs, len(todo))
    threads = run_threads(asked, workers)
    if workers == 1:
        # In this process, Ctrl-C reaches the handler while the simulator runs: the first
        # lets the run go on, the second stops it (its partial outcome is then dropped).
        for task in todo:
            stop.check()
            if stop.soft:
                break
            try:
                outcome = execute(replace(task, threads=threads))
            except KeyboardInterrupt:
                if stop.hard:
                    return 1
                raise
            record(outcome)
        stop.check()
        return 0
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    # spawn, not fork: the parent may hold threads (Ray, progress bar) that fork would copy
    # in an undefined state. Workers ignore SIGINT: Ctrl-C in a terminal reaches the whole
    # process group, and only this process decides what a Ctrl-C stops.
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_ignore_sigint)
    queue = deque(todo)
    pending: dict[Future[Outcome], RunSpec] = {}

    def hand_out() -> None:
        # Only as many runs as workers are ever handed out: those not started yet would
        # otherwise be started by the pool after a first Ctrl-C.
        while queue and len(pending) < workers and not stop.soft:
            task = queue.popleft()
            pending[pool.submit(execute, replace(task, threads=threads))] = task

    try:
        with _sigint_blocked():  # the workers start with SIGINT blocked, then ignore it
            hand_out()
        while pending:
            stop.check()
            done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
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
            hand_out()
        return 0
    except KeyboardInterrupt:
        dropped = len(pending)
        _kill_workers(pool)
        if stop.hard:
            return dropped
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    # A Ctrl-C while the pool starts its workers waits until they are started, instead of
    # reaching a worker before it ignores SIGINT; they inherit the blocked mask.
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _kill_workers(pool: Any) -> None:
    # ProcessPoolExecutor has no public way to stop a running call before Python 3.14
    # (kill_workers); its processes are in _processes.
    kill = getattr(pool, "kill_workers", None)
    if callable(kill):
        kill()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        p.kill()
    for p in procs:
        p.join(timeout=5)


def _ray_init(ray: Any, address: str) -> None:
    if address == "local":
        ray.init(include_dashboard=False, log_to_driver=False)
        return
    try:
        ray.init(address=address, log_to_driver=False)
    except ConnectionError as e:
        # Ray's own message points to its command line's --address, which is not ours.
        if address == "auto" and not os.environ.get("RAY_ADDRESS"):
            raise BackendUnavailable(NO_RAY_CLUSTER) from None
        where = address if address != "auto" else f"RAY_ADDRESS={os.environ['RAY_ADDRESS']}"
        raise BackendUnavailable(f"--ray {address}: could not connect to the Ray cluster at {where} ({e})") from None


def _run_ray(todo: Sequence[RunSpec], address: str, asked: Threads, record: Callable[[Outcome], None],
             stop: _Stop) -> int:
    """Run ``todo`` as Ray tasks; returns how many runs in progress a second Ctrl-C cancelled."""
    try:
        import ray
    except ImportError:
        raise BackendUnavailable("--ray needs Ray: pip install 'manypath[ray]'") from None
    if not ray.is_initialized():
        _ray_init(ray, address)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    # A run asked to take N threads reserves N CPUs; "auto" and 1 thread reserve one.
    per_run = min(asked, cpus) if isinstance(asked, int) else 1
    threads = run_threads(asked, cpus // per_run)
    remote = ray.remote(num_cpus=per_run)(execute)
    # As many tasks in flight as the cluster has room for: all of them running, so a first
    # Ctrl-C has nothing queued to take back (cancelling a task that runs interrupts it).
    slots = max(1, cpus // per_run)
    queue = deque(todo)
    pending: dict[Any, RunSpec] = {}

    def hand_out() -> None:
        while queue and len(pending) < slots and not stop.soft:
            task = queue.popleft()
            pending[remote.remote(replace(task, threads=threads))] = task

    try:
        hand_out()
        while pending:
            stop.check()
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception:  # the worker died or the task could not be scheduled
                    outcome = Outcome(task.run_id, 0.0, error=traceback.format_exc())
                record(outcome)
            hand_out()
        return 0
    except KeyboardInterrupt:
        if stop.hard:
            return len(pending)
        raise
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
