"""Running and checking one scenario: the entry points into the native simulator.

The native module is imported where it is used, so the analysis and results modules
stay importable (and testable) without a compiled build.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

from .results import Results
from .scenario import Scenario, resolve


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
