"""manypath: a packet-level data-center network simulator.

Example::

    import manypath

    res = manypath.run("incast.toml", seed=3)
    print(res.summary()["classes"])
    res.to_parquet("out/incast")

    manypath.sweep("sweeps/incast-ecn.toml", out="results/incast-ecn")
    runs = manypath.load("results/incast-ecn")   # flows/queues with a column per parameter
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from typing import Callable, Any

from .results import Results, load
from .scenario import Scenario, default_scenario_path, resolve
from .sweeps import SweepResults, SweepSpec, SweepSummary

# The native module is imported where it is used, so the analysis and results modules
# stay importable (and testable) without a compiled build.

try:
    __version__ = metadata.version("manypath")
except metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

__all__ = [
    "Results",
    "Scenario",
    "__version__",
    "default_scenario_path",
    "load",
    "run",
    "schema",
    "sweep",
    "SweepResults",
    "SweepSummary",
    "validate",
]


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[float, int], bool | None] | None = None,
    progress_every: int = 1_000_000,
    level: str | None = None,
) -> Results:
    """Run a scenario given as a TOML file path, TOML text or a dict.

    ``seed`` overrides the scenario's own seed; ``level`` (``"packet"`` or ``"flow"``) its
    ``level``: the same scenario runs on the packet-level simulator or the flow-level
    model, with the same tables (at flow level, ``counters`` also holds ``iterations``,
    ``converged`` and ``residual``). ``progress(sim_time_s, events)`` is called
    about every ``progress_every`` events; returning ``False`` stops the run. A stopped
    run (or one interrupted with Ctrl-C) returns what it measured, with
    ``counters["partial"]`` true. Raises ``ValueError`` for an invalid scenario and
    ``FileNotFoundError`` for a missing file.
    """
    src = resolve(scenario, base_dir)
    from . import _core

    return Results.from_native(
        _core.run(
            src.text,
            src.base_dir,
            seed,
            progress=progress,
            progress_every=progress_every,
            level=level,
        )
    )


def validate(scenario: Scenario, *, base_dir: str | os.PathLike[str] | None = None) -> None:
    """Check a scenario without running it; ``ValueError`` lists every problem, one per line."""
    src = resolve(scenario, base_dir)
    from . import _core

    _core.validate(src.text, src.base_dir)


def schema() -> dict[str, Any]:
    """The JSON Schema of scenario files."""
    from . import _core

    result: dict[str, Any] = json.loads(_core.schema())
    return result


def sweep(
    spec: SweepSpec,
    *,
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    ray: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> SweepSummary:
    """Run a sweep: a sweep file path or the same document as a dict.

    Each run not yet stored in ``out`` (default: the file's ``results`` key, else
    ``results/<name>``) is simulated and written to ``out/<run-id>/``. Runs go to a pool
    of ``jobs`` local processes (default: every core), or to Ray when ``ray`` is an
    address, ``"auto"`` (a running cluster) or ``"local"`` (start one here); if Ray is
    already initialised in this process, that connection is used. A failed run is
    recorded (``status = "failed"`` and ``error.txt``) and the others go on; rerunning
    retries it. Raises ``ValueError`` for an invalid sweep file or scenario.
    """
    from .sweeps import run_sweep

    return run_sweep(spec, out=out, jobs=jobs, ray=ray, base_dir=base_dir)
