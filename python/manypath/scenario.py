"""Turning what a caller passes as a scenario into TOML text plus the base directory, and
that text into the exact scenario a run simulates (overrides applied, seed written in)."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Optional, Union

from . import _toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


@dataclass(frozen=True)
class Source:
    """Scenario text ready for the simulator, and where its relative CDF paths resolve."""

    text: str
    base_dir: str
    origin: str


class ScenarioNotFound(FileNotFoundError):
    pass


class ScenarioFileError(ValueError):
    """A scenario path that names something other than a TOML text file (a directory,
    a binary file); the message names the path."""


#: Seeds are written into the scenario text, and TOML integers are signed 64-bit.
SEED_MAX = 2**63 - 1
SEED_RANGE = "between 0 and 2^63-1"


def default_scenario_path() -> Path:
    """The scenario shipped with the package, run by ``manypath run`` without a file."""
    return Path(str(resources.files("manypath") / "scenarios" / "default.toml"))


def _looks_like_toml(s: str) -> bool:
    # File names never contain '=' or newlines in practice; TOML documents always do.
    return "\n" in s or "=" in s


def resolve(scenario: Scenario, base_dir: str | os.PathLike[str] | None = None) -> Source:
    """Accept a path, TOML text or a dict and return its text and base directory.

    A string is a path when a file of that name exists or it does not look like TOML;
    otherwise it is TOML text. Text and dicts resolve CDF paths against ``base_dir``,
    defaulting to the current directory.
    """
    if isinstance(scenario, Mapping):
        text = _toml.dumps(scenario)
        return Source(text, _base(base_dir, Path.cwd()), "<dict>")
    if isinstance(scenario, str) and not os.path.isfile(scenario) and _looks_like_toml(scenario):
        return Source(scenario, _base(base_dir, Path.cwd()), "<string>")
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        if path.is_dir():
            raise ScenarioFileError(f"{path}: is a directory, not a scenario file")
        if not path.is_file():
            raise ScenarioNotFound(f"scenario file not found: {path}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise ScenarioFileError(
                f"{path}: not a TOML text file (byte {e.object[e.start]:#04x} at offset {e.start} "
                "is not UTF-8)"
            ) from None
        return Source(text, _base(base_dir, path.resolve().parent), str(path))
    raise TypeError(f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}")


def _base(explicit: str | os.PathLike[str] | None, fallback: Path) -> str:
    return str(Path(explicit).resolve() if explicit is not None else fallback)


@dataclass(frozen=True)
class Prepared:
    """The scenario exactly as a run simulates it: its text (overrides applied, the seed
    written in) and the same as a dict; ``doc`` is None for text that is not valid TOML,
    which the simulator then reports in its own words."""

    text: str
    base_dir: str
    origin: str
    doc: Optional[dict[str, Any]]
    #: The text as given, when ``text`` is not it (re-serialised with overrides applied,
    #: or with the seed written first): its line numbers are the user's. The overrides,
    #: in order.
    source_text: Optional[str] = None
    overrides: tuple[tuple[str, Any], ...] = ()


def prepare(
    src: Source,
    overrides: Optional[Mapping[str, Any]] = None,
    seed: Optional[int] = None,
    default_seed: Optional[int] = None,
) -> Prepared:
    """Apply ``overrides`` (dotted paths as in sweeps: ``"traffic.0.load"``) and write the
    seed that will be used into the text, so the text alone reproduces the run.

    The text is kept as given (comments and all) when nothing changes it; otherwise it is
    the scenario re-serialised. The seed is ``seed``, else the scenario's own, else
    ``default_seed`` (the simulator's default).
    """
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be {SEED_RANGE}, got {seed}")
    try:
        doc: dict[str, Any] = tomllib.loads(src.text)
    except tomllib.TOMLDecodeError as e:
        if overrides:
            raise ValueError(f"{src.origin}: not valid TOML, cannot apply overrides: {e}") from None
        return Prepared(src.text, src.base_dir, src.origin, None)
    if not overrides and (seed is None or doc.get("seed") == seed) and (
        "seed" in doc or default_seed is None
    ):
        return Prepared(src.text, src.base_dir, src.origin, doc)
    if not overrides and seed is None and default_seed is not None:
        # Only the seed is missing: a top-level key first in the file keeps the text as written.
        text = f"seed = {default_seed}\n{src.text}"
        return Prepared(text, src.base_dir, src.origin, tomllib.loads(text), src.text)
    # Sweeps and runs share one meaning of a dotted path.
    from .sweeps.spec import set_path

    doc = copy.deepcopy(doc)
    for path, value in (overrides or {}).items():
        try:
            set_path(doc, path, value)
        except ValueError as e:  # a SweepError would be reported as a bad sweep file
            raise ValueError(f"override {e}") from None
    used = seed if seed is not None else doc.get("seed", default_seed)
    if used is not None:
        doc["seed"] = used
    return Prepared(_toml.dumps(doc), src.base_dir, src.origin, doc, src.text,
                    tuple((overrides or {}).items()))
