"""A sweep's results directory: one directory per run, written so that it appears complete
or not at all, the runs' status, the manifest with its generations, and the lock against a
second writer.

A *generation* is every run stored here under one base scenario (identified by the
SHA-256 of its canonical JSON). Rerunning a sweep whose base changed starts a new
generation beside the old one: run directories are named by the hash of their whole
scenario (but ``[parallel]``, which never changes results), so the two never share a
directory unless they simulate the same thing, and
the manifest lists which runs belong to which generation. Readers take the current
generation (the latest sweep's) unless asked for more.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .._json import jsonable
from ..provenance import PROVENANCE_FILE, SCENARIO_FILE, now_utc, version
from .spec import RunSpec, Sweep, differences

if TYPE_CHECKING:  # planning a sweep (--dry-run) imports no results, hence no pandas
    from .worker import Outcome

RUN_FILE = "run.json"
ERROR_FILE = "error.txt"
SWEEP_FILE = "sweep.json"
LOCK_FILE = ".lock"
TMP_PREFIX = ".tmp-"
OLD_PREFIX = f"{TMP_PREFIX}old-"
ATTEMPTS_DIR = "failed-attempts"
MANIFEST_FORMAT = 2


def run_status(directory: Path) -> Optional[str]:
    """``"ok"`` or ``"failed"`` for a stored run directory, None when there is none."""
    try:
        meta = json.loads((directory / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    status = meta.get("status")
    return status if isinstance(status, str) else None


def stored_runs(out: Path) -> list[Path]:
    """The run directories under ``out`` (those holding a run.json), by name."""
    if not out.is_dir():
        return []
    return sorted(d for d in out.iterdir() if d.is_dir() and not d.name.startswith(".") and (d / RUN_FILE).is_file())


def store(out: Path, task: RunSpec, outcome: Outcome, *, sweep: str, generation: int, base_sha256: str) -> None:
    """Write one run into ``out/<run-id>/`` so that it appears complete or not at all.

    Everything goes into a hidden temporary directory that is renamed into place last;
    readers and reruns only look at directories with the final name. A stored ``ok`` run
    is never replaced; a failed one is (a rerun retries it), its files kept in the new
    directory's ``failed-attempts/<n>/``.
    """
    if outcome.interrupted:
        raise ValueError(f"run {task.run_id} was interrupted: its partial tables are not a result")
    final = out / task.run_id
    if run_status(final) == "ok":
        return  # the same scenario is stored already; what is stored stays as it is
    tmp = out / f"{TMP_PREFIX}{task.run_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        (tmp / SCENARIO_FILE).write_text(task.text, encoding="utf-8")
        meta: dict[str, Any] = {
            "run_id": task.run_id,
            "sweep": sweep,
            "generation": generation,
            "base_sha256": base_sha256,
            "status": "ok" if outcome.error is None else "failed",
            "seed": task.seed,
            "params": task.params,
            "version": (outcome.provenance or {}).get("manypath_version", version()),
            "wall_s": outcome.wall_s,
            "finished_at": now_utc(),
        }
        if outcome.results is not None:
            outcome.results.write_into(tmp)
        if outcome.provenance is not None:
            (tmp / PROVENANCE_FILE).write_text(json.dumps(jsonable(outcome.provenance), indent=2) + "\n",
                                               encoding="utf-8")
        if outcome.error is not None:
            (tmp / ERROR_FILE).write_text(outcome.error, encoding="utf-8")
            meta["error"] = last_line(outcome.error)
        if final.is_dir():
            meta["failed_attempts"] = _keep_attempts(final, tmp / ATTEMPTS_DIR)
        (tmp / RUN_FILE).write_text(json.dumps(jsonable(meta), indent=2) + "\n", encoding="utf-8")
        _fsync_dir(tmp)
        if final.exists():
            # Move the failed run aside first so the final name never points at a mix of old
            # and new files; its files are in the new directory already. A crash between the
            # two renames leaves the old one under OLD_PREFIX: the next sweep puts it back.
            trash = out / f"{OLD_PREFIX}{task.run_id}-{uuid.uuid4().hex[:8]}"
            os.rename(final, trash)
            os.rename(tmp, final)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.rename(tmp, final)
        _fsync_dir(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _keep_attempts(failed: Path, into: Path) -> int:
    """Copy a failed run's files (and its own earlier attempts) into ``into/1``, ``into/2``…;
    returns how many attempts failed before."""
    into.mkdir()
    earlier = sorted((p for p in (failed / ATTEMPTS_DIR).glob("*") if p.name.isdigit()), key=lambda p: int(p.name))
    for p in earlier:
        shutil.copytree(p, into / p.name)
    n = len(earlier) + 1
    shutil.copytree(failed, into / str(n), ignore=shutil.ignore_patterns(ATTEMPTS_DIR))
    return n


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


def last_line(text: str) -> str:
    """The line of an error (a traceback) that names it, for run.json and the summary."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "unknown error"


class Lock:
    """An exclusive lock on a results directory: two sweeps writing into one would each
    delete the other's temporary directories."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_FILE
        self.fd: Optional[int] = None

    def __enter__(self) -> Lock:
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


def clean_temporaries(out: Path) -> None:
    """Remove what a stopped writer left half-written; a failed run caught moved aside
    while being replaced goes back to its name."""
    for child in sorted(out.glob(f"{TMP_PREFIX}*")):
        if child.name.startswith(OLD_PREFIX) and child.is_dir():
            run_id = child.name[len(OLD_PREFIX):].rsplit("-", 1)[0]
            if not (out / run_id).exists():
                os.rename(child, out / run_id)
                continue
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


# --- The manifest and its generations ---------------------------------------------------------


def read_manifest(out: Path) -> dict[str, Any]:
    """The manifest of a results directory: ``generations`` (each with its number, base
    digest and base scenario, parameters and runs) and ``current``, the generation of the
    latest sweep. A directory written before generations were recorded, or without a
    manifest, reads as one legacy generation (``base_sha256`` None) of every stored run."""
    doc: dict[str, Any] = {}
    path = out / SWEEP_FILE
    if path.is_file():
        doc = json.loads(path.read_text(encoding="utf-8"))
    if "generations" in doc:
        return doc
    metas = {d.name: json.loads((d / RUN_FILE).read_text(encoding="utf-8")) for d in stored_runs(out)}
    if not metas:
        return {"format": MANIFEST_FORMAT, "name": doc.get("name"), "current": None, "generations": []}
    listed = [r for r in doc.get("runs", []) if r.get("run_id") in metas]
    known = {r["run_id"] for r in listed}
    runs = listed + [{"run_id": k, "seed": m.get("seed"), "params": m.get("params", {})}
                     for k, m in metas.items() if k not in known]
    params = list(doc.get("params", []))
    for r in runs:
        params.extend(p for p in r.get("params", {}) if p not in params)
    legacy = {"generation": 1, "base_sha256": None, "legacy": True, "name": doc.get("name"), "params": params,
              "runs": runs}
    return {"format": MANIFEST_FORMAT, "name": doc.get("name"), "current": 1, "generations": [legacy]}


@dataclass(frozen=True)
class GenerationStart:
    """Which generation a sweep writes into: its number, whether this sweep started it, and
    what changed in the base scenario since the generation that was current before
    (empty when there was none or it is the same; None when that one recorded no base)."""

    number: int
    new: bool
    previous: Optional[int]
    changes: Optional[list[str]]


def plan_generation(out: Path, sweep: Sweep) -> GenerationStart:
    """The generation ``sweep`` would write into in ``out``, recording nothing."""
    return _generation(read_manifest(out), sweep)[1]


def start_generation(out: Path, sweep: Sweep) -> GenerationStart:
    """Record ``sweep`` in the manifest of ``out`` before any of its runs is stored: its
    runs join the generation of its base scenario (a new generation when no sweep here had
    this base), which becomes the current one."""
    doc = read_manifest(out)
    gen, start = _generation(doc, sweep)
    if gen is None:
        gen = {"generation": start.number, "base_sha256": sweep.base_digest, "base_scenario": sweep.base,
               "name": sweep.name, "params": [], "runs": [], "created_at": now_utc()}
        doc["generations"].append(gen)
    gen["name"] = sweep.name
    gen["last_run_at"] = now_utc()
    gen["params"] = list(dict.fromkeys([*sweep.params, *gen["params"]]))
    gen["runs"] = _merge_runs(gen["runs"], ({"run_id": r.run_id, "seed": r.seed, "params": r.params}
                                            for r in sweep.runs))
    # The top-level name, params and runs are the current generation's, as before generations.
    doc.update(format=MANIFEST_FORMAT, name=sweep.name, current=gen["generation"],
               base_sha256=sweep.base_digest, params=gen["params"], runs=gen["runs"])
    _write_json(out, SWEEP_FILE, doc)
    return start


def _generation(doc: dict[str, Any], sweep: Sweep) -> tuple[Optional[dict[str, Any]], GenerationStart]:
    gens: list[dict[str, Any]] = doc["generations"]
    previous = next((g for g in gens if g["generation"] == doc.get("current")), None)
    gen = next((g for g in gens if g.get("base_sha256") == sweep.base_digest), None)
    number = gen["generation"] if gen else max((g["generation"] for g in gens), default=0) + 1
    changes: Optional[list[str]] = []
    if previous is not None and previous is not gen:
        base = previous.get("base_scenario")
        changes = differences(base, sweep.base) if isinstance(base, Mapping) else None
    return gen, GenerationStart(number, gen is None, previous["generation"] if previous else None, changes)


def _merge_runs(old: list[dict[str, Any]], new: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    # The latest sweep's runs in its grid order, then those only earlier sweeps of this base
    # listed. A run listed by both is one scenario; its parameters are the union of what
    # either sweep set (every one of them a true value of that scenario).
    by_id = {r["run_id"]: r for r in old}
    merged = []
    for r in new:
        earlier = by_id.pop(r["run_id"], None)
        merged.append({**r, "params": {**(earlier or {}).get("params", {}), **r["params"]}})
    return merged + [r for r in old if r["run_id"] in by_id]


def _write_json(out: Path, name: str, doc: Mapping[str, Any]) -> None:
    tmp = out / f"{TMP_PREFIX}{name}"
    tmp.write_text(json.dumps(jsonable(doc), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / name)
