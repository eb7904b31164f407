"""manypath: a packet-level data-center network simulator.

Example::

    import manypath

    res = manypath.run("incast.toml", seed=3, overrides={"traffic.0.senders": 8})
    print(res)                        # name, flows completed, duration, level
    print(res.summary_frame())        # one row per traffic class
    res.to_parquet("out/incast")      # tables, scenario.toml and provenance.json

    manypath.sweep("sweeps/incast-ecn.toml", out="results/incast-ecn")
    runs = manypath.load("results/incast-ecn")   # flows/queues with a column per parameter
"""

# Only the public API is bound here: `dir(manypath)` lists it, its submodules and nothing
# else (no helpers imported for the package's own use).
from importlib import metadata as _metadata

from .loader import load
from .results import Results
from .runner import run, schema, validate
from .scenario import Scenario, default_scenario_path
from .sweeps import SweepResults, SweepSpec, SweepSummary, sweep

try:
    __version__ = _metadata.version("manypath")
except _metadata.PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0+unknown"

__all__ = [
    "Results",
    "Scenario",
    "SweepResults",
    "SweepSpec",
    "SweepSummary",
    "__version__",
    "default_scenario_path",
    "load",
    "run",
    "schema",
    "sweep",
    "validate",
]
