"""The native module's entry points for the Python side: `resolve` (the scenario with
every default filled in), flow-level progress, and `estimate` (counts and memory)."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import pytest

from manypath import _core

ROOT = Path(__file__).resolve().parent.parent


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return repr(a) == repr(b)  # NaN compares equal this way


@pytest.mark.parametrize("name", ["incast-tcp", "dctcp-dumbbell", "fattree-websearch-drain", "reno-random-loss"])
def test_a_resolved_scenario_runs_to_the_same_tables(name: str) -> None:
    path = ROOT / "scenarios" / f"{name}.toml"
    text = path.read_text()
    # Small and short, so the test is quick.
    text = text.replace("k = 8", "k = 4").replace("duration_ms = 200", "duration_ms = 20").replace("arrivals_until_ms = 50", "arrivals_until_ms = 10")
    resolved = _core.resolve(text, str(path.parent))
    doc = tomllib.loads(resolved)
    # Defaults are written out.
    assert doc["seed"] == tomllib.loads(text).get("seed", 1)
    assert "stop_when_done" in doc and "network" in doc and "link" in doc["network"]
    assert "transport" in doc["traffic"][0] and "class" in doc["traffic"][0]
    a = _core.run(text, str(path.parent))
    b = _core.run(resolved, str(path.parent))
    for table in ("flows", "queues", "subflows"):
        assert same(a[table], b[table]), table
    # Resolving is idempotent.
    assert _core.resolve(resolved, str(path.parent)) == resolved


def test_resolve_refuses_what_validate_refuses() -> None:
    with pytest.raises(ValueError, match="duration_ms: must be a positive number"):
        _core.resolve('duration_ms = -1\n[topology.star]\nsenders = 1\n[[traffic]]\npattern = "incast"\nsize = { fixed = 1 }\n', ".")


FLOW = """
duration_ms = 100
level = "flow"
[flow_model]
max_iterations = 2000
tolerance = 1e-9
[topology.fat_tree]
k = 4
[[traffic]]
pattern = "permutation"
transport = "mptcp"
size = "long_lived"
"""


def test_flow_level_progress_reports_iterations_and_can_stop() -> None:
    seen: list[tuple[float, int]] = []

    def progress(position: float, iterations: int) -> bool:
        seen.append((position, iterations))
        return True

    full = _core.run(FLOW, ".", progress=progress, progress_iterations=50)
    n = full["counters"]["iterations"]
    assert n > 100
    assert seen == [(float(i), i) for i in range(50, n + 1, 50)]
    assert full["counters"]["partial"] is False

    def stop(position: float, iterations: int) -> bool:
        return iterations < 100

    stopped = _core.run(FLOW, ".", progress=stop, progress_iterations=50)
    c = stopped["counters"]
    assert c["partial"] is True and c["converged"] is False
    assert c["iterations"] == 100 and c["residual"] > 0


def test_estimate_counts_what_drives_memory() -> None:
    text = (ROOT / "bench" / "fattree8-mptcp8.toml").read_text()
    e = _core.estimate(text, ".")
    # k = 8: 128 hosts, 80 switches, 3·128 links; 128 connections of 8 subflows.
    assert {k: e[k] for k in ("hosts", "switches", "ports", "connections", "subflows", "flows")} == {
        "hosts": 128, "switches": 80, "ports": 768, "connections": 128, "subflows": 1024, "flows": 128,
    }
    # Measured peak RSS of manypath-sim on this scenario: 18.1 MiB.
    assert e["peak_bytes"] / (18.1 * 2**20) == pytest.approx(1.0, abs=0.5)
    bigger = _core.estimate(text.replace("k = 8", "k = 16"), ".")
    assert bigger["peak_bytes"] > 4 * e["peak_bytes"]
    assert not math.isnan(bigger["peak_bytes"])
