"""Where a result came from: the manypath version and source revision that produced it,
when, with which seed, and a digest of the exact scenario text.

Run directories (``Results.to_parquet``, ``manypath run --out``) and every run of a sweep
keep this beside their tables, so a table can always be traced to what made it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

SCENARIO_FILE = "scenario.toml"
#: The same scenario with every default written out, as the simulator resolved it.
RESOLVED_FILE = "resolved.toml"
PROVENANCE_FILE = "provenance.json"


def version() -> str:
    """The installed manypath version ("0+unknown" when running from a bare source tree)."""
    from importlib import metadata  # imported here: slow to import, and only this needs it

    try:
        return metadata.version("manypath")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def source_revision() -> Optional[str]:
    """The git commit of the source tree this package runs from, with "-dirty" when it
    has uncommitted changes; None when it is not a git checkout (an installed wheel)."""
    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    suffix = "-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else ""
    return rev.stdout.strip() + suffix


def scenario_digest(text: str) -> str:
    """SHA-256 of a scenario's exact text: equal digests, equal scenarios."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def record(
    scenario_text: str, seed: Optional[int], ran_at: Optional[str] = None, threads: Optional[int] = None
) -> dict[str, Any]:
    """What to keep beside a run's tables: version, source revision, seed, when it ran,
    the scenario's digest, the Python and platform it ran on, and the threads the
    simulator was given (None until it has run). The thread count is kept here, not in
    the tables: results are the same for any count, it only says how fast they came."""
    return {
        "manypath_version": version(),
        "source_revision": source_revision(),
        "seed": seed,
        "ran_at": ran_at or now_utc(),
        "scenario_sha256": scenario_digest(scenario_text),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "threads": threads,
    }
