from __future__ import annotations

import math

import pandas as pd
import pytest

from manypath import experiments
from manypath.experiments import incast, rdma, registry
from manypath.results import Results


def test_incast_is_registered() -> None:
    exp = experiments.get("incast-tcp")
    assert exp.fn is incast.run_incast
    assert exp.document and exp.figure and exp.compares
    assert "incast-tcp" in [e.name for e in experiments.all_experiments()]


def test_unknown_experiment() -> None:
    with pytest.raises(KeyError, match="incast-tcp"):
        experiments.get("nope")


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        registry.experiment(
            name="incast-tcp", document="", figure="", compares="", reduced_time="", full_time=""
        )(lambda full, seed: pd.DataFrame())


def test_incast_scenario_matches_the_setup() -> None:
    doc = incast.scenario(24, seed=3)
    assert doc["seed"] == 3
    assert doc["topology"] == {"star": {"senders": 24}}
    assert doc["network"]["link"] == {"rate_gbps": 10, "delay_us": 10}
    assert doc["network"]["queue"] == {"limit_packets": 100}
    assert doc["tcp"]["rto_min_us"] == 200_000
    (t,) = doc["traffic"]
    assert (t["pattern"], t["transport"], t["receiver"], t["senders"]) == ("incast", "tcp", 0, 24)
    assert t["size"] == {"fixed": 131072}


def _incast_results(fan_in: int, timeouts: list[int], finish: list[float]) -> Results:
    flows = pd.DataFrame(
        {
            "class": ["incast"] * fan_in,
            "completed": [not math.isnan(f) for f in finish],
            "start_s": [0.0] * fan_in,
            "finish_s": finish,
            "fct_s": finish,
            "timeouts": timeouts,
        }
    )
    queues = pd.DataFrame(
        {
            "node_kind": ["switch", "switch", "host"],
            "peer": ["host0", "host1", "switch"],
            "drops": [12, 5, 0],
        }
    )
    return Results(flows=flows, queues=queues, counters={}, name="x")


def test_measure() -> None:
    row = incast.measure(_incast_results(2, [0, 1], [0.001, 0.201]), 2)
    assert row["jct_ms"] == pytest.approx(201.0)
    assert row["fct_mean_ms"] == pytest.approx(101.0)
    assert row["timeouts"] == 1 and row["flows_with_timeout"] == 1
    # Only the port towards the receiver is the bottleneck.
    assert row["bottleneck_drops"] == 12
    assert row["goodput_gbps"] == pytest.approx(2 * 131072 * 8 / 0.201 / 1e9)


def test_measure_with_an_unfinished_flow() -> None:
    row = incast.measure(_incast_results(2, [0, 3], [0.001, math.nan]), 2)
    assert row["completed"] == 1
    assert math.isnan(row["jct_ms"]) and math.isnan(row["goodput_gbps"])


def test_incast_reduced_run_shows_the_collapse() -> None:
    df = incast.run_incast(False, 1)
    assert list(df.columns) == incast.COLUMNS
    assert list(df["fan_in"]) == list(incast.REDUCED_FAN_IN)
    assert (df["completed"] == df["fan_in"]).all()
    one = df.iloc[0]
    # A single 128 KB response needs no retransmission and finishes well under 1 ms
    # plus handshake at 10 Gbit/s.
    assert one["timeouts"] == 0 and one["jct_ms"] < 1.0
    # 40 senders × 10-segment initial windows overflow a 100-packet buffer: at least one
    # sender waits out the 200 ms minimum RTO.
    forty = df[df["fan_in"] == 40].iloc[0]
    assert forty["bottleneck_drops"] > 0
    assert forty["timeouts"] >= 1 and forty["jct_ms"] > 200.0


@pytest.mark.parametrize("name", [e.name for e in experiments.all_experiments()])
def test_every_experiment_runs_at_reduced_scale(name: str) -> None:
    if name in rdma.EXPERIMENTS and not rdma.roce_supported():
        pytest.skip('the simulator does not accept cc = "dcqcn" yet')
    table = experiments.get(name).run(full=False, seed=1)
    assert len(table) > 0 and not table.isna().all().any(), table
