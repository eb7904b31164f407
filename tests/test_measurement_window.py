"""The measurement window (`measure_from_ms`, formerly `warmup_ms`) and arrivals that stop
before the end (`arrivals_until_ms`), from the native module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from manypath import _core

ROOT = Path(__file__).resolve().parent.parent

POISSON = """
duration_ms = 10
{top}
[topology.star]
senders = 4
[[traffic]]
pattern = "incast"
arrival = "poisson"
rate_per_s = 20000
size = {{ fixed = 5000 }}
{entry}
"""


def run(text: str) -> dict[str, Any]:
    return _core.run(text, ".")


def errors(text: str) -> str:
    with pytest.raises(ValueError) as e:
        _core.validate(text, ".")
    return str(e.value)


def test_flows_starting_before_the_window_are_run_but_not_measured() -> None:
    r = run(POISSON.format(top="measure_from_ms = 4", entry=""))
    f = r["flows"]
    starts = f["start_s"]
    assert any(s < 4e-3 for s in starts) and any(s >= 4e-3 for s in starts)
    assert f["measured"] == [s >= 4e-3 for s in starts]
    # Early flows still ran.
    assert all(f["completed"][i] for i, s in enumerate(starts) if s < 3e-3)
    assert r["counters"]["warmup_s"] == pytest.approx(4e-3)
    unmeasured = run(POISSON.format(top="", entry=""))["flows"]
    assert all(unmeasured["measured"])
    # The window changes no other column.
    for column in ("fct_s", "start_s", "bytes_acked", "goodput_bps"):
        assert unmeasured[column] == f[column]


def test_warmup_ms_is_the_older_name_of_measure_from_ms() -> None:
    pair = '[[traffic]]\npattern = "pair"\nsrc = 2\ndst = 3\nsize = "long_lived"\n'
    new = run(POISSON.format(top="measure_from_ms = 4", entry=pair))
    old = run(POISSON.format(top="warmup_ms = 4", entry=pair))
    assert repr(new["flows"]) == repr(old["flows"])  # NaN included
    assert new["counters"]["goodput_fraction"] == old["counters"]["goodput_fraction"]
    long_lived = new["flows"]["size"].index(-1)
    # Long-lived goodput counts from the window's start; such flows are measured.
    assert new["flows"]["measured"][long_lived] is True
    plain = run(POISSON.format(top="", entry=pair))
    assert new["flows"]["goodput_bps"][long_lived] != plain["flows"]["goodput_bps"][long_lived]


def test_the_window_is_checked() -> None:
    both = POISSON.format(top="measure_from_ms = 1\nwarmup_ms = 1", entry="")
    assert errors(both) == "measure_from_ms: give either measure_from_ms or warmup_ms (its older name), not both"
    late = POISSON.format(top="measure_from_ms = 10", entry="")
    assert errors(late) == "measure_from_ms: must be less than duration_ms (10), got 10"
    negative = POISSON.format(top="measure_from_ms = -1", entry="")
    assert errors(negative) == "measure_from_ms: must be zero or positive, got -1"


def test_poisson_arrivals_stop_at_arrivals_until_ms() -> None:
    r = run(POISSON.format(top="", entry="arrivals_until_ms = 3"))
    starts = r["flows"]["start_s"]
    assert len(starts) > 20 and max(starts) < 3e-3
    full = run(POISSON.format(top="", entry=""))["flows"]["start_s"]
    # The same draws: the first flows are the same, the later ones are gone.
    assert starts == [s for s in full if s < 3e-3]
    assert max(full) > 8e-3


def test_repetitions_stop_at_arrivals_until_ms() -> None:
    text = """
duration_ms = 10
[topology.star]
senders = 2
[[traffic]]
pattern = "incast"
size = { fixed = 1000 }
repeat = 10
interval_us = 1000
start_us = 500
arrivals_until_ms = 4.5
"""
    starts = sorted(set(run(text)["flows"]["start_s"]))
    assert starts == pytest.approx([0.5e-3, 1.5e-3, 2.5e-3, 3.5e-3])


@pytest.mark.parametrize(
    "entry,message",
    [
        ("arrivals_until_ms = 11", "traffic[0].arrivals_until_ms: must be at most duration_ms (10), got 11"),
        (
            "start_us = 2000\narrivals_until_ms = 2",
            "traffic[0].arrivals_until_ms: must be after the entry's start (start_us = 2000, i.e. 2 ms), got 2",
        ),
        ("arrivals_until_ms = 0", "traffic[0].arrivals_until_ms: must be a positive number, got 0"),
        (
            "arrivals_until_ms = 5\nuntil_us = 5000",
            "traffic[0].arrivals_until_ms: give either arrivals_until_ms or until_us, not both",
        ),
    ],
)
def test_arrivals_until_ms_is_checked(entry: str, message: str) -> None:
    assert errors(POISSON.format(top="", entry=entry)) == message


def test_closed_loops_take_no_arrivals_until_ms() -> None:
    text = """
duration_ms = 10
[topology.star]
senders = 2
[[traffic]]
pattern = "pair"
src = 1
dst = 0
size = { fixed = 1000 }
repeat = 5
closed_loop = true
arrivals_until_ms = 5
"""
    assert errors(text) == (
        "traffic[0].arrivals_until_ms: applies only to open-loop arrivals (closed loops end after repeat)"
    )


def test_the_shipped_drain_scenario_finishes_its_flows() -> None:
    path = ROOT / "scenarios" / "fattree-websearch-drain.toml"
    text = path.read_text().replace("k = 8", "k = 4")
    r = _core.run(text, str(path.parent))
    c = r["counters"]
    f = r["flows"]
    assert max(f["start_s"]) < 0.05
    assert c["flows_completed"] >= 0.99 * c["flows_generated"]
    assert not all(f["measured"]) and any(f["measured"])
