"""manypath: a packet-level data-center network simulator.

Example::

    import manypath

    res = manypath.run("incast.toml", seed=3, overrides={"traffic.0.senders": 8})
    print(res)                        # name, flows completed, duration, level
    print(res.summary_frame())        # one row per traffic class
    res.to_parquet("out/incast")      # tables, scenario.toml and provenance.json

    manypath.sweep("sweeps/ecn.toml", out="results/ecn")
    runs = manypath.load("results/ecn")   # flows/queues with a column per parameter
"""

# Only the public API is bound here: `dir(manypath)` lists it, its submodules and nothing
# else (no helpers imported for the package's own use). Each name is imported when first
# used, so `import manypath` (and the command line's start) imports no pandas.
import typing as _typing

from . import _lazy

if _typing.TYPE_CHECKING:
    from .loader import load
    from .results import Results
    from .runner import run, schema, validate
    from .scenario import Scenario, default_scenario_path
    from .sweeps import SweepResults, SweepSpec, SweepSummary, sweep

    __version__: str

_EXPORTS = {
    "Results": ".results",
    "Scenario": ".scenario",
    "SweepResults": ".sweeps",
    "SweepSpec": ".sweeps",
    "SweepSummary": ".sweeps",
    "__version__": "._version",
    "default_scenario_path": ".scenario",
    "load": ".loader",
    "run": ".runner",
    "schema": ".runner",
    "sweep": ".sweeps",
    "validate": ".runner",
}

__getattr__, __dir__ = _lazy.exports(__name__, globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
