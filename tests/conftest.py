from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from pathlib import Path

import pandas as pd
import pytest

from manypath.results import Results
from manypath.scenario import Scenario

NAN = math.nan

INCAST_TOML = """\
name = "incast-small"
seed = 1
duration_ms = 2000

[topology.star]
senders = 4

[network.link]
rate_gbps = 10
delay_us = 10

[network.queue]
limit_packets = 100

[tcp]
rto_min_us = 200000

[[traffic]]
pattern = "incast"
transport = "tcp"
class = "incast"
receiver = 0
senders = 4
size = { fixed = 131072 }
"""


def make_results() -> Results:
    """A hand-made run: two classes, one unfinished flow, switch and host ports."""
    flows = pd.DataFrame(
        {
            "flow_id": [0, 1, 2, 3],
            "src": [1, 2, 3, 4],
            "dst": [0, 0, 0, 0],
            "transport": ["tcp", "tcp", "dctcp", "dctcp"],
            "class": ["short", "short", "bulk", "bulk"],
            "job": [0, 0, -1, -1],
            "size": [1000, 3000, 10_000, -1],
            "start_s": [0.0, 0.001, 0.0, 0.0],
            "finish_s": [0.002, 0.005, 0.010, NAN],
            "fct_s": [0.002, 0.004, 0.010, NAN],
            "completed": [True, True, True, False],
            "bytes_sent": [1000, 4460, 10_000, 50_000],
            "bytes_retx": [0, 1460, 0, 0],
            "bytes_acked": [1000, 3000, 10_000, 40_000],
            "goodput_bps": [4e6, 6e6, 8e6, 3.2e7],
            "timeouts": [0, 1, 0, 0],
            "fast_retx": [0, 0, 1, 2],
        }
    )
    queues = pd.DataFrame(
        {
            "port": ["switch->host0", "switch->host1", "host1->switch"],
            "node": ["switch", "switch", "host1"],
            "node_kind": ["switch", "switch", "host"],
            "tier": ["host", "host", "host"],
            "peer": ["host0", "host1", "switch"],
            "rate_bps": [1e10, 1e10, 1e10],
            "tx_packets": [100, 10, 50],
            "tx_bytes": [150_000, 15_000, 75_000],
            "utilization": [0.5, 0.05, 0.25],
            "enqueued": [110, 10, 50],
            "drops": [7, 0, 1],
            "ecn_marks": [20, 3, 0],
            "max_packets": [100, 3, 10],
            "max_bytes": [150_000, 4500, 15_000],
            "mean_packets": [40.0, 1.0, 2.0],
            "mean_bytes": [60_000.0, 1500.0, 3000.0],
            "p50_packets": [NAN, NAN, NAN],
            "p95_packets": [NAN, NAN, NAN],
            "p99_packets": [NAN, NAN, NAN],
        }
    )
    counters = {
        "events": 12345,
        "packet_hops": 6789,
        "sim_time_s": 0.01,
        "wall_s": 0.5,
        "events_per_s": 24690.0,
        "hops_per_s": 13578.0,
        "flows": 4,
        "flows_completed": 3,
        "seed": 7,
        "duration_s": 0.02,
    }
    return Results(flows=flows, queues=queues, counters=counters, name="hand-made")


@pytest.fixture
def results() -> Results:
    return make_results()


@pytest.fixture
def incast_text() -> str:
    return INCAST_TOML


@pytest.fixture
def incast_file(tmp_path: Path) -> Path:
    path = tmp_path / "incast.toml"
    path.write_text(INCAST_TOML)
    return path


# --- Simulation validation ----------------------------------------------------------------

RunFn = Callable[..., Results]


def assert_packets_conserved(res: Results) -> None:
    """Every packet the run created was delivered, dropped, or is still in the network.

    A packet that leaks (freed without being counted, or counted twice) makes every other
    number of the run suspect, so validation runs check this before anything else.
    """
    c = res.counters
    created = int(c["packets_created"])
    delivered = int(c["packets_delivered"])
    dropped = int(c["packets_dropped"])
    in_flight = int(c["packets_in_flight"])
    assert created > 0, "the run created no packets"
    assert created == delivered + dropped + in_flight, (
        f"packets not conserved: created {created} != delivered {delivered} "
        f"+ dropped {dropped} + in flight {in_flight}"
    )


@pytest.fixture
def run_checked() -> RunFn:
    """``manypath.run`` that also asserts packet conservation after the run."""
    import manypath  # the native module is needed only by the tests that simulate

    def run(scenario: Scenario, *, seed: int | None = None) -> Results:
        res = manypath.run(scenario, seed=seed)
        assert_packets_conserved(res)
        return res

    return run


@pytest.fixture(autouse=True)
def _every_run_conserves_packets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks packet conservation at the end of every simulation a test runs in-process
    (API, CLI through CliRunner, experiments), not only in the validation tests."""
    import manypath._core as core

    real = core.run

    def checked(*args: Any, **kwargs: Any) -> dict[str, Any]:
        out: dict[str, Any] = real(*args, **kwargs)
        c = out["counters"]
        created = int(c["packets_created"])
        accounted = int(c["packets_delivered"]) + int(c["packets_dropped"]) + int(c["packets_in_flight"])
        assert created == accounted, f"packets not conserved: created {created} != {accounted}"
        return out

    monkeypatch.setattr(core, "run", checked)
