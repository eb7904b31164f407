"""Reading a sweep file and expanding it into runs: the grid, points and seeds, each run's
exact scenario and the id derived from it."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from .. import _toml
from ..provenance import scenario_digest
from .._json import jsonable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PathLike = Union[str, "os.PathLike[str]"]
SweepSpec = Union[PathLike, Mapping[str, Any]]

_SWEEP_KEYS = {"name", "scenario", "grid", "points", "seeds", "results", "threads"}

#: Top-level tables of a scenario that change how a run is executed, never what it
#: computes (the tables are bit-identical for any thread count): left out of a run's id
#: and of a base scenario's digest, so runs differing only there are one result.
NOT_IN_IDENTITY = ("parallel",)

#: A sweep's ``threads``: a whole number of threads ≥ 1, ``"auto"``, or not given.
Threads = Union[int, str, None]


class SweepError(ValueError):
    """A sweep file that cannot be expanded into runs (the message names the key)."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: the exact scenario, its seed and the parameters that made it.

    ``threads`` is what the run is given (replacing its ``parallel.threads``; ``None``:
    the scenario's own), set when the sweep hands it out (``execution.run_threads``); it
    is not part of the run's identity.
    """

    run_id: str
    seed: int
    params: dict[str, Any]
    scenario: dict[str, Any]
    text: str
    base_dir: str
    threads: Threads = None


@dataclass(frozen=True)
class Sweep:
    """A sweep file expanded: its runs in grid order and where results go by default.

    ``base`` is the base scenario before any override and ``base_digest`` the SHA-256 of
    its canonical JSON (``[parallel]`` left out, see ``identity``): two sweeps of equal
    digests share their base, whatever the file's formatting, comments, key order or
    threads. ``threads`` is the file's ``threads`` (each run's threads, replacing its
    ``parallel.threads``), ``None`` when not given.
    """

    name: str
    params: list[str]
    runs: list[RunSpec]
    results_dir: Path
    base: dict[str, Any]
    base_digest: str
    threads: Threads = None


def read_spec(spec: SweepSpec, base_dir: PathLike | None = None) -> tuple[dict[str, Any], Path, str]:
    """The sweep document, the directory its relative paths resolve against, and its name."""
    if isinstance(spec, Mapping):
        root = Path(base_dir).resolve() if base_dir is not None else Path.cwd()
        doc = dict(spec)
        return doc, root, str(doc.get("name") or "sweep")
    path = Path(spec)
    if not path.is_file():
        raise FileNotFoundError(2, "sweep file not found", str(path))
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{path}: not valid TOML: {e}") from None
    root = Path(base_dir).resolve() if base_dir is not None else path.resolve().parent
    return doc, root, str(doc.get("name") or path.stem)


def expand(spec: SweepSpec, base_dir: PathLike | None = None) -> Sweep:
    """Every run of a sweep, in grid order (points, then grid, then seeds, last fastest)."""
    doc, root, name = read_spec(spec, base_dir)
    unknown = sorted(set(doc) - _SWEEP_KEYS)
    if unknown:
        raise SweepError(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(_SWEEP_KEYS))}")
    base, scenario_dir = _base_scenario(doc.get("scenario"), root)
    combos = _combinations(doc.get("grid"), doc.get("points"))
    seeds = _seeds(doc.get("seeds"), base)
    params = list(dict.fromkeys(k for c in combos for k in c))

    runs: list[RunSpec] = []
    seen: set[str] = set()
    for combo in combos:
        for seed in seeds:
            scenario = copy.deepcopy(base)
            for path, value in combo.items():
                set_path(scenario, path, value)
            scenario["seed"] = seed
            run_id = run_id_of(scenario)
            if run_id in seen:
                raise SweepError(f"two runs simulate the same scenario (seed {seed}, {combo}); "
                                 "the grid or points repeat a value")
            seen.add(run_id)
            runs.append(RunSpec(run_id, seed, dict(combo), scenario, _toml.dumps(scenario), str(scenario_dir)))

    results = doc.get("results")
    if results is not None and not isinstance(results, str):
        raise SweepError("results: must be a directory path (a string)")
    out = (root / results) if results else Path("results") / name
    return Sweep(name=name, params=params, runs=runs, results_dir=out, base=base,
                 base_digest=scenario_digest(canonical(identity(base))),
                 threads=check_threads(doc.get("threads"), "threads"))


def check_threads(value: Any, where: str) -> Threads:
    """A sweep's ``threads`` (``None``, a whole number ≥ 1 or ``"auto"``), or SweepError
    naming ``where``."""
    if value is None or value == "auto":
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise SweepError(f'{where}: must be a whole number of threads ≥ 1 or "auto", got {value!r}')


def _base_scenario(value: Any, root: Path) -> tuple[dict[str, Any], Path]:
    if value is None:
        raise SweepError("scenario: missing; give a scenario file path or an inline [scenario] table")
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value)), root
    if not isinstance(value, str):
        raise SweepError("scenario: must be a file path or a table")
    path = (root / value).resolve()
    if not path.is_file():
        raise FileNotFoundError(2, "scenario file not found", str(path))
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), path.parent
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"scenario {path}: not valid TOML: {e}") from None


def _flatten_grid(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    # `"network.queue.ecn_k_packets" = [..]` and unquoted `network.queue.ecn_k_packets = [..]`
    # (which TOML turns into nested tables) must mean the same; grid leaves are lists, so
    # nesting is unambiguous here.
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten_grid(value, path + ".")
        else:
            yield path, value


def _combinations(grid: Any, points: Any) -> list[dict[str, Any]]:
    point_list: list[dict[str, Any]] = [{}]
    if points is not None:
        if not isinstance(points, list) or not all(isinstance(p, Mapping) for p in points) or not points:
            raise SweepError("points: must be a non-empty array of tables ([[points]])")
        point_list = [dict(p) for p in points]
        for i, p in enumerate(point_list):
            for key in p:
                _check_param(key, f"points[{i}]")
    grid_list: list[dict[str, Any]] = [{}]
    if grid is not None:
        if not isinstance(grid, Mapping):
            raise SweepError("grid: must be a table of dotted path = [values]")
        axes = list(_flatten_grid(grid))
        for path, values in axes:
            _check_param(path, "grid")
            if not isinstance(values, list) or not values:
                raise SweepError(f'grid."{path}": must be a non-empty array of values, got {values!r}')
        grid_list = [dict(zip((p for p, _ in axes), combo)) for combo in itertools.product(*(v for _, v in axes))]
    combos = []
    for p in point_list:
        for g in grid_list:
            clash = set(p) & set(g)
            if clash:
                raise SweepError(f"{', '.join(sorted(clash))}: set by both points and grid")
            combos.append({**p, **g})
    return combos


def _check_param(path: str, where: str) -> None:
    if path == "seed":
        raise SweepError(f'{where}: "seed" is not a parameter; list the seeds in `seeds`')
    top = path.split(".", 1)[0]
    if top in NOT_IN_IDENTITY:
        raise SweepError(f"{where}: {path!r} is not a parameter: [{top}] changes how fast a run goes, "
                         "never its results; set it in the base scenario")
    if not path or any(part == "" for part in path.split(".")):
        raise SweepError(f"{where}: {path!r} is not a dotted field path")


def _seeds(value: Any, base: Mapping[str, Any]) -> list[int]:
    if value is None:
        return [int(base.get("seed", 1))]
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise SweepError(f"seeds: a count must be ≥ 1, got {value}")
        return list(range(1, value + 1))
    if isinstance(value, list) and value and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        if len(set(value)) != len(value):
            raise SweepError("seeds: repeated seed")
        return list(value)
    raise SweepError(f"seeds: must be a count or a non-empty array of integers, got {value!r}")


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set ``doc[a][b][0][c] = value`` for ``path = "a.b.0.c"``; list indices are numbers.

    Missing tables on the way are created (so a grid can set a field the base scenario
    leaves at its default); a missing list element is an error, naming the path.
    """
    parts = path.split(".")
    node: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit():
                raise SweepError(f"{path}: {'.'.join(parts[:i]) or 'scenario'} is an array; "
                                 f"use a number, not {part!r}")
            index = int(part)
            if index >= len(node):
                raise SweepError(f"{path}: {here} does not exist (the array has {len(node)} entries)")
            if last:
                node[index] = copy.deepcopy(value)
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = copy.deepcopy(value)
            else:
                node = node.setdefault(part, {})
        else:
            raise SweepError(f"{path}: {'.'.join(parts[:i])} is a value ({node!r}), not a table")


def differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """What changed from ``old`` to ``new``, one line per dotted path: ``path: a -> b``,
    ``path: added (b)`` or ``path: removed (was a)``."""
    lines: list[str] = []
    for key in list(old) + [k for k in new if k not in old]:
        path = f"{prefix}{key}"
        if key not in new:
            lines.append(f"{path}: removed (was {_short(old[key])})")
        elif key not in old:
            lines.append(f"{path}: added ({_short(new[key])})")
        else:
            lines.extend(_value_differences(old[key], new[key], path))
    return lines


def _value_differences(a: Any, b: Any, path: str) -> list[str]:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return differences(a, b, path + ".")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b)) for line in _value_differences(x, y, f"{path}.{i}")]
    if canonical({"v": a}) == canonical({"v": b}):
        return []
    return [f"{path}: {_short(a)} -> {_short(b)}"]


def _short(value: Any) -> str:
    text = json.dumps(jsonable(value), sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def canonical(scenario: Mapping[str, Any]) -> str:
    """A scenario as canonical JSON (sorted keys, no spaces): equal scenarios, equal texts."""
    return json.dumps(jsonable(scenario), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def identity(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """What of a scenario decides its results: all but the tables in ``NOT_IN_IDENTITY``."""
    return {k: v for k, v in scenario.items() if k not in NOT_IN_IDENTITY}


def run_id_of(scenario: Mapping[str, Any]) -> str:
    """A stable name for a scenario with its seed: equal scenarios get equal ids anywhere
    (``[parallel]`` aside: runs differing only in their threads are one result)."""
    return hashlib.sha256(canonical(identity(scenario)).encode("utf-8")).hexdigest()[:16]
