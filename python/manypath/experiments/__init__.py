"""Reproducible experiments. Importing this package registers every one of them."""

from __future__ import annotations

from . import amp, collectives, dcqcn, flowlevel, fuso, homa, hpcc, incast, mmptcp, mptcp, ndp, rwndq  # noqa: F401  (registers on import)
from .registry import Experiment, all_experiments, experiment, get

__all__ = ["Experiment", "all_experiments", "experiment", "get"]
