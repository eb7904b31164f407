"""Homa through the Python API: its flow columns, its step-sampled workloads, and the
scenario errors that name the field at fault."""

from __future__ import annotations

from pathlib import Path

import pytest

import manypath
from manypath import run

ROOT = Path(__file__).resolve().parents[1]

# Four senders to host 0 over 8-level switch queues, each sending two Homa messages.
HOMA = """\
duration_ms = 20

[topology.star]
senders = 4

[network.link]
rate_gbps = 10
delay_us = 1

[network.queue]
limit_packets = 1000
priority_levels = 8

[transports.homa]
cc = "homa"

[[traffic]]
pattern = "incast"
transport = "homa"
repeat = 2
interval_us = 50
size = { fixed = 60000 }
"""


def test_homa_flows_finish_and_report_grants() -> None:
    flows = run(HOMA).flows
    assert {"grants", "resends"} <= set(flows.columns)
    assert len(flows) == 8
    assert flows["fct_s"].notna().all()
    # 60 KB is beyond one RTT's unscheduled bytes: every message was granted.
    assert (flows["grants"] > 0).all()
    assert (flows["resends"] == 0).all()


def test_runs_without_homa_keep_their_columns() -> None:
    text = HOMA.replace('transport = "homa"', 'transport = "dctcp"')
    assert "grants" not in run(text).flows.columns


def test_cdf_step_draws_only_the_listed_sizes() -> None:
    text = HOMA.replace(
        "{ fixed = 60000 }", '{ cdf_step = "workloads/homa_w1_fb_keyvalue.cdf" }'
    ).replace("repeat = 2", "repeat = 50")
    flows = run(text, base_dir=ROOT).flows
    listed = {
        int(line.split()[0])
        for line in (ROOT / "workloads/homa_w1_fb_keyvalue.cdf").read_text().splitlines()
        if line and not line.startswith("#")
    }
    assert set(flows["size"]) <= listed
    assert flows["fct_s"].notna().all()


CASES = [
    pytest.param(
        HOMA.replace("priority_levels = 8", "priority_levels = 4"),
        ("transports.homa.homa_priority_levels", "network.queue.priority_levels", "4"),
        id="levels-beyond-the-switches",
    ),
    pytest.param(
        HOMA.replace("priority_levels = 8\n", ""),
        ("transports.homa.homa_priority_levels", "8"),
        id="fifo-switches",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_unscheduled_levels = 8'),
        ("transports.homa.homa_unscheduled_levels", "8"),
        id="no-level-left-for-grants",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_overcommit = 0'),
        ("transports.homa.homa_overcommit", "0"),
        id="overcommit-zero",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_rtt_bytes = -5'),
        ("transports.homa.homa_rtt_bytes",),
        id="rtt-bytes-negative",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_resend_timeout_us = 0'),
        ("transports.homa.homa_resend_timeout_us", "0"),
        id="timeout-zero",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_priority_levels = "eight"'),
        ("transports.homa.homa_priority_levels", "eight"),
        id="levels-wrong-type",
    ),
    pytest.param(
        HOMA.replace('cc = "homa"', 'cc = "dctcp"\nhoma_overcommit = 2'),
        ("transports.homa.homa_overcommit", "homa"),
        id="homa-field-on-dctcp",
    ),
    pytest.param(
        HOMA.replace("{ fixed = 60000 }", '"long_lived"'),
        ("traffic[0].size", "Homa"),
        id="long-lived-message",
    ),
    pytest.param(
        HOMA.replace("repeat = 2", "repeat = 2\nconnection_pool = true"),
        ("traffic[0].connection_pool", "Homa"),
        id="pooled-messages",
    ),
    pytest.param(
        HOMA + '\n[transports.homa2]\ncc = "homa"\n',
        ("transports.homa2.cc", "one Homa transport"),
        id="two-homa-transports",
    ),
    pytest.param(
        HOMA.replace("priority_levels = 8", "priority_levels = 8\npriority = true"),
        ("network.queue.priority_levels", "priority"),
        id="queue-levels-and-flag",
    ),
    pytest.param(
        HOMA.replace("priority_levels = 8", "priority_levels = 65"),
        ("network.queue.priority_levels", "65"),
        id="queue-levels-too-many",
    ),
    pytest.param(
        HOMA.replace("{ fixed = 60000 }", '{ cdf_step = "missing.cdf" }'),
        ("traffic[0].size", "missing.cdf"),
        id="cdf-step-missing-file",
    ),
]


@pytest.mark.parametrize("entry", [manypath.validate, manypath.run], ids=["validate", "run"])
@pytest.mark.parametrize(("toml", "expect"), CASES)
def test_bad_homa_input_names_the_field(
    toml: str, expect: tuple[str, ...], entry: object, tmp_path: Path
) -> None:
    with pytest.raises(ValueError) as info:
        entry(toml, base_dir=tmp_path)  # type: ignore[operator]
    message = str(info.value)
    for part in expect:
        assert part in message, message


def test_priority_levels_have_one_rule_and_one_error() -> None:
    # Out of range, Homa's levels get one error (not a second one asking the switches for
    # the out-of-range number); the switches' levels the same rule from 2.
    too_many = HOMA.replace('cc = "homa"', 'cc = "homa"\nhoma_priority_levels = 40')
    with pytest.raises(ValueError) as info:
        manypath.validate(too_many)
    assert str(info.value) == (
        "transports.homa.homa_priority_levels: must be from 1 to 32 (a switch queue has at most "
        "32 priority levels), got 40"
    )
    with pytest.raises(ValueError) as info:
        manypath.validate(too_many.replace("priority_levels = 8\n", "priority_levels = 40\n", 1))
    assert str(info.value).splitlines() == [
        "network.queue.priority_levels: must be from 2 to 32 (a switch queue has at most 32 "
        "priority levels), got 40",
        "transports.homa.homa_priority_levels: must be from 1 to 32 (a switch queue has at most "
        "32 priority levels), got 40",
    ]
    # The most there is works for both.
    most = too_many.replace("= 40", "= 32").replace("priority_levels = 8\n", "priority_levels = 32\n", 1)
    assert manypath.validate(most) == []


def test_the_documented_level_ranges_are_the_codes() -> None:
    doc = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert "`priority_levels = N` (N strict-priority levels,\n2–32, level 0 first" in doc
    assert "| `homa_priority_levels` | 8 (as the Homa paper's switches) | levels Homa uses, 1–32:" in doc


def test_w5s_header_says_what_it_is_and_states_its_mean() -> None:
    path = ROOT / "workloads" / "homa_w5_websearch.cdf"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))
    points = [tuple(map(float, line.split())) for line in lines if line and not line.startswith("#")]
    # Drawn as a step function (cdf_step), each listed size carries its CDF step.
    step_mean = sum(size * (cdf - (points[i - 1][1] if i else 0.0)) for i, (size, cdf) in enumerate(points))
    assert f"{step_mean:.1f}" == "2547267.9"
    assert lines[0] == ("# Workload: Homa W5, the Homa authors' web-search workload (Montazeri et al., "
                        "SIGCOMM 2018, Figure 1),")
    assert "It is not the pFabric web-search CDF" in header
    assert "its step mean, computed from the points below, is 2,547,267.9 B (2.55 MB;" in header
    assert "mean (step/discrete: each listed size carries F_i - F_{i-1}): 2547267.9 bytes" in header
    # The provenance table says the same.
    table = (ROOT / "workloads" / "README.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if line.startswith("| `homa_w5_websearch.cdf`"))
    assert "not pFabric's" in row and row.endswith("| 2,547,267.9 |")
