"""`[parallel]` and `--threads`: bad values refused naming the field, the thread count
replaced from the API and the command line, recorded in a run's provenance and nowhere
in its tables, and left out of a result's identity (sweep run ids and generations)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import manypath
from manypath import _core, runner, sweeps
from manypath.cli import app
from manypath.sweeps import SweepError
from refusals import assert_refused
from test_validation_errors import FAT_TREE as VALID_FAT_TREE

cli = CliRunner()

# A 4-ary fat tree (16 hosts, 20 switches) for 1 ms: small enough to run in every case.
FAT_TREE = VALID_FAT_TREE.replace("duration_ms = 10", "duration_ms = 1")
assert "duration_ms = 1\n" in FAT_TREE

# The switches of pods 0-1 and 2-3, with a core each half: a valid two-way partitioning.
HALF = [
    [f"edge{p}.{i}" for p in (0, 1) for i in (0, 1)] + [f"agg{p}.{a}" for p in (0, 1) for a in (0, 1)]
    + ["core0", "core1"],
    [f"edge{p}.{i}" for p in (2, 3) for i in (0, 1)] + [f"agg{p}.{a}" for p in (2, 3) for a in (0, 1)]
    + ["core2", "core3"],
]


def with_parallel(threads: str | None = None, partitions: list[list[str]] | None = None) -> str:
    return with_parallel_text(FAT_TREE, threads, partitions)


def with_parallel_text(text: str, threads: str | None = None, partitions: list[list[str]] | None = None) -> str:
    lines = ["", "[parallel]"]
    if threads is not None:
        lines.append(f"threads = {threads}")
    if partitions is not None:
        lines.append(f"partitions = {json.dumps(partitions)}")
    return text + "\n".join(lines) + "\n"


def test_the_valid_partitioning_is_valid() -> None:
    # Otherwise a refusal below could come from another mistake than the one it makes.
    assert manypath.validate(with_parallel("2", HALF)) == []
    assert manypath.validate(with_parallel('"auto"')) == []


CASES = [
    ("threads-zero", with_parallel("0"), ("parallel.threads", "≥ 1", "got 0")),
    ("threads-negative", with_parallel("-3"), ("parallel.threads", "got -3")),
    ("threads-float", with_parallel("2.5"), ("parallel.threads", "2.5 (not a whole number)")),
    ("threads-wrong-type", with_parallel("[2]"), ("parallel.threads", "got a value of type array ([2])")),
    ("threads-unknown-string", with_parallel('"all"'), ("parallel.threads", 'the unknown value "all"')),
    ("partition-unknown-node",
     with_parallel(None, [HALF[0], HALF[1][:3] + ["edge9.9"] + HALF[1][3:]]),
     ("parallel.partitions[1][3]", "no node of this topology has that name", "edge9.9")),
    ("partition-node-twice",
     with_parallel(None, [HALF[0], HALF[1] + ["edge0.1"]]),
     ("parallel.partitions[1][10]", '"edge0.1" is listed already, at parallel.partitions[0][1]')),
    ("partition-switch-missing",
     with_parallel(None, [HALF[0], HALF[1][:-1]]),
     ("parallel.partitions", "every switch must be in a partition", "core3")),
    ("partition-empty",
     with_parallel(None, [HALF[0], [], HALF[1]]),
     ("parallel.partitions[1]", "an empty partition")),
    ("more-threads-than-partitions",
     with_parallel("3", HALF),
     ("parallel.threads", "more threads than partitions", "3 threads for the 2 partition(s)")),
]


@pytest.mark.parametrize("entry", [pytest.param(manypath.validate, id="validate"),
                                   pytest.param(manypath.run, id="run")])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_parallel_table_names_the_field(case: tuple[str, str, tuple[str, ...]],
                                            entry: Callable[..., object], tmp_path: Path) -> None:
    name, toml, expect = case
    assert_refused(entry, toml, expect, tmp_path, name)


def test_the_run_keyword_replaces_the_scenarios_threads_and_is_checked_the_same(tmp_path: Path) -> None:
    text = with_parallel("2", HALF)
    assert_refused(lambda t, base_dir: manypath.run(t, base_dir=base_dir, threads=3), text,
                   ("parallel.threads", "more threads than partitions"), tmp_path)
    assert_refused(lambda t, base_dir: manypath.run(t, base_dir=base_dir, threads=0), FAT_TREE,
                   ("parallel.threads", "got 0"), tmp_path)
    with pytest.raises(ValueError, match="threads: must be a whole number"):
        manypath.run(FAT_TREE, threads=True)
    with pytest.raises(ValueError, match="threads: must be a whole number"):
        manypath.run(FAT_TREE, threads=2.0)  # type: ignore[arg-type]


def test_threads_are_in_the_provenance_and_in_no_table() -> None:
    one = manypath.run(with_parallel("1"))
    two = manypath.run(with_parallel("1"), threads=2)
    auto = manypath.run(FAT_TREE, threads="auto")
    # 16 hosts: below the auto rule's 512, one thread.
    assert (one.provenance["threads"], two.provenance["threads"], auto.provenance["threads"]) == (1, 2, 1)
    # The keyword does not rewrite the scenario: the text as given is what is kept.
    assert two.scenario_text == one.scenario_text
    for res in (one, two):
        assert "threads" not in res.counters
        for table in (res.flows, res.queues, res.subflows, res.flow_samples, res.queue_samples):
            assert not any("thread" in str(c) for c in table.columns)
    assert one.flows.equals(two.flows) and one.queues.equals(two.queues)
    counters = {k: v for k, v in one.counters.items() if k not in ("wall_s", "events_per_s", "hops_per_s")}
    assert counters == {k: two.counters[k] for k in counters}


def test_cli_threads_option(tmp_path: Path) -> None:
    scenario = tmp_path / "ft.toml"
    scenario.write_text(FAT_TREE)
    out = tmp_path / "run"
    res = cli.invoke(app, ["run", str(scenario), "--threads", "2", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "provenance.json").read_text())["threads"] == 2
    assert "threads" not in json.loads((out / "counters.json").read_text())
    assert "parallel" not in (out / "scenario.toml").read_text()
    for bad in ("0", "two", "-1"):
        res = cli.invoke(app, ["run", str(scenario), "--threads", bad, "--quiet"])
        assert res.exit_code == 2 and "--threads" in res.output, res.output
    # What only the scenario can tell is refused by the simulator, naming the field.
    scenario.write_text(with_parallel(None, HALF))
    res = cli.invoke(app, ["run", str(scenario), "--threads", "4", "--quiet"])
    assert res.exit_code != 0 and "parallel.threads" in res.output and "more threads than partitions" in res.output


def test_parallel_is_not_in_a_runs_identity() -> None:
    base = sweeps.spec.tomllib.loads(FAT_TREE)
    threaded = {**base, "parallel": {"threads": 2, "partitions": HALF}}
    assert sweeps.run_id_of(base) == sweeps.run_id_of(threaded)
    other = {**base, "duration_ms": 2}
    assert sweeps.run_id_of(base) != sweeps.run_id_of(other)
    assert sweeps.expand({"scenario": base}).base_digest == sweeps.expand({"scenario": threaded}).base_digest


def test_parallel_is_not_a_sweep_parameter() -> None:
    base = sweeps.spec.tomllib.loads(FAT_TREE)
    with pytest.raises(SweepError, match="'parallel.threads' is not a parameter"):
        sweeps.expand({"scenario": base, "grid": {"parallel.threads": [1, 2]}})
    with pytest.raises(SweepError, match="points\\[0\\]: 'parallel' is not a parameter"):
        sweeps.expand({"scenario": base, "points": [{"parallel": {"threads": 2}}]})


def test_a_sweep_rerun_with_other_threads_reuses_its_results(tmp_path: Path) -> None:
    out = tmp_path / "out"
    base = sweeps.spec.tomllib.loads(with_parallel("1"))
    first = manypath.sweep({"name": "ft", "scenario": base, "seeds": [1, 2]}, out=out, jobs=1)
    assert first.ok and first.ran == 2
    stored = sorted(d for d in out.iterdir() if (d / "run.json").is_file())
    assert [json.loads((d / "provenance.json").read_text())["threads"] for d in stored] == [1, 1]
    base["parallel"]["threads"] = 2
    second = manypath.sweep({"name": "ft", "scenario": base, "seeds": [1, 2]}, out=out, jobs=1)
    assert (second.ran, second.skipped, second.generation, second.new_generation) == (0, 2, 1, False)


def test_a_given_partitioning_gives_the_one_thread_tables() -> None:
    one = manypath.run(with_parallel("1"))
    halves = manypath.run(with_parallel("2", HALF))
    assert halves.provenance["threads"] == 2
    assert one.flows.equals(halves.flows) and one.queues.equals(halves.queues)
    assert one.counters["events"] == halves.counters["events"]


def test_auto_runs_a_capture_on_every_core_of_a_big_fabric() -> None:
    # 1,024 hosts: "auto" takes every core, a capture and trace included; the estimate
    # says how many replicas a run holds.
    big = FAT_TREE.replace("k = 4", "k = 16")
    assert "k = 16" in big
    captured = big + "\n[output.pcap]\nhosts = [0]\n[output.trace]\nhosts = [0]\n"
    assert _core.estimate(captured, ".")["replicas"] == _core.estimate(big, ".")["replicas"] >= 1


# The first edge switch's ports captured (its hosts' and its uplinks, with their drops)
# and a core port, on short queues: drops, marks and packets crossing HALF's halves.
CAPTURED = FAT_TREE + """
[network.queue]
limit_packets = 8
ecn_k_packets = 4

[output.pcap]
hosts = [0, 1, 9]
ports = [{ node = "edge0.0", peer = "agg0.0" }, { node = "edge0.0", peer = "agg0.1" },
         { node = "core0", peer = "agg2.0" }]
[output.trace]
hosts = [0, 1, 9]
ports = [{ node = "core0", peer = "agg2.0" }]
"""


def test_a_capture_and_trace_on_two_threads_are_the_one_threads_byte_for_byte() -> None:
    one = manypath.run(CAPTURED)
    two = manypath.run(with_parallel_text(CAPTURED, "2", HALF))
    assert (one.provenance["threads"], two.provenance["threads"]) == (1, 2)
    assert one.pcap is not None and two.pcap is not None and len(one.pcap) > 100_000
    assert one.pcap == two.pcap
    assert one.trace is not None and two.trace is not None
    assert (one.trace["event"] == "drop").sum() > 0
    assert one.trace.equals(two.trace)
    for counter in ("capture_packets", "capture_missed", "trace_missed"):
        assert one.counters[counter] == two.counters[counter]


# An incast of RoCE senders of every pod into host 0 over a lossless fabric: ports on
# both sides of HALF's cut send PFC frames, which the capture records where they are sent.
PFC_CAPTURED = """\
duration_ms = 1
stop_when_done = false
[topology.fat_tree]
k = 4
[network.buffer]
bytes = 100000
[network.pfc]
[transports.qp]
cc = "roce"
[[traffic]]
pattern = "incast"
receiver = 0
senders = 8
transport = "qp"
size = "long_lived"
[output.pcap]
hosts = [0, 9]
ports = [{ node = "edge0.0", peer = "agg0.0" }, { node = "agg0.0", peer = "core0" },
         { node = "core0", peer = "agg2.0" }]
"""


def test_pfc_frames_captured_on_two_threads_are_the_one_threads_byte_for_byte() -> None:
    one = manypath.run(PFC_CAPTURED)
    two = manypath.run(with_parallel_text(PFC_CAPTURED, "2", HALF))
    assert two.provenance["threads"] == 2
    assert one.counters["pfc_pauses"] > 0
    assert one.pcap is not None and one.pcap == two.pcap
    # PFC frames are in it, to their reserved multicast address.
    assert one.pcap.count(bytes.fromhex("0180c2000001")) >= 2 * 10
    assert one.counters["capture_packets"] == two.counters["capture_packets"]


DEADLOCK = Path(__file__).resolve().parent.parent / "scenarios" / "pfc-deadlock-link-failures.toml"


def test_a_pfc_deadlock_stops_alike_on_two_threads() -> None:
    """The shipped PFC deadlock (a cycle leaf0 → spine0 → leaf1 → spine1 → leaf0), every
    link of its cycle cut between two partitions, stops at the same check with the same
    message and the same tables as on one thread."""
    text = DEADLOCK.read_text()
    split = text + '\n[parallel]\npartitions = [["leaf0", "spine1", "leaf2"], ["spine0", "leaf1", "leaf3"]]\n'
    with pytest.warns(runner.DeadlockWarning, match="PFC deadlock"):
        one = manypath.run(text)
    with pytest.warns(runner.DeadlockWarning, match="PFC deadlock"):
        two = manypath.run(split, threads=2)
    assert two.provenance["threads"] == 2
    assert one.counters["deadlocks"] == two.counters["deadlocks"] == 1
    skip = ("wall_s", "events_per_s", "hops_per_s")
    assert {k: v for k, v in one.counters.items() if k not in skip} == {
        k: v for k, v in two.counters.items() if k not in skip}
    assert one.flows.equals(two.flows) and one.queues.equals(two.queues)
# Homa messages and requests on persistent connections between the two halves of HALF
# (hosts 0-7 run with pods 0-1, hosts 8-15 with pods 2-3): each message's packets,
# GRANTs and completion, and each request's server counters, cross partitions.
HOMA_AND_REQUESTS = """\
duration_ms = 2
stop_when_done = false

[topology.fat_tree]
k = 4

[network.queue]
limit_packets = 100
priority_levels = 8

[transports.homa]
cc = "homa"

[[traffic]]
pattern = "random_pairs"
transport = "homa"
size = { cdf = "websearch" }
arrival = "poisson"
load = 0.5

[[traffic]]
pattern = "requests"
transport = "dctcp"
rate_per_s = 20000
requests = { clients = [0, 1, 2, 3], servers = [12, 13], connections = 2 }
size = { fixed = 20000 }
"""


def test_homa_and_persistent_connections_run_on_threads_with_the_one_thread_tables() -> None:
    one = manypath.run(HOMA_AND_REQUESTS + "\n[parallel]\nthreads = 1\n")
    text = HOMA_AND_REQUESTS + f"\n[parallel]\nthreads = 2\npartitions = {json.dumps(HALF)}\n"
    many = manypath.run(text)
    assert many.provenance["threads"] == 2
    assert one.flows["completed"].sum() > 20
    assert one.flows.equals(many.flows) and one.queues.equals(many.queues)
    assert one.counters["events"] == many.counters["events"]
