"""Reading back a stored directory, whichever kind: one run's or a whole sweep's."""

from __future__ import annotations

from pathlib import Path

from .results import FLOWS_FILE, PathLike, Results, load_run
from .sweeps.loading import SweepResults, is_sweep_dir, load_sweep


def load(directory: PathLike) -> Results | SweepResults:
    """Read a run directory (what :meth:`Results.to_parquet` wrote) as :class:`Results`,
    or a sweep directory (what ``manypath sweep`` wrote) as :class:`SweepResults`: the
    runs' tables combined, with a column per sweep parameter."""
    src = Path(directory)
    if not (src / FLOWS_FILE).is_file() and is_sweep_dir(src):
        return load_sweep(src)
    return load_run(src)
