from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from manypath import _toml
from manypath.experiments import incast

tomllib = pytest.importorskip("tomllib")


def round_trip(doc: dict[str, Any]) -> dict[str, Any]:
    parsed: dict[str, Any] = tomllib.loads(_toml.dumps(doc))
    return parsed


def test_scalars_tables_and_arrays() -> None:
    doc = {
        "name": 'quote " backslash \\ newline \n tab \t del \x7f é',
        "seed": 3,
        "duration_ms": 2.5,
        "stop_when_done": False,
        "topology": {"fat_tree": {"k": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1.0}, "tiers": {"agg_core": {"rate_gbps": 40}}},
        "hosts": [1, 2, 3],
        "empty": [],
        "traffic": [
            {"pattern": "incast", "size": {"fixed": 131072}, "host_range": [0, 4]},
            {"pattern": "pair", "size": "long_lived", "nested": {"a": {"b": 1}}},
        ],
        "weird key": {"x.y": True},
    }
    assert round_trip(doc) == doc


def test_small_tables_inside_arrays_of_tables_are_inline() -> None:
    text = _toml.dumps({"traffic": [{"size": {"fixed": 131072}}]})
    assert "size = { fixed = 131072 }" in text


def test_none_is_left_out() -> None:
    assert round_trip({"a": 1, "b": None, "t": {"c": None}}) == {"a": 1, "t": {}}


def test_special_floats_and_numpy_scalars() -> None:
    out = round_trip({"a": math.inf, "b": -math.inf, "n": np.int64(5), "f": np.float64(0.1)})
    assert out["a"] == math.inf and out["b"] == -math.inf
    assert out["n"] == 5 and isinstance(out["n"], int)
    assert out["f"] == 0.1
    assert math.isnan(round_trip({"x": math.nan})["x"])


def test_float_precision_survives() -> None:
    xs = [0.1, 1e-12, 123456789.123456789, 2.0**60]
    assert round_trip({"x": xs}) == {"x": xs}


def test_unsupported_values_raise() -> None:
    with pytest.raises(TypeError):
        _toml.dumps({"x": object()})
    with pytest.raises(TypeError):
        _toml.dumps({"x": [1, None]})


def test_incast_scenario_serialises() -> None:
    doc = incast.scenario(16, seed=5)
    assert round_trip(doc) == doc
