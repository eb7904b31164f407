"""Malformed scenarios are refused with a ValueError that names the offending field.

Both entry points are checked: `manypath.validate` and `manypath.run` (which must refuse
before simulating anything). A separate child process runs every case under a time
limit, so a panic that aborts the interpreter or a validation that never returns fails
the test instead of taking the test run down with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import manypath
from refusals import assert_refused

# A valid scenario the cases below break one field at a time: 4 senders into host 0.
STAR = """\
duration_ms = 10

[topology.star]
senders = 4

[[traffic]]
pattern = "incast"
transport = "tcp"
size = { fixed = 10000 }
"""

FAT_TREE = """\
duration_ms = 10

[topology.fat_tree]
k = 4

[[traffic]]
pattern = "permutation"
transport = "dctcp"
size = "long_lived"
"""


@dataclass(frozen=True)
class Case:
    id: str
    toml: str
    # Every one of these must appear in the error message; the first is the field path.
    expect: tuple[str, ...]


CASES = [
    Case("wrong-type", FAT_TREE.replace("k = 4", 'k = "eight"'), ("topology.fat_tree.k", "eight")),
    Case("odd-k", FAT_TREE.replace("k = 4", "k = 7"), ("topology.fat_tree.k", "7")),
    Case(
        "negative-rate",
        STAR + "\n[network.link]\nrate_gbps = -10\n",
        ("network.link.rate_gbps", "-10"),
    ),
    Case("unknown-transport", STAR.replace('"tcp"', '"quic"'), ("traffic[0].transport", "quic")),
    Case(
        "missing-cdf",
        STAR.replace("{ fixed = 10000 }", '{ cdf = "missing.cdf" }'),
        ("traffic[0].size", "missing.cdf"),
    ),
    # The second entry, so the index in the path is checked too; hosts are 0..4.
    Case(
        "host-out-of-range",
        STAR + '\n[[traffic]]\npattern = "pair"\nsrc = 1\ndst = 9\nsize = { fixed = 1000 }\n',
        ("traffic[1].dst", "9"),
    ),
    Case(
        "unknown-field",
        STAR + "\n[network.queue]\nbuffer_size = 100\n",
        ("network.queue", "buffer_size"),
    ),
    Case("unknown-top-level-field", "colour = 'blue'\n" + STAR, ("colour",)),
    Case(
        "tier-not-in-topology",
        STAR + "\n[network.tiers.fabric]\nrate_gbps = 40\n",
        ("network.tiers.fabric",),
    ),
    Case(
        "ecn-threshold-in-missing-tier",
        FAT_TREE + "\n[network.tiers.bottleneck.queue]\necn_k_packets = 20\n",
        ("network.tiers.bottleneck",),
    ),
    Case("warmup-past-the-end", "warmup_ms = 20\n" + STAR, ("warmup_ms",)),
    Case(
        "jobs-without-table",
        FAT_TREE.replace('pattern = "permutation"', 'pattern = "jobs"'),
        ("traffic[0].jobs",),
    ),
    Case(
        "jobs-fanout-too-large",
        FAT_TREE.replace('pattern = "permutation"', 'pattern = "jobs"\njobs = { fanout = 16 }'),
        ("traffic[0].jobs.fanout", "16"),
    ),
    Case(
        "size-split-unknown-transport",
        FAT_TREE + 'size_split = { at_bytes = 100, transport = "quic" }\n',
        ("traffic[0].size_split.transport", "quic"),
    ),
    Case(
        "size-split-on-requests",
        STAR.replace('pattern = "incast"', 'pattern = "requests"\nrate_per_s = 10\n'
                     'requests = { clients = [0], servers = [1, 2] }\n'
                     'size_split = { at_bytes = 100, transport = "tcp" }'),
        ("traffic[0].size_split",),
    ),
    Case(
        "closed-loop-on-permutation",
        FAT_TREE + "closed_loop = true\n",
        ("traffic[0].closed_loop",),
    ),
    Case(
        "incast-too-many-senders",
        STAR.replace('transport = "tcp"', 'transport = "tcp"\nsenders = 9'),
        ("traffic[0].senders", "9"),
    ),
    Case(
        "red-thresholds-reversed",
        STAR + "\n[network.queue.red]\nmin_packets = 30\nmax_packets = 10\n",
        ("network.queue.red.max_packets", "10"),
    ),
    Case(
        "red-max-p-above-one",
        STAR + "\n[network.queue.red]\nmin_packets = 5\nmax_packets = 15\nmax_p = 2\n",
        ("network.queue.red.max_p", "2"),
    ),
    Case(
        "red-on-host-nic",
        STAR + "\n[network.host_queue.red]\nmin_packets = 5\nmax_packets = 15\n",
        ("network.host_queue.red",),
    ),
    Case(
        "tier-buffer-true",
        FAT_TREE + "\n[network.tiers.host]\nbuffer = true\n",
        ("network.tiers.host.buffer", "true"),
    ),
    Case(
        "tier-buffer-zero-bytes",
        FAT_TREE + "\n[network.tiers.agg_core]\nbuffer = { bytes = 0 }\n",
        ("network.tiers.agg_core.buffer.bytes", "0"),
    ),
    Case(
        "tier-buffer-negative-alpha",
        FAT_TREE + "\n[network.tiers.edge_agg]\nbuffer = { bytes = 100000, alpha = -1 }\n",
        ("network.tiers.edge_agg.buffer.alpha", "-1"),
    ),
    Case(
        "tier-buffer-on-a-tier-without-switches",
        FAT_TREE.replace("[topology.fat_tree]\nk = 4", "[topology.dumbbell]\npairs = 2")
        + "\n[network.tiers.bottleneck]\nbuffer = { bytes = 100000 }\n",
        ("network.tiers.bottleneck.buffer", "links towards the hosts"),
    ),
    Case(
        "tier-without-buffer-under-pfc",
        FAT_TREE + "\n[network.buffer]\nbytes = 4000000\n[network.pfc]\n"
        "[network.tiers.agg_core]\nbuffer = false\n",
        ("network.tiers.agg_core.buffer", "PFC"),
    ),
    Case(
        "tier-buffer-below-pfc-needs",
        FAT_TREE + "\n[network.buffer]\nbytes = 4000000\n[network.pfc]\n"
        "[network.tiers.agg_core]\nbuffer = { bytes = 20000 }\n",
        ("network.tiers.agg_core.buffer.bytes", "headroom"),
    ),
    Case("host-jitter-negative", STAR + "\n[network]\nhost_jitter_us = -1.5\n", ("network.host_jitter_us", "-1.5")),
    Case("host-jitter-nan", STAR + "\n[network]\nhost_jitter_us = nan\n", ("network.host_jitter_us", "NaN")),
    Case("host-jitter-infinite", STAR + "\n[network]\nhost_jitter_us = inf\n", ("network.host_jitter_us", "inf")),
]

Entry = Callable[..., object]
ENTRY_POINTS = [
    pytest.param(manypath.validate, id="validate"),
    pytest.param(manypath.run, id="run"),
]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_scenario_names_the_field(case: Case, entry: Entry, tmp_path: Path) -> None:
    # An empty base directory, so a relative CDF path cannot be found by accident.
    assert_refused(entry, case.toml, case.expect, tmp_path)


def test_every_problem_is_reported_at_once() -> None:
    # Three independent mistakes: the user should not have to fix them one run at a time.
    text = STAR.replace('"tcp"', '"quic"') + (
        "\n[network.link]\nrate_gbps = -10\n\n[network.tiers.fabric]\nrate_gbps = 40\n"
    )
    with pytest.raises(ValueError) as info:
        manypath.validate(text)
    lines = str(info.value).splitlines()
    for field in ("network.link.rate_gbps", "network.tiers.fabric", "traffic[0].transport"):
        assert sum(line.startswith(field) for line in lines) == 1, lines


def test_the_valid_base_scenarios_are_valid(run_checked: Callable[..., manypath.Results]) -> None:
    # Otherwise a case could fail for a reason other than the field it breaks.
    for text in (STAR, FAT_TREE):
        manypath.validate(text)
    run_checked(STAR)


CHILD = textwrap.dedent(
    """
    import json, sys
    import manypath

    out = []
    for text in json.load(sys.stdin):
        try:
            manypath.run(text, base_dir=sys.argv[1])
            out.append(["ran", ""])
        except BaseException as e:  # a panic surfaces as a BaseException
            out.append([type(e).__name__, str(e)])
    print(json.dumps(out))
    """
)


def test_no_malformed_scenario_panics_or_hangs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        input=json.dumps([c.toml for c in CASES]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    outcomes = json.loads(proc.stdout)
    for case, (kind, message) in zip(CASES, outcomes):
        assert kind == "ValueError", f"{case.id}: {kind}: {message}"


# Values the schema accepts as numbers but the simulator cannot represent: a rate that
# rounds to 0 bit/s, a delay beyond the 2^64 ps (~213 days) clock. Each must be refused
# with the field named, or (for the delay) simulated faithfully: no flow can finish
# before a packet crosses the link.
def test_rate_that_rounds_to_zero_is_refused() -> None:
    text = STAR + "\n[network.link]\nrate_gbps = 1e-12\n"
    # Caught here as BaseException: pyo3 turns a Rust panic into one, not an Exception.
    try:
        manypath.run(text)
    except ValueError as e:
        assert "network.link.rate_gbps" in str(e)
    except BaseException as e:
        pytest.fail(f"{type(e).__name__}: {e}")
    else:
        pytest.fail("a 0.001 bit/s link was simulated")


def test_delay_past_the_clock_is_refused_or_respected(
    run_checked: Callable[..., manypath.Results],
) -> None:
    text = STAR + "\n[network.link]\ndelay_us = 1e14\n"
    try:
        res = run_checked(text)
    except ValueError as e:
        assert "network.link.delay_us" in str(e)
        return
    done = res.flows[res.flows["completed"]]
    assert done.empty, f"flows finished in {done['fct_s'].min() * 1e6:.3f} µs over a 1e14 µs link"
