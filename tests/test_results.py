from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

import manypath
from manypath.results import (
    COUNTERS_FILE,
    FLOW_SAMPLES_FILE,
    FLOWS_FILE,
    QUEUE_SAMPLES_FILE,
    QUEUES_FILE,
    SUBFLOWS_FILE,
    Results,
)
from manypath.loader import load


def test_summary(results: Results) -> None:
    s = results.summary()
    assert s["name"] == "hand-made"
    assert s["flows"] == 4 and s["completed"] == 3
    assert s["classes"]["short"] == {
        "flows": 2,
        "started": 2,
        "unmeasured": 0,
        "completed": 2,
        "censored": 0,
        "long_lived": 0,
        "censored_pct": 0.0,
        "fct_mean_ms": pytest.approx(3.0),
        "fct_p50_ms": pytest.approx(3.0),
        "fct_p99_ms": pytest.approx(3.98),
        "slowdown_mean": None,
        "slowdown_p50": None,
        "slowdown_p99": None,
    }
    # The bulk class's unfinished flow is long-lived (size -1): no FCT, not censored.
    bulk = s["classes"]["bulk"]
    assert (bulk["completed"], bulk["censored"], bulk["long_lived"]) == (1, 0, 1)
    assert s["warnings"] == []
    # Goodput is over the simulated time, not the configured duration.
    assert s["goodput_gbps"] == pytest.approx(54_000 * 8 / 0.01 / 1e9)
    assert s["drops"] == {"switch": 7, "host": 1}
    assert s["ecn_marks"] == {"switch": 23, "host": 0}
    assert s["timeouts"] == 1
    json.dumps(s, allow_nan=False)


def test_summary_of_a_class_with_no_finished_flow_is_json_safe(results: Results) -> None:
    results.flows.loc[results.flows["class"] == "bulk", "completed"] = False
    s = results.summary()
    assert s["classes"]["bulk"]["fct_p99_ms"] is None
    json.dumps(s, allow_nan=False)


def test_summary_of_an_empty_run() -> None:
    empty = Results(
        flows=pd.DataFrame(columns=["class", "completed", "fct_s", "bytes_acked", "timeouts"]),
        queues=pd.DataFrame(columns=["node_kind", "drops", "ecn_marks"]),
        counters={"sim_time_s": 0.0, "duration_s": 0.0},
    )
    s = empty.summary()
    assert s["classes"] == {} and s["goodput_gbps"] is None and s["timeouts"] == 0


def test_from_native_keeps_column_order_and_types() -> None:
    raw = {
        "flows": {"flow_id": [0, 1], "completed": [True, False], "fct_s": [0.1, math.nan]},
        "queues": {"port": ["a"], "drops": [3]},
        "counters": {"events": 10},
        "name": "x",
    }
    res = Results.from_native(raw)
    assert list(res.flows.columns) == ["flow_id", "completed", "fct_s"]
    assert res.flows["completed"].dtype == bool
    assert res.counters == {"events": 10} and res.name == "x"


def test_parquet_round_trip(results: Results, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "run"
    results.counters["wall_s"] = math.nan  # non-finite counters must survive too
    results.to_parquet(out)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [FLOWS_FILE, QUEUES_FILE, SUBFLOWS_FILE, FLOW_SAMPLES_FILE, QUEUE_SAMPLES_FILE, COUNTERS_FILE]
    )
    back = load(out)
    pd.testing.assert_frame_equal(back.flows, results.flows)
    pd.testing.assert_frame_equal(back.queues, results.queues)
    assert back.name == "hand-made"
    assert back.counters["events"] == 12345
    assert math.isnan(back.counters["wall_s"])
    assert back.summary() == results.summary()
    assert manypath.load(out).name == "hand-made"


def test_to_parquet_replaces_and_leaves_no_temp_files(results: Results, tmp_path: Path) -> None:
    results.to_parquet(tmp_path)
    results.name = "second"
    results.to_parquet(tmp_path)
    assert load(tmp_path).name == "second"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_failed_write_keeps_the_previous_file(
    results: Results, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results.to_parquet(tmp_path)
    before = (tmp_path / FLOWS_FILE).read_bytes()

    def broken(self: pd.DataFrame, *args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError):
        results.to_parquet(tmp_path)
    assert (tmp_path / FLOWS_FILE).read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_load_of_a_non_results_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="flows.parquet"):
        load(tmp_path)
