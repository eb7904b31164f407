"""NDP through the Python API: its columns, its experiments' scenarios and reduced runs,
and the scenarios it refuses, each naming the field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import manypath
from refusals import assert_refused
from manypath.experiments import ndp

STAR = """\
duration_ms = 20

[topology.star]
senders = 8

[network.queue]
limit_packets = 100
trim = {}

[transports.n]
cc = "ndp"

[[traffic]]
pattern = "incast"
transport = "n"
size = { fixed = 90000 }
"""


def test_ndp_runs_report_pulls_nacks_and_trimming() -> None:
    res = manypath.run(STAR)
    flows, queues = res.flows, res.queues
    assert {"pulls", "nacks", "trimmed"} <= set(flows.columns)
    assert {"trimmed", "header_drops", "returned"} <= set(queues.columns)
    assert flows["completed"].all()
    assert (flows["timeouts"] == 0).all()
    # Eight first windows into one port: some are trimmed, each NACKed and resent.
    trimmed = int(queues["trimmed"].sum())
    assert trimmed > 0
    assert int(flows["trimmed"].sum()) == trimmed == int(flows["nacks"].sum())
    assert int(flows["packets_retx"].sum()) == trimmed
    assert (flows["pulls"] > 0).all()


def test_other_runs_keep_their_columns() -> None:
    text = STAR.replace('transport = "n"', 'transport = "dctcp"').replace("trim = {}\n", "")
    res = manypath.run(text)
    assert "pulls" not in res.flows.columns
    assert "trimmed" not in res.queues.columns


def test_experiment_scenarios_follow_the_documented_settings() -> None:
    s = ndp.permutation_scenario(4, "ndp", 1, 5.0)
    assert s["network"]["queue"] == {"limit_packets": 100, "trim": {}}
    assert s["network"]["host_queue"] == {"priority": True}
    assert s["transports"]["ndp"] == {"cc": "ndp", "window_bytes": 135_000}
    d = ndp.permutation_scenario(4, "dctcp", 1, 5.0)
    assert d["network"]["queue"] == {"limit_packets": 100, "ecn_k_packets": 15}
    assert d["tcp"]["mss"] + 40 == ndp.PACKET_BYTES
    assert ndp.permutation_scenario(4, "mptcp", 1, 5.0)["transports"]["mptcp"]["subflows"] == 8
    i = ndp.incast_scenario(16, "ndp", 1)
    assert i["traffic"][0]["senders"] == 16
    with pytest.raises(ValueError, match="unknown scheme"):
        ndp.transports("quic")


def test_ndp_fills_a_permutation_that_dctcp_on_ecmp_does_not() -> None:
    table = ndp.run_permutation(False, 1).set_index("scheme")
    assert table.loc["ndp", "throughput_fraction"] >= 0.9
    assert table.loc["ndp", "throughput_fraction"] > table.loc["dctcp", "throughput_fraction"] + 0.1
    assert table.loc["ndp", "timeouts"] == 0


def test_ndp_incast_completes_near_line_rate_without_timeouts() -> None:
    table = ndp.run_incast(False, 1)
    n = table[table["scheme"] == "ndp"]
    assert (n["completed"] == n["fan_in"]).all()
    assert (n["timeouts"] == 0).all()
    assert (n["drops"] == 0).all()
    assert (n["slowdown"] < 1.2).all(), n
    big = n[n["fan_in"] == n["fan_in"].max()]
    assert int(big["trimmed"].iloc[0]) > 0


# Bad input: each case breaks one thing and must name its field.
BAD: list[tuple[str, str, tuple[str, ...]]] = [
    ("trim-without-header-queue", STAR.replace("trim = {}", "trim = { header_queue_packets = 0 }"),
     ("network.queue.trim.header_queue_packets", "header queue")),
    ("trim-on-host-nic", STAR + "\n[network.host_queue]\ntrim = {}\n", ("network.host_queue.trim",)),
    ("trim-wrong-type", STAR.replace("trim = {}", "trim = true"), ("network.queue.trim",)),
    ("trim-threshold-above-limit", STAR.replace("trim = {}", "trim = { threshold_packets = 200 }"),
     ("network.queue.trim.threshold_packets", "200")),
    ("trim-with-priority", STAR.replace("trim = {}", "trim = {}\npriority = true"), ("network.queue.priority",)),
    ("trim-with-ecn", STAR.replace("trim = {}", "trim = {}\necn_k_packets = 10"), ("network.queue.ecn_k_packets",)),
    ("trim-zero-weight", STAR.replace("trim = {}", "trim = { header_weight = 0 }"),
     ("network.queue.trim.header_weight", "0")),
    ("trim-with-pfc", STAR + "\n[network.pfc]\n", ("network.pfc", "trimming")),
    ("trim-with-tier-buffer", STAR + "\n[network.tiers.host]\nbuffer = { bytes = 1000000 }\n",
     ("network.tiers.host.buffer", "trimming")),
    ("ndp-payload-too-large", STAR.replace('cc = "ndp"', 'cc = "ndp"\npayload_bytes = 9000'),
     ("transports.n.payload_bytes", "9000")),
    ("ndp-negative-rto", STAR.replace('cc = "ndp"', 'cc = "ndp"\nrto_us = -5'), ("transports.n.rto_us", "-5")),
    ("ndp-zero-window", STAR.replace('cc = "ndp"', 'cc = "ndp"\nwindow_bytes = 0'), ("transports.n.window_bytes",)),
    ("ndp-foreign-parameter", STAR.replace('cc = "ndp"', 'cc = "ndp"\ndctcp_g = 0.1'), ("transports.n.dctcp_g", "ndp")),
    ("ndp-two-subflows", STAR.replace('cc = "ndp"', 'cc = "ndp"\nsubflows = 2'), ("transports.n.subflows",)),
    ("ndp-on-pinned-paths", STAR.replace('size = { fixed = 90000 }', 'size = { fixed = 90000 }\npaths = [0]'),
     ("traffic[0].paths", "sprays")),
    ("ndp-without-trimming", STAR.replace("trim = {}\n", ""),
     ("network.queue.trim: traffic[0] runs NDP (transport \"n\"), which needs switch queues that trim",
      "add `trim = {}`")),
    ("ndp-on-an-untrimmed-tier", STAR + "\n[network.tiers.host.queue]\nlimit_packets = 50\n",
     ("network.tiers.host.queue.trim", "needs switch queues that trim")),
    ("trim-at-flow-level", "level = \"flow\"\n" + STAR.replace('transport = "n"', 'transport = "tcp"')
     .replace("size = { fixed = 90000 }", 'size = "long_lived"'), ("network.queue.trim",)),
]


@pytest.mark.parametrize("entry", [manypath.validate, manypath.run], ids=["validate", "run"])
@pytest.mark.parametrize(("case", "toml", "expect"), BAD, ids=[b[0] for b in BAD])
def test_bad_ndp_input_names_the_field(case: str, toml: str, expect: tuple[str, ...],
                                      entry: Callable[..., Any], tmp_path: Path) -> None:
    assert_refused(entry, toml, expect, tmp_path, case)
