"""Flow and queue time series (`output.flow_sample_us`, `output.queue_sample_us`), their
plots and report figures, and closed-loop repetitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import manypath
from manypath import plots, report_html
from manypath.loader import load

FLOW_PERIOD_US = 200.0
QUEUE_PERIOD_US = 20.0


def scenario(**output: Any) -> dict[str, Any]:
    return {
        "name": "series",
        "duration_ms": 20,
        "topology": {"star": {"senders": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 5}, "queue": {"limit_packets": 60}},
        "transports": {"mp2": {"cc": "lia", "subflows": 2}},
        "output": {"flow_sample_us": FLOW_PERIOD_US, "queue_sample_us": QUEUE_PERIOD_US, **output},
        "traffic": [
            {"pattern": "incast", "receiver": 0, "senders": 2, "size": "long_lived"},
            {"pattern": "pair", "src": 3, "dst": 0, "transport": "mp2", "size": "long_lived"},
            {"pattern": "pair", "src": 4, "dst": 0, "size": {"fixed": 300_000}, "start_us": 5000},
        ],
    }


@pytest.fixture(scope="module")
def res() -> manypath.Results:
    return manypath.run(scenario())


def test_flow_samples_cover_every_running_subflow(res: manypath.Results) -> None:
    fs = res.flow_samples
    times = np.sort(fs["time_s"].unique())
    assert np.allclose(np.diff(times), FLOW_PERIOD_US / 1e6)
    assert len(times) == 100  # 20 ms every 200 µs
    per_flow = fs.groupby("flow_id")["subflow"].nunique().to_dict()
    assert per_flow == {0: 1, 1: 1, 2: 2, 3: 1}
    # The finite flow appears from its start until the first sample after its finish.
    short = res.flows.set_index("flow_id").loc[3]
    t3 = fs[fs["flow_id"] == 3]["time_s"]
    assert t3.min() >= short["start_s"] and t3.min() < short["start_s"] + FLOW_PERIOD_US / 1e6
    assert t3.max() >= short["finish_s"] and t3.max() < short["finish_s"] + FLOW_PERIOD_US / 1e6
    for _, g in fs.groupby(["flow_id", "subflow"]):
        assert g["bytes_acked"].is_monotonic_increasing
    assert (fs["cwnd_bytes"] > 0).all() and (fs["srtt_us"] > 0).any()
    # The last sample of each flow is at most what the flow table reports at the end.
    last = fs.groupby("flow_id")["bytes_acked"].max()
    sub = fs.groupby(["flow_id", "time_s"])["bytes_acked"].sum().groupby("flow_id").max()
    assert (sub <= res.flows.set_index("flow_id")["bytes_acked"] + 1460 * 2).all()
    assert (last > 0).all()


def test_queue_samples_agree_with_the_time_weighted_mean(res: manypath.Results) -> None:
    qs = res.queue_samples
    switch_ports = res.queues[res.queues["node_kind"] == "switch"]["port"]
    assert set(qs["port"]) == set(switch_ports)
    assert len(qs) == len(switch_ports) * 1000  # every 20 µs for 20 ms
    bottleneck = res.queues.sort_values("mean_bytes").iloc[-1]
    sampled = qs[qs["port"] == bottleneck["port"]]["bytes"].mean()
    assert bottleneck["mean_bytes"] > 10_000
    assert sampled == pytest.approx(bottleneck["mean_bytes"], rel=0.1)
    assert (qs["rwndq_window"] == 0).all()


def test_queue_samples_of_chosen_tiers_only() -> None:
    sc = scenario(queue_sample_tiers=["host"])
    sc["topology"] = {"dumbbell": {"pairs": 2}}
    sc["traffic"] = [{"pattern": "pair", "src": 0, "dst": 2, "size": {"fixed": 50_000}}]
    res = manypath.run(sc)
    sampled = res.queues.set_index("port").loc[sorted(res.queue_samples["port"].unique())]
    assert (sampled["tier"] == "host").all() and (sampled["node_kind"] == "switch").all()
    assert len(sampled) == 4


def test_series_are_deterministic_and_survive_parquet(res: manypath.Results, tmp_path: Path) -> None:
    again = manypath.run(scenario())
    pd.testing.assert_frame_equal(res.flow_samples, again.flow_samples)
    pd.testing.assert_frame_equal(res.queue_samples, again.queue_samples)
    res.to_parquet(tmp_path)
    back = load(tmp_path)
    pd.testing.assert_frame_equal(back.flow_samples, res.flow_samples)
    pd.testing.assert_frame_equal(back.queue_samples, res.queue_samples)


def test_no_series_unless_asked() -> None:
    sc = scenario()
    del sc["output"]
    res = manypath.run(sc)
    assert res.flow_samples.empty and res.queue_samples.empty


@pytest.mark.parametrize(
    ("output", "field"),
    [
        ({"flow_sample_us": -5}, "output.flow_sample_us"),
        ({"queue_sample_us": 0}, "output.queue_sample_us"),
        ({"queue_sample_tiers": ["core"]}, "output.queue_sample_tiers[0]"),
    ],
)
def test_bad_sampling_settings_are_named(output: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        manypath.run(scenario(**output))


def test_time_series_plots(res: manypath.Results) -> None:
    fig = plots.queue_timeseries(res.queue_samples, res.queues, top=3)
    assert len(fig.axes[0].lines) == 3
    assert "switch → host0" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    fig = plots.cwnd_traces(res.flow_samples, 2)
    assert len(fig.axes[0].lines) == 2


def test_run_report_shows_the_series(res: manypath.Results, tmp_path: Path) -> None:
    res.to_parquet(tmp_path / "run")
    page = report_html.render(tmp_path / "run")
    assert "queue length over time" in page
    assert "congestion window of each subflow of flow 2" in page


def test_closed_loop_requests_follow_each_other() -> None:
    think_us = 30.0
    sc = {
        "duration_ms": 100,
        "topology": {"star": {"senders": 2}},
        "traffic": [
            {"pattern": "pair", "src": 1, "dst": 0, "size": {"fixed": 20_000}, "repeat": 6,
             "closed_loop": True, "interval_us": think_us, "start_us": 100},
            {"pattern": "incast", "receiver": 0, "senders": 2, "size": {"fixed": 5_000}, "repeat": 3,
             "closed_loop": True},
        ],
    }
    res = manypath.run(sc)
    flows = res.flows.set_index("flow_id")
    assert flows["completed"].all()
    chain = flows.loc[0:5]
    assert chain["start_s"].iloc[0] == pytest.approx(100e-6)
    gaps = chain["start_s"].to_numpy()[1:] - chain["finish_s"].to_numpy()[:-1]
    assert gaps == pytest.approx([think_us * 1e-6] * 5, abs=1e-9)
    # Incast repetitions chain per sender: sender 2's second flow waits for its first.
    inc = flows.loc[6:]
    for src, g in inc.groupby("src"):
        starts, finishes = g["start_s"].to_numpy(), g["finish_s"].to_numpy()
        assert (starts[1:] == pytest.approx(finishes[:-1])), src


def test_closed_loop_flow_that_never_starts_has_no_start_time() -> None:
    sc = {
        "duration_ms": 1,
        "stop_when_done": False,
        "topology": {"star": {"senders": 1}},
        "traffic": [{"pattern": "pair", "src": 1, "dst": 0, "size": {"fixed": 5_000_000}, "repeat": 2,
                     "closed_loop": True}],
    }
    flows = manypath.run(sc).flows
    assert not flows["completed"].any()
    assert np.isnan(flows["start_s"].iloc[1]) and flows["start_s"].iloc[0] == 0


def test_closed_loop_needs_a_repeating_pattern() -> None:
    sc = {"duration_ms": 1, "topology": {"star": {"senders": 2}},
          "traffic": [{"pattern": "permutation", "size": {"fixed": 1000}, "closed_loop": True}]}
    with pytest.raises(ValueError, match=r"traffic\[0\]\.closed_loop"):
        manypath.run(sc)
