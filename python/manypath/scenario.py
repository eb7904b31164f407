"""Turning what a caller passes as a scenario into TOML text plus the base directory."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

from . import _toml

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


@dataclass(frozen=True)
class Source:
    """Scenario text ready for the simulator, and where its relative CDF paths resolve."""

    text: str
    base_dir: str
    origin: str


class ScenarioNotFound(FileNotFoundError):
    pass


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
        if not path.is_file():
            raise ScenarioNotFound(f"scenario file not found: {path}")
        text = path.read_text(encoding="utf-8")
        return Source(text, _base(base_dir, path.resolve().parent), str(path))
    raise TypeError(f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}")


def _base(explicit: str | os.PathLike[str] | None, fallback: Path) -> str:
    return str(Path(explicit).resolve() if explicit is not None else fallback)
