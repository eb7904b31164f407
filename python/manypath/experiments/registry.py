"""The registry of reproducible experiments behind ``manypath reproduce``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ExperimentFn = Callable[[bool, int], pd.DataFrame]
PlotFn = Callable[[pd.DataFrame], "Figure"]


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
    plot_fn: Optional[PlotFn] = None
    """Draws the document's figure from the table ``fn`` returned."""

    def run(self, full: bool = False, seed: int = 1) -> pd.DataFrame:
        return self.fn(full, seed)

    def plot(self, table: pd.DataFrame) -> Optional[Any]:
        """The experiment's figure for ``table``, or None if it registered no plot."""
        return self.plot_fn(table) if self.plot_fn is not None else None


_REGISTRY: dict[str, Experiment] = {}


def experiment(
    *,
    name: str,
    document: str,
    figure: str,
    compares: str,
    reduced_time: str,
    full_time: str,
    plot: Optional[PlotFn] = None,
) -> Callable[[ExperimentFn], ExperimentFn]:
    """Register ``fn(full, seed) -> DataFrame`` under ``name``; ``plot(table) -> Figure``
    draws its figure (see :mod:`manypath.plots`)."""

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
            plot_fn=plot,
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
