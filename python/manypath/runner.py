"""Running and checking one scenario: the entry points into the native simulator.

The native module is imported where it is used, so the analysis and results modules
stay importable (and testable) without a compiled build; the results (pandas) likewise,
so checking a scenario (``manypath validate``) does not import them.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Optional

from . import problems, provenance
from .scenario import Prepared, Scenario, prepare, resolve

if TYPE_CHECKING:
    from .results import Results


class NotConvergedWarning(RuntimeWarning):
    """A flow-level run stopped at its iteration limit before its fixed point converged."""


class DeadlockWarning(RuntimeWarning):
    """The run found a PFC deadlock (a cycle of paused ports) and stopped there."""


class ScenarioWarning(UserWarning):
    """A scenario is valid but likely not what was meant (e.g. an offered load above 1)."""


class MemoryWarning(ResourceWarning):
    """A packet-level run is estimated to need more memory than the machine has free."""


def available_memory_bytes() -> Optional[int]:
    """Memory the kernel says a new process can use (MemAvailable), if it says."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_warning(estimate: Mapping[str, Any], available: Optional[int]) -> Optional[str]:
    """What to say before a run whose estimated peak exceeds the memory available."""
    need = estimate.get("peak_bytes")
    if available is None or not isinstance(need, int) or need <= available:
        return None
    gib = 1 << 30
    return (
        f"this run is estimated to need {need / gib:.1f} GiB at its peak "
        f"({estimate.get('hosts')} hosts, {estimate.get('ports')} ports, "
        f"{estimate.get('connections')} connections), more than the {available / gib:.1f} GiB "
        "available: it may be killed or swap; try a smaller topology, fewer flows or level = \"flow\""
    )


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[float, int], bool | None] | None = None,
    progress_every: int = 1_000_000,
    level: str | None = None,
    threads: int | str | None = None,
    override_names: Mapping[str, str] | None = None,
) -> Results:
    """Run a scenario given as a TOML file path, TOML text or a dict.

    ``seed`` overrides the scenario's own seed; ``overrides`` sets fields by the dotted
    paths sweeps use (``{"traffic.0.load": 0.5, "network.queue.ecn_k_packets": 65}``);
    ``level`` (``"packet"`` or ``"flow"``) replaces its ``level``: the same scenario runs
    on the packet-level simulator or the flow-level model, with the same tables (at flow
    level, ``counters`` also holds ``iterations``, ``converged`` and ``residual``; a run
    that did not converge warns with ``NotConvergedWarning``).

    ``threads`` (a whole number ≥ 1 or ``"auto"``) replaces ``parallel.threads``. The
    results are the same for any thread count, so it is in none of the tables and the
    scenario text is kept as given; the threads the run was given are recorded in
    ``Results.provenance["threads"]``.

    ``progress(sim_time_s, events)`` is called about every ``progress_every`` events (at
    flow level: ``progress(iteration, iteration)``); returning ``False`` stops the run. A
    stopped run (or one interrupted with Ctrl-C) returns what it measured, with
    ``counters["partial"]`` true.

    A problem with a field an override set names the override (``override_names[PATH]``
    if given, as the CLI names its ``--set PATH=VALUE``; else ``override PATH=VALUE``),
    and the other problems' line numbers are the file's as written.

    The results keep the scenario exactly as run (``Results.scenario``, its text with the
    seed written in) and its provenance (``Results.provenance``). Raises ``ValueError``
    for an invalid scenario or override and ``FileNotFoundError`` for a missing file.
    """
    threads_text = threads_option(threads)
    ready = prepare(resolve(scenario, base_dir), overrides, seed, default("seed"))
    from . import _core
    from .results import Results

    try:
        if (level or (ready.doc or {}).get("level", "packet")) == "packet":
            message = memory_warning(_core.estimate(ready.text, ready.base_dir), available_memory_bytes())
            if message:
                warnings.warn(message, MemoryWarning, stacklevel=2)
        ran_at = provenance.now_utc()
        raw = _core.run(
            ready.text,
            ready.base_dir,
            seed,
            progress=progress,
            progress_every=progress_every,
            level=level,
            threads=threads_text,
        )
    except ValueError as e:
        raise ValueError(problems.explain(str(e), ready, override_names)) from None
    res = Results.from_native(raw)
    res.scenario = dict(ready.doc) if ready.doc is not None else {}
    res.scenario_text = ready.text
    res.resolved_text = _core.resolve(ready.text, ready.base_dir)
    used_seed = ready.doc.get("seed") if ready.doc is not None else seed
    res.provenance = provenance.record(ready.text, used_seed, ran_at, threads=raw.get("threads"))
    for path, text in res.scenario_warnings:
        warnings.warn(f"{path}: {text}" if path else text, ScenarioWarning, stacklevel=2)
    message = convergence_warning(res.counters, ready)
    if message:
        warnings.warn(message, NotConvergedWarning, stacklevel=2)
    if res.counters.get("deadlock_message"):
        warnings.warn(str(res.counters["deadlock_message"]), DeadlockWarning, stacklevel=2)
    return res


def threads_option(threads: int | str | None) -> str | None:
    """``threads`` as the simulator takes it (text, checked there as ``parallel.threads``);
    a value of another type is refused here, naming the option."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, (int, str)):
        raise ValueError(f'threads: must be a whole number of threads ≥ 1 or "auto", got {threads!r}')
    return str(threads)


def convergence_warning(counters: Mapping[str, Any], ready: Prepared | None = None) -> Optional[str]:
    """What to say when a flow-level run stopped at its iteration limit unconverged."""
    if counters.get("converged") is not False:
        return None
    model = (ready.doc or {}).get("flow_model", {}) if ready is not None else {}
    tolerance = next(
        (t for t in (counters.get("tolerance"), model.get("tolerance"), default("flow_model", "tolerance"))
         if t is not None),
        None,
    )
    iterations = counters.get("iterations")
    residual = counters.get("residual")
    limit = f" ({iterations})" if iterations is not None else ""
    res = f"residual {residual:.1e}" if isinstance(residual, (int, float)) else "residual unknown"
    tol = f" > tolerance {tolerance:.0e}" if isinstance(tolerance, (int, float)) else ""
    return (
        f"flow level stopped at its iteration limit{limit} without converging: {res}{tol}; "
        "raise flow_model.max_iterations or read the rates as approximate"
    )


def validate(
    scenario: Scenario, *, base_dir: str | os.PathLike[str] | None = None
) -> list[tuple[str, str]]:
    """Check a scenario without running it; ``ValueError`` lists every problem, one per
    line. Returns the warnings: (field, message) pairs for what is valid but likely not
    meant (e.g. an offered load above 1)."""
    src = resolve(scenario, base_dir)
    from . import _core

    return [(str(p), str(m)) for p, m in _core.validate(src.text, src.base_dir)]


def matrix_text(
    scenario: Scenario,
    *,
    entry: int | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> str:
    """Traffic entry ``entry`` of the scenario (a collective's or a connection matrix's;
    by default the only such entry) as htsim's connection-matrix text: the same flows and
    triggers, with hosts numbered as the scenario's fabric numbers them, so htsim and
    manypath can run the same traffic. Raises ``ScenarioError`` naming the field."""
    src = resolve(scenario, base_dir)
    from . import _core

    return str(_core.matrix_text(src.text, src.base_dir, entry))


def export_topology(
    scenario: Scenario,
    *,
    json: bool = False,
    base_dir: str | os.PathLike[str] | None = None,
    format: str | None = None,
) -> str:
    """The scenario's topology as a ``[topology.custom]`` file: its tiers, nodes (hosts
    first) and links in the order that numbers the ports, so the file builds the same
    network as the scenario's topology.

    ``format``: ``"toml"`` (the default), ``"json"`` (the same as JSON; also
    ``json=True``), ``"graphml"`` (GraphML) or ``"node-link"`` (networkx's node-link
    JSON). The graph formats hold no per-link queues and no tier list: a topology that
    needs them is refused (``topology_files.TopologyFileError``)."""
    fmt = format or ("json" if json else "toml")
    if fmt not in ("toml", "json", "graphml", "node-link"):
        raise ValueError(f"format: expected 'toml', 'json', 'graphml' or 'node-link', got {fmt!r}")
    src = resolve(scenario, base_dir)
    from . import _core

    text = str(_core.export_topology(src.text, src.base_dir, fmt != "toml"))
    if fmt in ("toml", "json"):
        return text
    from . import topology_files

    return topology_files.write(text, fmt)


def schema() -> dict[str, Any]:
    """The JSON Schema of scenario files."""
    from . import _core

    result: dict[str, Any] = json.loads(_core.schema())
    return result


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return schema()


def default(*path: str) -> Any:
    """A field's default as the schema states it (``default("flow_model", "tolerance")``),
    None when it has none; the simulator's defaults stay defined in one place."""
    doc = _schema()
    node: Any = doc
    for i, key in enumerate(path):
        node = _deref(doc, node)
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        if key not in props:
            return None
        node = props[key]
        if i == len(path) - 1:
            return node.get("default") if isinstance(node, dict) else None
    return None


def _deref(root: dict[str, Any], node: Any) -> Any:
    # Follow "$ref" (and a lone allOf/anyOf wrapper around one) to the referenced definition.
    for _ in range(8):
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            node = root.get("$defs", root.get("definitions", {})).get(name, {})
        elif len(node.get("allOf", [])) == 1:
            node = node["allOf"][0]
        else:
            anyof = [n for n in node.get("anyOf", []) if n.get("type") != "null"]
            if len(anyof) == 1 and "properties" not in node:
                node = anyof[0]
            else:
                return node
    return node
