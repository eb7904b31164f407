"""A run's directory: one run's files and no other's.

``manypath run --out DIR`` and :meth:`Results.to_parquet` write a run into a directory of
its own. DIR must be new, empty, or a previous run's directory, which is replaced whole:
the run is written into a temporary sibling that then takes DIR's place, so no file of
the previous run (a capture, a trace, a report) stays beside the new tables, and an
interrupted write leaves the previous run as it was. A directory that holds anything
else is refused before anything is written, so nothing a user stored there is lost.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class RunDirError(ValueError):
    """A directory a run may not be written into, and why."""


def check(directory: Path, known: frozenset[str], marker: str) -> None:
    """Refuses ``directory`` unless a run may replace it: it does not exist, is empty, or
    is a previous run's (it has ``marker``) holding nothing but ``known`` files."""
    if directory.exists() and not directory.is_dir():
        raise RunDirError(
            f"{directory}: is a file; a run is written into a directory of its own "
            "(give a new or empty directory, or a previous run's)"
        )
    if not directory.is_dir():
        return
    entries = sorted(p.name for p in directory.iterdir())
    if not entries:
        return
    if marker not in entries:
        raise RunDirError(
            f"{directory}: not empty and not a manypath run (no {marker}); a run's "
            "directory holds one run's files and no other's: give a new or empty "
            "directory, or a previous run's"
        )
    foreign = [e for e in entries if e not in known]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise RunDirError(
            f"{directory}: a previous run's directory that also holds {shown}, which a "
            "new run would remove (it replaces the directory whole): move them out, or "
            "write the run elsewhere"
        )


@contextmanager
def replacing(directory: Path, known: frozenset[str], marker: str) -> Iterator[Path]:
    """A new temporary directory beside ``directory`` to write a run into; when the block
    ends without an error it takes ``directory``'s place (the previous run, if any, is
    removed), otherwise it is removed and ``directory`` stays as it was."""
    check(directory, known, marker)
    target = directory.absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        # mkdtemp makes it private; a run's directory is as open as the umask says.
        os.chmod(tmp, 0o777 & ~_umask())
        yield tmp
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
