"""Parameter sweeps: expand a sweep file into runs, execute them, store each one atomically.

A sweep is a base scenario, overrides by dotted path (a grid, a list of points, or both)
and seeds. Every run is identified by a hash of the exact scenario it simulates (seed
included), so rerunning a sweep skips what is already stored, and growing a grid only
runs the new points. Workers only simulate; the driver process writes every result, so
a Ray cluster needs no shared filesystem and no two writers ever touch one directory.
Runs of different base scenarios are different generations of a results directory and
are never read back pooled unless asked for; Ctrl-C stops a sweep in two steps (finish
the runs in progress, then stop them) without leaving a half-written run.

``spec`` reads and expands the sweep file, ``worker`` runs one point, ``store`` keeps the
results directory, ``execution`` drives a whole sweep (local pool or Ray) and ``loading``
reads a results directory back.
"""

from __future__ import annotations

from .execution import Progress, SweepInterrupted, SweepSummary, sweep
from .loading import SweepResults, is_sweep_dir, load_sweep, param_value
from .spec import RunSpec, Sweep, SweepError, SweepSpec, expand, read_spec, run_id_of, set_path
from .store import plan_generation, read_manifest, run_status, store
from .worker import Outcome

__all__ = [
    "Outcome",
    "Progress",
    "RunSpec",
    "Sweep",
    "SweepError",
    "SweepInterrupted",
    "SweepResults",
    "SweepSpec",
    "SweepSummary",
    "expand",
    "is_sweep_dir",
    "load_sweep",
    "param_value",
    "plan_generation",
    "read_manifest",
    "read_spec",
    "run_id_of",
    "run_status",
    "set_path",
    "store",
    "sweep",
]
