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

from importlib import metadata

from .loader import load
from .results import Results
from .runner import run, schema, validate
from .scenario import Scenario, default_scenario_path, resolve
from .sweeps import SweepResults, SweepSpec, SweepSummary, sweep

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
