from __future__ import annotations

import math

import pandas as pd

from manypath import report
from manypath.results import Results


def test_fmt() -> None:
    assert report.fmt(1234567) == "1,234,567"
    assert report.fmt(1.23456) == "1.235"
    assert report.fmt(math.nan) == "-" and report.fmt(None) == "-"
    assert report.si(4.5e6) == "4.50 M" and report.si(12) == "12"


def test_table_aligns_columns() -> None:
    lines = report.table(["a", "bb"], [["long", "1"], ["x", "100"]]).splitlines()
    assert lines == ["a      bb", "long    1", "x     100"]


def test_run_summary_mentions_every_class(results: Results) -> None:
    text = report.run_summary(results.summary(), results.counters)
    assert text.startswith("hand-made: 4 flows generated, 4 started, 3 completed, 0 unfinished, "
                           "10.000 ms simulated")
    assert "long-lived" in text and "warning" not in text
    assert "short" in text and "bulk" in text and "12,345" in text


def test_frame_renders_missing_values() -> None:
    text = report.frame(pd.DataFrame({"n": [1], "jct_ms": [math.nan]}))
    assert text.splitlines()[1].split() == ["1", "-"]
