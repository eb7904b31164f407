"""Reading back a stored directory, whichever kind: one run's or a whole sweep's."""

from __future__ import annotations

from pathlib import Path

from .results import FLOWS_FILE, PathLike, Results, load_run
from .sweeps.loading import SweepResults, is_sweep_dir, load_sweep


def load(directory: PathLike, *, allow_mixed: bool = False, generation: int | None = None) -> Results | SweepResults:
    """Read a run directory (what :meth:`Results.to_parquet` wrote) as :class:`Results`,
    or a sweep directory (what ``manypath sweep`` wrote) as :class:`SweepResults`: the
    runs' tables combined, with a column per sweep parameter.

    A sweep directory gives the runs of its current generation (the latest sweep's base
    scenario); ``generation=N`` an earlier one, ``allow_mixed=True`` every generation
    pooled, with a ``generation`` column (see :func:`manypath.sweeps.load_sweep`).
    """
    src = Path(directory)
    if not (src / FLOWS_FILE).is_file() and is_sweep_dir(src):
        return load_sweep(src, generation=generation, allow_mixed=allow_mixed)
    return load_run(src)
