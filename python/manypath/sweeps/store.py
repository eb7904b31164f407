"""A sweep's results directory: one directory per run, written so that it appears complete
or not at all, the runs' status, the manifest, and the lock against a second writer."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Optional

from ..results import jsonable
from .spec import RunSpec, Sweep
from .worker import Outcome

RUN_FILE = "run.json"
SCENARIO_FILE = "scenario.toml"
ERROR_FILE = "error.txt"
SWEEP_FILE = "sweep.json"
LOCK_FILE = ".lock"
TMP_PREFIX = ".tmp-"


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
    # The package sets its version in its __init__, which imports this module.
    from .. import __version__

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
            meta["error"] = last_line(outcome.error)
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
    for child in out.glob(f"{TMP_PREFIX}*"):
        shutil.rmtree(child, ignore_errors=True)


def write_manifest(out: Path, sweep: Sweep) -> None:
    doc = {
        "name": sweep.name,
        "params": sweep.params,
        "runs": [{"run_id": r.run_id, "seed": r.seed, "params": r.params} for r in sweep.runs],
    }
    tmp = out / f"{TMP_PREFIX}{SWEEP_FILE}"
    tmp.write_text(json.dumps(jsonable(doc), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / SWEEP_FILE)
