"""The registry of reproducible experiments behind ``manypath reproduce``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

ExperimentFn = Callable[[bool, int], pd.DataFrame]


@dataclass(frozen=True)
class Experiment:
    name: str
    document: str
    """Where the result is written up, e.g. a file under docs/."""
    figure: str
    """The figure or table in that document the experiment produces."""
    compares: str
    """One line on what is varied and what is measured."""
    reduced_time: str
    """Rough wall time of the reduced (default) run, e.g. "~10 s"."""
    full_time: str
    """Rough wall time of the ``--full`` run."""
    fn: ExperimentFn

    def run(self, full: bool = False, seed: int = 1) -> pd.DataFrame:
        return self.fn(full, seed)


_REGISTRY: dict[str, Experiment] = {}


def experiment(
    *,
    name: str,
    document: str,
    figure: str,
    compares: str,
    reduced_time: str,
    full_time: str,
) -> Callable[[ExperimentFn], ExperimentFn]:
    """Register ``fn(full, seed) -> DataFrame`` under ``name``."""

    def register(fn: ExperimentFn) -> ExperimentFn:
        if name in _REGISTRY:
            raise ValueError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(
            name=name,
            document=document,
            figure=figure,
            compares=compares,
            reduced_time=reduced_time,
            full_time=full_time,
            fn=fn,
        )
        return fn

    return register


def get(name: str) -> Experiment:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise KeyError(f"unknown experiment {name!r}; known: {known}") from None


def all_experiments() -> list[Experiment]:
    return [_REGISTRY[n] for n in sorted(_REGISTRY)]
