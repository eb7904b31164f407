from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from manypath import analysis
from manypath.results import Results


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([5.0, 5.0, 5.0, 5.0], 1.0),
        ([1.0, 0.0], 0.5),
        ([3.0, 0.0, 0.0], 1 / 3),
        ([1.0, 2.0, 3.0], 36 / 42),
        (np.array([2.0]), 1.0),
        (pd.Series([7, 7]), 1.0),
    ],
)
def test_jain_index(values: object, expected: float) -> None:
    assert analysis.jain_index(values) == pytest.approx(expected)  # type: ignore[arg-type]


def test_jain_index_is_scale_free() -> None:
    xs = [1.0, 4.0, 9.0]
    assert analysis.jain_index(xs) == pytest.approx(analysis.jain_index([x * 1e9 for x in xs]))


def test_jain_index_undefined_and_invalid() -> None:
    assert math.isnan(analysis.jain_index([]))
    assert math.isnan(analysis.jain_index([0, 0]))
    with pytest.raises(ValueError):
        analysis.jain_index([1.0, -1.0])
    with pytest.raises(ValueError):
        analysis.jain_index([1.0, math.nan])


def test_percentile_ignores_nan_and_handles_empty() -> None:
    assert analysis.percentile([1, 2, 3, math.nan], 50) == 2.0
    assert analysis.percentile(range(101), 99) == pytest.approx(99.0)
    assert math.isnan(analysis.percentile([], 50))
    assert math.isnan(analysis.percentile([math.nan], 50))
    assert analysis.percentiles([1, 2, 3, 4, 5], (50, 99.9)) == {
        "p50": 3.0,
        "p99.9": pytest.approx(4.996),
    }


def test_fct_stats_by_class(results: Results) -> None:
    st = analysis.fct_stats(results.flows)
    assert list(st.index) == ["bulk", "short"]
    short = st.loc["short"]
    assert short["flows"] == 2 and short["completed"] == 2
    assert short["fct_mean_ms"] == pytest.approx(3.0)
    assert short["fct_p50_ms"] == pytest.approx(3.0)
    assert short["fct_p99_ms"] == pytest.approx(3.98)
    bulk = st.loc["bulk"]
    # The unfinished flow counts as a flow but not in the FCT statistics.
    assert bulk["flows"] == 2 and bulk["completed"] == 1
    assert bulk["fct_max_ms"] == pytest.approx(10.0)


def test_fct_stats_overall_and_multi_key(results: Results) -> None:
    overall = analysis.fct_stats(results.flows, by=None)
    assert overall.loc["all", "completed"] == 3
    assert overall.loc["all", "fct_mean_ms"] == pytest.approx(16 / 3)
    multi = analysis.fct_stats(results.flows, by=["transport", "class"])
    assert multi.loc[("tcp", "short"), "flows"] == 2


def test_fct_stats_group_with_nothing_finished() -> None:
    flows = pd.DataFrame({"class": ["a"], "completed": [False], "fct_s": [math.nan]})
    st = analysis.fct_stats(flows)
    assert st.loc["a", "completed"] == 0
    assert math.isnan(st.loc["a", "fct_p99_ms"])


def test_goodput(results: Results) -> None:
    assert analysis.goodput(results.flows, 0.01) == pytest.approx(54_000 * 8 / 0.01 / 1e9)
    assert math.isnan(analysis.goodput(results.flows, 0.0))
    by = analysis.goodput_by(results.flows, 0.01)
    assert by["short"] == pytest.approx(4000 * 8 / 0.01 / 1e9)
    assert by.sum() == pytest.approx(analysis.goodput(results.flows, 0.01))


def test_job_stats(results: Results) -> None:
    jobs = analysis.job_stats(results.flows)
    assert list(jobs["job"]) == [0]
    assert jobs.loc[0, "flows"] == 2
    assert jobs.loc[0, "bytes"] == 4000
    assert jobs.loc[0, "jct_ms"] == pytest.approx(5.0)


def test_job_stats_unfinished_job_has_no_jct() -> None:
    flows = pd.DataFrame(
        {
            "job": [3, 3],
            "size": [10, 10],
            "start_s": [0.0, 0.0],
            "finish_s": [1.0, math.nan],
            "completed": [True, False],
        }
    )
    assert math.isnan(analysis.job_stats(flows).loc[0, "jct_ms"])


def test_port_totals(results: Results) -> None:
    assert analysis.port_totals(results.queues, "drops") == {"switch": 7, "host": 1}
    assert analysis.port_totals(results.queues.iloc[:0], "drops") == {"switch": 0, "host": 0}
