"""Bad input that used to get a confusing message (or none): each case with the exact
message expected, and the warnings channel (`_core.validate` and the run's
`"warnings"`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from manypath import _core

STAR = """\
duration_ms = 10
[topology.star]
senders = 2
"""

ENTRY = """\
[[traffic]]
pattern = "incast"
size = { fixed = 1000 }
"""

POISSON = STAR + ENTRY + 'arrival = "poisson"\n'


def errors(text: str, base_dir: str = ".") -> str:
    with pytest.raises(ValueError) as e:
        _core.validate(text, base_dir)
    return str(e.value)


def test_an_integer_too_large_for_toml_names_its_field() -> None:
    text = STAR.replace("duration_ms = 10", "duration_ms = 18446744073709551615") + ENTRY
    assert errors(text) == (
        "duration_ms: number too large to fit in target type (line 1) "
        "(TOML integers are at most 9223372036854775807)"
    )
    inner = STAR + ENTRY.replace("{ fixed = 1000 }", "{ fixed = 1 }\nstart_us = 99999999999999999999")
    assert errors(inner).startswith("traffic[0].start_us: number too large")


def test_huge_numbers_are_shown_in_exponent_form() -> None:
    text = STAR.replace("duration_ms = 10", "duration_ms = 1e300") + ENTRY
    assert errors(text) == "duration_ms: must be at most 1e9 ms (about 11 days), got 1e300"
    rate = STAR + ENTRY + "[network.link]\nrate_gbps = 1e300\n"
    assert errors(rate) == "network.link.rate_gbps: must be a rate between 0.000001 and 100000 Gbps, got 1e300"


def test_a_bad_cdf_file_is_the_only_error(tmp_path: Path) -> None:
    (tmp_path / "bad.cdf").write_text("garbage\n")
    text = POISSON.replace("{ fixed = 1000 }", '{ cdf = "bad.cdf" }') + "load = 0.5\n"
    assert errors(text, str(tmp_path)) == (
        f"traffic[0].size: {tmp_path / 'bad.cdf'}: line 1: expected '<size_bytes> <cdf>', got \"garbage\""
    )
    # A long-lived size is still refused for Poisson arrivals.
    long_lived = POISSON.replace("{ fixed = 1000 }", '"long_lived"') + "load = 0.5\n"
    assert errors(long_lived) == "traffic[0].size: Poisson arrivals need a finite flow size, not long_lived"


def test_every_problem_is_reported_even_with_a_wrong_topology() -> None:
    text = """\
duration_ms = -10
[topology.star]
senders = 0
[network.link]
rate_gbps = -1
[[traffic]]
pattern = "incast"
transport = "quic"
size = { fixed = 0 }
"""
    assert errors(text).splitlines() == [
        "duration_ms: must be a positive number, got -10",
        "topology.star.senders: must be at least 1, got 0",
        "network.link.rate_gbps: must be a rate between 0.000001 and 100000 Gbps, got -1",
        'traffic[0].transport: unknown transport "quic" (known: tcp, cubic, dctcp, mptcp, olia, '
        "dcm, xmp, mmptcp, amp, fuso, repflow)",
        "traffic[0].size: must be at least 1, got 0",
    ]


def test_a_single_traffic_table_gets_a_hint() -> None:
    text = STAR + ENTRY.replace("[[traffic]]", "[traffic]")
    assert errors(text) == (
        "traffic: invalid type: map, expected a sequence (line 4); "
        "traffic is an array of tables: write [[traffic]]"
    )
    faults = STAR + ENTRY + '[faults]\nkind = "loss"\ntier = "host"\nprobability = 0.1\n'
    assert errors(faults).endswith("faults is an array of tables: write [[faults]]")


def test_two_topologies_get_a_hint() -> None:
    text = STAR + "[topology.dumbbell]\npairs = 2\n" + ENTRY
    assert errors(text) == (
        "topology: wanted exactly 1 element, more than 1 element (line 2); give exactly one of "
        "[topology.star], [topology.dumbbell], [topology.leaf_spine], [topology.fat_tree], "
        "[topology.fuso_testbed], [topology.fuso_fabric], [topology.vl2], [topology.bcube], "
        "[topology.custom]"
    )


@pytest.mark.parametrize(
    "queue,message",
    [
        (
            "limit_packets = 10\necn_k_packets = 20",
            "network.queue.ecn_k_packets: must be at most limit_packets (10), or the queue never marks, got 20",
        ),
        (
            "ecn_k_packets = 150",
            "network.queue.ecn_k_packets: must be at most the queue's limit (100 packets by default), "
            "or the queue never marks, got 150",
        ),
        (
            "limit_bytes = 15000\necn_k_bytes = 30000",
            "network.queue.ecn_k_bytes: must be at most limit_bytes (15000), or the queue never marks, got 30000",
        ),
    ],
)
def test_an_ecn_threshold_above_the_queue_limit_is_refused(queue: str, message: str) -> None:
    assert errors(STAR + ENTRY + "[network.queue]\n" + queue + "\n") == message
    assert _core.validate(STAR + ENTRY + "[network.queue]\nlimit_packets = 20\necn_k_packets = 20\n", ".") == []


def test_a_load_given_as_a_percentage_is_refused_with_a_guess() -> None:
    assert errors(POISSON + "load = 50\n") == (
        "traffic[0].load: must be a fraction of the link rate in (0, 2] (1: line rate), got 50; did you mean 0.5?"
    )
    assert errors(POISSON + "load = 500\n") == (
        "traffic[0].load: must be a fraction of the link rate in (0, 2] (1: line rate), got 500"
    )
    assert errors(POISSON + "load = 0\n") == "traffic[0].load: must be a positive number, got 0"


def test_overload_is_a_warning_in_validate_and_in_the_run() -> None:
    text = POISSON.replace("duration_ms = 10", "duration_ms = 1") + "load = 1.5\n"
    warning = (
        "traffic[0].load",
        "1.5 offers more than the senders' links carry: queues grow until the end and flows go unfinished",
    )
    assert _core.validate(text, ".") == [warning]
    assert _core.run(text, ".")["warnings"] == [warning]
    assert _core.validate(text.replace("load = 1.5", "load = 1"), ".") == []


@pytest.mark.parametrize(
    "drop,message",
    [
        ("duration_ms = 10\n", "duration_ms: missing (a required field)"),
        ("[topology.star]\nsenders = 2\n", "topology: missing (a required field)"),
        (ENTRY, "traffic: missing (a required field)"),
    ],
)
def test_a_missing_required_field_is_named(drop: str, message: str) -> None:
    # A top-level key before the tables used to take the blame (`seed: missing field ...`).
    text = 'name = "x"\nseed = 3\n' + STAR + ENTRY
    assert errors(text.replace(drop, "")) == message


def test_every_missing_required_field_is_named() -> None:
    assert errors('seed = 3\n[network.link]\nrate_gbps = 10\n').splitlines() == [
        "duration_ms: missing (a required field)",
        "topology: missing (a required field)",
        "traffic: missing (a required field)",
    ]


def test_a_missing_field_of_a_table_is_named_with_the_tables_line() -> None:
    leaf_spine = "duration_ms = 10\n\n[topology.leaf_spine]\nleaves = 2\nhosts_per_leaf = 2\n"
    assert errors(leaf_spine + ENTRY) == (
        "topology.leaf_spine.spines: missing (a required field of the table at line 3)"
    )
    second = STAR + ENTRY + '[[traffic]]\npattern = "incast"\n'
    # Every pattern but "matrix" and "goal" needs a size: the check says so.
    assert errors(second) == (
        'traffic[1].size: missing (a required field of every pattern but "matrix" and "goal": '
        "a flow-size distribution, e.g. { fixed = 131072 })"
    )


def test_a_trim_threshold_above_the_limit_is_reported_once() -> None:
    # Every tier of a leaf-spine takes network.queue: its problems are its own, once.
    text = (
        "duration_ms = 10\n[topology.leaf_spine]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n"
        + ENTRY
        + "[network.queue]\nlimit_packets = 10\ntrim = { threshold_packets = 20, header_weight = 0 }\n"
    )
    assert errors(text).splitlines() == [
        "network.queue.trim.threshold_packets: must be at most the queue's limit_packets (10), got 20",
        "network.queue.trim.header_weight: must be at least 1, got 0",
    ]
    # A tier with a queue of its own has its own problems.
    tier = text + "[network.tiers.fabric.queue]\nlimit_packets = 5\ntrim = {}\n"
    assert errors(tier).splitlines() == [
        "network.queue.trim.threshold_packets: must be at most the queue's limit_packets (10), got 20",
        "network.queue.trim.header_weight: must be at least 1, got 0",
        "network.tiers.fabric.queue.trim.threshold_packets: must be at most the queue's limit_packets (5), got 8",
    ]
