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
reads a results directory back. Only ``spec`` is imported with the package (the command
line needs its ``SweepError``); the other names are imported when first used, so reading
a sweep file imports no pandas.
"""

import typing as _typing

from .. import _lazy
from .errors import BackendUnavailable
from .spec import RunSpec, Sweep, SweepError, SweepSpec, expand, read_spec, run_id_of, set_path

if _typing.TYPE_CHECKING:
    from .execution import Progress, SweepInterrupted, SweepSummary, sweep
    from .loading import SweepResults, is_sweep_dir, load_sweep, param_value
    from .store import plan_generation, read_manifest, run_status
    from .worker import Outcome

_LAZY = {
    "Outcome": ".worker",
    "Progress": ".execution",
    "SweepInterrupted": ".execution",
    "SweepResults": ".loading",
    "SweepSummary": ".execution",
    "is_sweep_dir": ".loading",
    "load_sweep": ".loading",
    "param_value": ".loading",
    "plan_generation": ".store",
    "read_manifest": ".store",
    "run_status": ".store",
    "sweep": ".execution",
}

__getattr__, __dir__ = _lazy.exports(__name__, globals(), _LAZY)

__all__ = [
    "BackendUnavailable",
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
    "sweep",
]
