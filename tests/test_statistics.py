"""Honest FCT statistics (counts, censoring, warm-up), slowdown, size buckets and
confidence intervals across seeds, on hand-built tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from manypath import analysis, report
from manypath.results import Results

MB = 1_000_000


def web_flows() -> pd.DataFrame:
    """Class web: 100 measured flows of 10 KB (all finish in 1 ms, ideal 0.5 ms) and 25 of
    20 MB (19 finish in 100 ms, 6 still running), 10 flows started in the warm-up (FCT
    1000 ms, which must not count) and 5 never started. Class rpc: 50 flows of 1 KB."""
    rows = []

    def add(cls: str, size: int, n: int, fct: float, done: bool, started: bool = True,
            measured: bool = True, ideal: float = 0.5e-3) -> None:
        for _ in range(n):
            rows.append({"class": cls, "size": size, "start_s": 0.0 if started else math.nan,
                         "fct_s": fct if done else math.nan, "completed": done, "started": started,
                         "measured": measured and started, "ideal_fct_s": ideal})

    add("web", 10_000, 100, 1e-3, True)
    add("web", 20 * MB, 19, 0.1, True, ideal=0.02)
    add("web", 20 * MB, 6, 0.0, False, ideal=0.02)
    add("web", 10_000, 10, 1.0, True, measured=False)
    add("web", 10_000, 5, 0.0, False, started=False)
    add("rpc", 1_000, 50, 2e-4, True, ideal=1e-4)
    return pd.DataFrame(rows)


def test_counts_say_what_the_statistics_leave_out() -> None:
    st = analysis.fct_stats(web_flows())
    web = st.loc["web"]
    assert (web["flows"], web["started"], web["unmeasured"], web["completed"], web["censored"]) == (
        140, 135, 10, 119, 6)
    assert web["censored_pct"] == pytest.approx(100 * 6 / 125)
    # The warm-up flows' 1000 ms FCTs are out: the maximum is the 20 MB flows' 100 ms.
    assert web["fct_max_ms"] == pytest.approx(100.0)
    assert web["fct_mean_ms"] == pytest.approx((100 * 1 + 19 * 100) / 119)
    rpc = st.loc["rpc"]
    assert (rpc["flows"], rpc["completed"], rpc["censored"]) == (50, 50, 0)
    assert rpc["slowdown_p50"] == pytest.approx(2.0)


def test_older_tables_without_the_new_columns() -> None:
    old = web_flows().drop(columns=["started", "measured", "ideal_fct_s"])
    st = analysis.fct_stats(old).loc["web"]
    # A start time means started; every started flow is measured; no slowdown.
    assert (st["started"], st["unmeasured"], st["completed"]) == (135, 0, 129)
    assert math.isnan(st["slowdown_p99"])


def test_censoring_warning_names_the_class_and_the_bucket_hit_hardest() -> None:
    warnings = analysis.censoring_warnings(web_flows())
    assert warnings == [
        "p99 FCT of class web is a lower bound: 24% of its flows > 10 MB did not finish "
        "(6 of 125, 4.8%, in all)"
    ]
    assert analysis.censoring_warnings(web_flows(), threshold_pct=5.0) == []
    # Without sizes to tell buckets apart, the class as a whole.
    sizeless = web_flows().assign(size=10_000)
    assert analysis.censoring_warnings(sizeless) == [
        "p99 FCT of class web is a lower bound: 6 of its 125 flows (4.8%) did not finish"]


def test_summary_and_cli_table_report_unfinished_flows() -> None:
    res = Results(flows=web_flows().assign(timeouts=0, bytes_acked=0),
                  queues=pd.DataFrame(columns=["node_kind", "drops", "ecn_marks"]),
                  counters={"sim_time_s": 1.0}, name="censored")
    s = res.summary()
    assert (s["generated"], s["started"], s["unmeasured"], s["censored"]) == (190, 185, 10, 6)
    assert s["classes"]["web"]["censored"] == 6
    assert s["size_buckets"]["> 10 MB"]["censored"] == 6
    assert s["size_buckets"]["> 10 MB"]["censored_pct"] == pytest.approx(24.0)
    text = report.run_summary(s, res.counters)
    assert "190 flows generated, 185 started" in text and "6 unfinished" in text
    assert "warning: p99 FCT of class web is a lower bound" in text
    assert "slowdown p50" in text


def test_generated_count_comes_from_the_counters_when_present() -> None:
    res = Results(flows=web_flows().assign(timeouts=0, bytes_acked=0),
                  queues=pd.DataFrame(columns=["node_kind", "drops", "ecn_marks"]),
                  counters={"sim_time_s": 1.0, "flows_generated": 200, "flows_started": 185})
    s = res.summary()
    assert (s["generated"], s["started"]) == (200, 185)


def test_slowdown_is_fct_over_ideal() -> None:
    flows = pd.DataFrame({"fct_s": [2e-3, 1e-3, math.nan], "ideal_fct_s": [1e-3, 1e-3, 1e-3],
                          "completed": [True, True, False]})
    assert list(analysis.slowdown(flows).fillna(-1)) == [2.0, 1.0, -1]
    assert analysis.slowdown(flows.drop(columns="ideal_fct_s")).isna().all()


def test_size_buckets_default_and_configured() -> None:
    assert analysis.bucket_labels() == ["< 100 KB", "100 KB–10 MB", "> 10 MB"]
    flows = pd.DataFrame({"size": [99_999, 100_000, 10 * MB - 1, 10 * MB, -1],
                          "completed": [True] * 4 + [False], "fct_s": [1e-3] * 4 + [math.nan]})
    assert [str(b) for b in analysis.size_bucket(flows)] == [
        "< 100 KB", "100 KB–10 MB", "100 KB–10 MB", "> 10 MB", "nan"]
    st = analysis.bucket_stats(flows)
    assert list(st.index) == ["< 100 KB", "100 KB–10 MB", "> 10 MB"]
    assert list(st["flows"]) == [1, 2, 1]
    custom = analysis.bucket_stats(flows, edges=(1_000, 1 * MB, 5 * MB))
    assert list(custom.index) == ["< 1 KB", "1 KB–1 MB", "1 MB–5 MB", "> 5 MB"]
    assert list(custom["flows"]) == [0, 2, 0, 2]
    with pytest.raises(ValueError, match="increasing"):
        analysis.bucket_labels((10 * MB, 100_000))


def test_bucket_stats_within_classes() -> None:
    st = analysis.bucket_stats(web_flows(), by="class")
    assert st.loc[("web", "> 10 MB"), "censored"] == 6
    assert st.loc[("web", "< 100 KB"), "slowdown_p99"] == pytest.approx(2.0)
    assert st.loc[("rpc", "> 10 MB"), "flows"] == 0


@pytest.mark.parametrize(("p", "df", "expected"), [
    (0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 4, 2.7764), (0.975, 9, 2.2622),
    (0.975, 29, 2.0452), (0.95, 10, 1.8125), (0.995, 5, 4.0321), (0.025, 4, -2.7764),
])
def test_t_quantile_matches_the_tables(p: float, df: int, expected: float) -> None:
    assert analysis.t_quantile(p, df) == pytest.approx(expected, abs=1e-4)


def test_t_interval_contains_the_mean_and_shrinks_as_seeds_are_added() -> None:
    # Values alternating 10 ± 1: for an even n the sample s.d. is sqrt(n / (n - 1)), so the
    # half-width is exactly t(0.975, n - 1) / sqrt(n - 1).
    widths = []
    for n in (2, 4, 8, 16, 32):
        values = [10 + (1 if i % 2 else -1) for i in range(n)]
        mean, low, high, count = analysis.mean_ci(values)
        assert count == n and mean == pytest.approx(10.0)
        assert low < mean < high
        assert (high - low) / 2 == pytest.approx(analysis.t_quantile(0.975, n - 1) / math.sqrt(n - 1))
        widths.append(high - low)
    assert all(a > b for a, b in zip(widths, widths[1:]))
    # From 8 to 32 seeds the width falls by √(31/7) (the s.d. over √(n − 1)) times the
    # ratio of t's quantiles (fatter tails with fewer seeds): 2.44.
    assert widths[2] / widths[4] == pytest.approx(2.44, abs=0.01)


def test_bootstrap_interval_shrinks_like_one_over_root_n() -> None:
    # Normal samples rescaled to the same s.d. (ddof 0) σ = 5: the percentile bootstrap's
    # width is then about 2 · 1.96 · σ / √n, so 16 → 256 seeds divides it by √16 = 4.
    rng = np.random.default_rng(7)
    widths = {}
    for n in (16, 256):
        data = rng.normal(0.0, 1.0, size=n)
        data = 50.0 + 5.0 * (data - data.mean()) / data.std()
        mean, low, high, count = analysis.mean_ci(data, method="bootstrap")
        assert count == n and low < mean < high and mean == pytest.approx(50.0)
        widths[n] = high - low
        assert widths[n] == pytest.approx(2 * 1.96 * 5.0 / math.sqrt(n), rel=0.1)
        # Reproducible: the same resampling seed gives the same interval.
        assert analysis.mean_ci(data, method="bootstrap") == (mean, low, high, n)
    assert widths[16] / widths[256] == pytest.approx(4.0, rel=0.1)


def test_interval_inputs() -> None:
    assert analysis.mean_ci([3.0])[0] == 3.0 and math.isnan(analysis.mean_ci([3.0])[1])
    assert analysis.mean_ci([])[3] == 0
    with pytest.raises(ValueError, match="method"):
        analysis.mean_ci([1, 2], method="jackknife")
    with pytest.raises(ValueError, match="level"):
        analysis.mean_ci([1, 2], level=95)


def sweep_flows() -> pd.DataFrame:
    """Two loads × three seeds; run r of load L has flows with FCT L·(1 + r) ms."""
    rows = []
    for load in (0.3, 0.6):
        for seed in range(3):
            for i in range(10):
                rows.append({"point": f"load={load}", "run_id": f"{load}-{seed}", "size": 1000,
                             "completed": i < 9, "fct_s": load * (1 + seed) * 1e-3 if i < 9 else math.nan})
    return pd.DataFrame(rows)


def test_sweep_table_aggregates_per_run_statistics_over_seeds() -> None:
    table = analysis.sweep_fct_table(sweep_flows(), by="point")
    row = table.loc["load=0.3"]
    assert (row["runs"], row["flows"], row["completed"], row["censored"]) == (3, 30, 27, 3)
    assert row["censored_pct"] == pytest.approx(10.0)
    # Per-run means 0.3, 0.6, 0.9 ms: mean 0.6, s = 0.3, half-width t(0.975, 2)·0.3/√3.
    assert row["fct_mean_ms"] == pytest.approx(0.6)
    half = analysis.t_quantile(0.975, 2) * 0.3 / math.sqrt(3)
    assert row["fct_mean_ms_ci_low"] == pytest.approx(0.6 - half)
    assert row["fct_mean_ms_ci_high"] == pytest.approx(0.6 + half)
    overall = analysis.sweep_fct_table(sweep_flows(), by=None)
    assert overall.loc["all", "runs"] == 6


def test_a_run_of_long_lived_flows_has_no_size_buckets() -> None:
    flows = pd.DataFrame({"class": ["bulk"] * 2, "size": [-1, -1], "start_s": [0.0, 0.0],
                          "completed": [False, False], "fct_s": [math.nan] * 2, "timeouts": 0, "bytes_acked": 1})
    res = Results(flows=flows, queues=pd.DataFrame(columns=["node_kind", "drops", "ecn_marks"]),
                  counters={"sim_time_s": 1.0})
    s = res.summary()
    assert s["size_buckets"] == {} and s["warnings"] == [] and s["long_lived"] == 2
    assert s["classes"]["bulk"]["long_lived"] == 2 and s["classes"]["bulk"]["censored"] == 0


def test_rows_with_a_missing_key_are_kept_not_dropped() -> None:
    flows = pd.DataFrame({"p": [1.0, math.nan], "completed": [True, True], "fct_s": [1e-3, 2e-3]})
    st = analysis.fct_stats(flows, by="p")
    assert int(st["flows"].sum()) == 2
    table = analysis.sweep_fct_table(sweep_flows().assign(k="x"), by=["k", "point"])
    assert list(table["runs"]) == [3, 3]
