"""Parameter sweeps: expand a sweep file into runs, execute them, store each one atomically.

A sweep is a base scenario, overrides by dotted path (a grid, a list of points, or both)
and seeds. Every run is identified by a hash of the exact scenario it simulates (seed
included), so rerunning a sweep skips what is already stored, and growing a grid only
runs the new points. Workers only simulate; the driver process writes every result, so
a Ray cluster needs no shared filesystem and no two writers ever touch one directory.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import itertools
import json
import os
import shutil
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from . import _toml
from .results import Results, jsonable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PathLike = Union[str, "os.PathLike[str]"]
SweepSpec = Union[PathLike, Mapping[str, Any]]

RUN_FILE = "run.json"
SCENARIO_FILE = "scenario.toml"
ERROR_FILE = "error.txt"
SWEEP_FILE = "sweep.json"
LOCK_FILE = ".lock"
TMP_PREFIX = ".tmp-"

_SWEEP_KEYS = {"name", "scenario", "grid", "points", "seeds", "results"}


class SweepError(ValueError):
    """A sweep file that cannot be expanded into runs (the message names the key)."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: the exact scenario, its seed and the parameters that made it."""

    run_id: str
    seed: int
    params: dict[str, Any]
    scenario: dict[str, Any]
    text: str
    base_dir: str


@dataclass(frozen=True)
class Sweep:
    """A sweep file expanded: its runs in grid order and where results go by default."""

    name: str
    params: list[str]
    runs: list[RunSpec]
    results_dir: Path


@dataclass
class Outcome:
    """What a worker hands back: the results, or the error that replaced them."""

    run_id: str
    wall_s: float
    results: Optional[Results] = None
    error: Optional[str] = None


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


# --- Expanding a sweep file -----------------------------------------------------------------


def read_spec(spec: SweepSpec, base_dir: PathLike | None = None) -> tuple[dict[str, Any], Path, str]:
    """The sweep document, the directory its relative paths resolve against, and its name."""
    if isinstance(spec, Mapping):
        root = Path(base_dir).resolve() if base_dir is not None else Path.cwd()
        doc = dict(spec)
        return doc, root, str(doc.get("name") or "sweep")
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(2, "sweep file not found", str(path))
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML: {e}") from None
    root = Path(base_dir).resolve() if base_dir is not None else path.resolve().parent
    return doc, root, str(doc.get("name") or path.stem)


def expand(spec: SweepSpec, base_dir: PathLike | None = None) -> Sweep:
    """Every run of a sweep, in grid order (points, then grid, then seeds, last fastest)."""
    doc, root, name = read_spec(spec, base_dir)
    unknown = sorted(set(doc) - _SWEEP_KEYS)
    if unknown:
        raise SweepError(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(_SWEEP_KEYS))}")
    base, scenario_dir = _base_scenario(doc.get("scenario"), root)
    combos = _combinations(doc.get("grid"), doc.get("points"))
    seeds = _seeds(doc.get("seeds"), base)
    params = list(dict.fromkeys(k for c in combos for k in c))

    runs: list[RunSpec] = []
    seen: set[str] = set()
    for combo in combos:
        for seed in seeds:
            scenario = copy.deepcopy(base)
            for path, value in combo.items():
                set_path(scenario, path, value)
            scenario["seed"] = seed
            run_id = run_id_of(scenario)
            if run_id in seen:
                raise SweepError(f"two runs simulate the same scenario (seed {seed}, {combo}); "
                                 "the grid or points repeat a value")
            seen.add(run_id)
            runs.append(RunSpec(run_id, seed, dict(combo), scenario, _toml.dumps(scenario), str(scenario_dir)))

    results = doc.get("results")
    if results is not None and not isinstance(results, str):
        raise SweepError("results: must be a directory path (a string)")
    out = (root / results) if results else Path("results") / name
    return Sweep(name=name, params=params, runs=runs, results_dir=out)


def _base_scenario(value: Any, root: Path) -> tuple[dict[str, Any], Path]:
    if value is None:
        raise SweepError("scenario: missing; give a scenario file path or an inline [scenario] table")
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value)), root
    if not isinstance(value, str):
        raise SweepError("scenario: must be a file path or a table")
    path = (root / value).resolve()
    if not path.is_file():
        raise FileNotFoundError(2, "scenario file not found", str(path))
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), path.parent
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"scenario {path}: not valid TOML: {e}") from None


def _flatten_grid(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    # `"network.queue.ecn_k_packets" = [..]` and unquoted `network.queue.ecn_k_packets = [..]`
    # (which TOML turns into nested tables) must mean the same; grid leaves are lists, so
    # nesting is unambiguous here.
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten_grid(value, path + ".")
        else:
            yield path, value


def _combinations(grid: Any, points: Any) -> list[dict[str, Any]]:
    point_list: list[dict[str, Any]] = [{}]
    if points is not None:
        if not isinstance(points, list) or not all(isinstance(p, Mapping) for p in points) or not points:
            raise SweepError("points: must be a non-empty array of tables ([[points]])")
        point_list = [dict(p) for p in points]
        for i, p in enumerate(point_list):
            for key in p:
                _check_param(key, f"points[{i}]")
    grid_list: list[dict[str, Any]] = [{}]
    if grid is not None:
        if not isinstance(grid, Mapping):
            raise SweepError("grid: must be a table of dotted path = [values]")
        axes = list(_flatten_grid(grid))
        for path, values in axes:
            _check_param(path, "grid")
            if not isinstance(values, list) or not values:
                raise SweepError(f'grid."{path}": must be a non-empty array of values, got {values!r}')
        grid_list = [dict(zip((p for p, _ in axes), combo)) for combo in itertools.product(*(v for _, v in axes))]
    combos = []
    for p in point_list:
        for g in grid_list:
            clash = set(p) & set(g)
            if clash:
                raise SweepError(f"{', '.join(sorted(clash))}: set by both points and grid")
            combos.append({**p, **g})
    return combos


def _check_param(path: str, where: str) -> None:
    if path == "seed":
        raise SweepError(f'{where}: "seed" is not a parameter; list the seeds in `seeds`')
    if not path or any(part == "" for part in path.split(".")):
        raise SweepError(f"{where}: {path!r} is not a dotted field path")


def _seeds(value: Any, base: Mapping[str, Any]) -> list[int]:
    if value is None:
        return [int(base.get("seed", 1))]
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SweepError(f"seeds: a count must be ≥ 1, got {value}")
        return list(range(1, value + 1))
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        if len(set(value)) != len(value):
            raise SweepError("seeds: repeated seed")
        return list(value)
    raise SweepError(f"seeds: must be a count or a non-empty array of integers, got {value!r}")


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set ``doc[a][b][0][c] = value`` for ``path = "a.b.0.c"``; list indices are numbers.

    Missing tables on the way are created (so a grid can set a field the base scenario
    leaves at its default); a missing list element is an error, naming the path.
    """
    parts = path.split(".")
    node: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit():
                raise SweepError(f"{path}: {'.'.join(parts[:i]) or 'scenario'} is an array; "
                                 f"use a number, not {part!r}")
            index = int(part)
            if index >= len(node):
                raise SweepError(f"{path}: {here} does not exist (the array has {len(node)} entries)")
            if last:
                node[index] = copy.deepcopy(value)
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = copy.deepcopy(value)
            else:
                node = node.setdefault(part, {})
        else:
            raise SweepError(f"{path}: {'.'.join(parts[:i])} is a value ({node!r}), not a table")


def run_id_of(scenario: Mapping[str, Any]) -> str:
    """A stable name for a scenario with its seed: equal scenarios get equal ids anywhere."""
    canonical = json.dumps(jsonable(scenario), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


# --- Executing one run (in a worker) ----------------------------------------------------------


def execute(task: RunSpec) -> Outcome:
    """Simulate one run. Never raises for a failed simulation: the error is the outcome."""
    start = time.perf_counter()
    try:
        from . import run

        res = run(task.text, seed=task.seed, base_dir=task.base_dir)
        return Outcome(task.run_id, time.perf_counter() - start, results=res)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # a Rust panic arrives as pyo3's PanicException, a BaseException
        return Outcome(task.run_id, time.perf_counter() - start, error=traceback.format_exc())


# --- Storing runs -------------------------------------------------------------------------


def run_status(directory: Path) -> Optional[str]:
    """``"ok"`` or ``"failed"`` for a stored run directory, None when there is none."""
    try:
        meta = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    status = meta.get("status")
    return status if isinstance(status, str) else None


def store(out: Path, sweep_name: str, task: RunSpec, outcome: Outcome) -> None:
    """Write one run into ``out/<run-id>/`` so that it appears complete or not at all.

    Everything goes into a hidden temporary directory that is renamed into place last;
    readers and reruns only look at directories with the final name.
    """
    from . import __version__

    tmp = out / f"{TMP_PREFIX}{task.run_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        (tmp / SCENARIO_FILE).write_text(task.text, encoding="utf-8")
        meta: dict[str, Any] = {
            "run_id": task.run_id,
            "sweep": sweep_name,
            "status": "ok" if outcome.error is None else "failed",
            "seed": task.seed,
            "params": task.params,
            "version": __version__,
            "wall_s": outcome.wall_s,
            "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        if outcome.results is not None:
            outcome.results.to_parquet(tmp)
        if outcome.error is not None:
            (tmp / ERROR_FILE).write_text(outcome.error, encoding="utf-8")
            meta["error"] = _last_line(outcome.error)
        (tmp / RUN_FILE).write_text(json.dumps(jsonable(meta), indent=2) + "\n", encoding="utf-8")
        _fsync_dir(tmp)
        final = out / task.run_id
        if final.exists():
            # Only a failed run is ever replaced (a rerun retries it); move it aside first
            # so the final name never points at a mix of old and new files.
            trash = out / f"{TMP_PREFIX}old-{task.run_id}-{uuid.uuid4().hex[:8]}"
            os.rename(final, trash)
            os.rename(tmp, final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.rename(tmp, final)
        _fsync_dir(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fsync_dir(path: Path) -> None:
    # Makes a completed run survive a power cut, not just a crash of this process.
    for child in [*path.iterdir(), path] if path.is_dir() else []:
        try:
            fd = os.open(child, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "unknown error"


class _Lock:
    """An exclusive lock on a results directory: two sweeps writing into one would each
    delete the other's temporary directories."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_FILE
        self.fd: Optional[int] = None

    def __enter__(self) -> _Lock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover  (no flock on this platform)
            pass
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise RuntimeError(f"{self.path.parent}: another sweep is writing into this directory") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock


def _clean_temporaries(out: Path) -> None:
    for child in out.glob(f"{TMP_PREFIX}*"):
        shutil.rmtree(child, ignore_errors=True)


def _write_manifest(out: Path, sweep: Sweep) -> None:
    doc = {
        "name": sweep.name,
        "params": sweep.params,
        "runs": [{"run_id": r.run_id, "seed": r.seed, "params": r.params} for r in sweep.runs],
    }
    tmp = out / f"{TMP_PREFIX}{SWEEP_FILE}"
    tmp.write_text(json.dumps(jsonable(doc), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / SWEEP_FILE)


# --- Running a sweep ------------------------------------------------------------------------

Progress = Callable[[int, int, int], None]
"""Called after each stored run with (done, failed, remaining)."""


def run_sweep(
    spec: SweepSpec,
    *,
    out: PathLike | None = None,
    jobs: int | None = None,
    ray: str | None = None,
    base_dir: PathLike | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> SweepSummary:
    """Run every run of a sweep that is not stored yet; see :func:`manypath.sweep`."""
    started = time.perf_counter()
    sweep = expand(spec, base_dir)
    _validate_all(sweep)
    results_dir = Path(out) if out is not None else sweep.results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    summary = SweepSummary(sweep.name, results_dir, total=len(sweep.runs), backend="ray" if ray else "local")
    with _Lock(results_dir):
        _clean_temporaries(results_dir)
        _write_manifest(results_dir, sweep)
        todo = [r for r in sweep.runs if run_status(results_dir / r.run_id) != "ok"]
        summary.skipped = len(sweep.runs) - len(todo)
        if on_start is not None:
            on_start(summary.total, summary.skipped)
        by_id = {r.run_id: r for r in todo}

        def record(outcome: Outcome) -> None:
            task = by_id[outcome.run_id]
            store(results_dir, sweep.name, task, outcome)
            summary.ran += 1
            if outcome.error is not None:
                summary.failed.append(
                    {"run_id": task.run_id, "seed": task.seed, "params": task.params,
                     "error": _last_line(outcome.error)}
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


def _validate_all(sweep: Sweep) -> None:
    # A typo in a dotted path would otherwise fail every run of the sweep, one by one.
    from . import validate

    problems = []
    checked: set[str] = set()
    for r in sweep.runs:
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


# --- Loading a sweep -------------------------------------------------------------------------


@dataclass
class SweepResults:
    """Every stored run of a sweep directory, combined.

    ``flows`` and ``queues`` are the runs' tables stacked, each row with its run_id,
    seed and one column per sweep parameter (named by its dotted path); ``runs`` has one
    row per run (status, seed, parameters, wall time, error).
    """

    flows: Any
    queues: Any
    runs: Any
    params: list[str]
    name: str = ""
    directory: Path = Path(".")

    def results(self, run_id: str) -> Results:
        """The tables of one run alone."""
        from .results import load_run

        return load_run(self.directory / run_id)


def is_sweep_dir(directory: Path) -> bool:
    return (directory / SWEEP_FILE).is_file() or any(
        (d / RUN_FILE).is_file() for d in _run_dirs(directory)
    )


def _run_dirs(directory: Path) -> Iterable[Path]:
    if not directory.is_dir():
        return []
    return sorted(d for d in directory.iterdir() if d.is_dir() and not d.name.startswith("."))


def param_value(value: Any) -> Any:
    """A parameter as a DataFrame cell: tables and arrays become their JSON text, so the
    column can be grouped on."""
    if isinstance(value, (Mapping, list)):
        return json.dumps(jsonable(value), sort_keys=True)
    return value


def load_sweep(directory: PathLike) -> SweepResults:
    import pandas as pd

    from .results import load_run

    src = Path(directory)
    manifest: dict[str, Any] = {}
    if (src / SWEEP_FILE).is_file():
        manifest = json.loads((src / SWEEP_FILE).read_text(encoding="utf-8"))
    metas = []
    for d in _run_dirs(src):
        if (d / RUN_FILE).is_file():
            metas.append(json.loads((d / RUN_FILE).read_text(encoding="utf-8")))
    # Grid order when the manifest knows it (the order a reader expects a table in),
    # then any runs stored by other sweeps into the same directory.
    order = {r["run_id"]: i for i, r in enumerate(manifest.get("runs", []))}
    metas.sort(key=lambda m: (order.get(m["run_id"], len(order)), m["run_id"]))
    params = list(manifest.get("params", []))
    for m in metas:
        params.extend(p for p in m.get("params", {}) if p not in params)

    flows, queues, rows = [], [], []
    for m in metas:
        run_id = m["run_id"]
        values = {p: param_value(m.get("params", {}).get(p)) for p in params}
        row = {"run_id": run_id, "status": m.get("status"), "seed": m.get("seed"), **values,
               "wall_s": m.get("wall_s"), "error": m.get("error")}
        if m.get("status") == "ok":
            res = load_run(src / run_id)
            for frame, acc in ((res.flows, flows), (res.queues, queues)):
                acc.append(frame.assign(run_id=run_id, seed=m.get("seed"), **values))
            row["sim_time_s"] = res.counters.get("sim_time_s")
            row["flows"] = len(res.flows)
            row["completed"] = int(res.flows["completed"].sum()) if len(res.flows) else 0
        rows.append(row)
    key = ["run_id", "seed", *params]
    return SweepResults(
        flows=_stack(pd, flows, key),
        queues=_stack(pd, queues, key),
        runs=pd.DataFrame(rows, columns=["run_id", "status", "seed", *params, "wall_s", "error",
                                         "sim_time_s", "flows", "completed"]),
        params=params,
        name=str(manifest.get("name", src.name)),
        directory=src,
    )


def _stack(pd: Any, frames: list[Any], key: list[str]) -> Any:
    if not frames:
        return pd.DataFrame(columns=key)
    out = pd.concat(frames, ignore_index=True)
    # The identifying columns first, so a printed table reads run by run.
    return out[key + [c for c in out.columns if c not in key]]
