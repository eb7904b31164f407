"""GOAL schedules as traffic (`pattern = "goal"`): a message starts when its send's
dependencies are done (a computation exactly its time after, a dependency on a message at
that message's send-done or receive-done, or a synchronisation step later when the
rank's triggers are not local, as with Homa), `irequires` starts operations together,
sends match receives in order by source, destination and tag, a ring all-reduce gives
the flows of the same ring written as an htsim matrix, the tables are the same on 1, 2
and 4 threads, and bad schedules are refused naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import manypath
from manypath import runner

ROOT = Path(__file__).resolve().parent.parent

# A leaf-spine of 4 leaves of 4 hosts: the smallest link delay (the synchronisation
# step) is 1 µs.
FABRIC = """\
name = "goal"
seed = 1
duration_ms = 20

[topology.leaf_spine]
leaves = 4
spines = 2
hosts_per_leaf = 4

[network.link]
rate_gbps = 10
delay_us = 1

[network.queue]
limit_packets = 100
ecn_k_packets = 15

[tcp]
rto_min_us = 5000
"""

STEP = 1e-6


def scenario(file: str = "s.goal", transport: str = "dctcp", extra: str = "") -> str:
    text = FABRIC + f"""
[[traffic]]
pattern = "goal"
transport = "{transport}"
class = "goal"
file = "{file}"
""" + extra
    if transport == "homa":
        text = text.replace('transport = "homa"', 'transport = "t"')
        text = text.replace("ecn_k_packets = 15", "priority_levels = 8")
        text += '\n[transports.t]\ncc = "homa"\n'
    return text


def write(tmp_path: Path, goal: str, name: str = "s.goal") -> Path:
    (tmp_path / name).write_text(goal, encoding="utf-8")
    return tmp_path


def run(tmp_path: Path, goal: str, **kw) -> pd.DataFrame:
    """The flows of `goal`, by the send's number in the file (`matrix_id`)."""
    res = manypath.run(scenario(**kw), base_dir=write(tmp_path, goal))
    f = res.flows.set_index("matrix_id")
    assert bool(f["completed"].all()), f
    return f


PING_PONG = """\
num_ranks 2
rank 0 {
  ping: send 200000b to 1 tag 1
  pong: recv 1000b from 1 tag 2
}
rank 1 {
  in: recv 200000b from 0 tag 1
  work: calc 5000
  out: send 1000b to 0 tag 2
  work requires in
  out requires work
}
"""


def test_a_reply_starts_its_computation_after_the_request_is_received(
        tmp_path: Path) -> None:
    # Everything that completes rank 1's operations happens at its host: the reply
    # starts 5 µs of computation after the request's receive-done, exactly, before the
    # request's last ACK is back.
    f = run(tmp_path, PING_PONG)
    assert f.loc[1, "start_s"] == 0.0
    assert f.loc[2, "start_s"] == pytest.approx(f.loc[1, "received_s"] + 5e-6, abs=1e-12)
    assert f.loc[2, "start_s"] < f.loc[1, "finish_s"] + 5e-6
    # Homa's messages are received and finished at once, at the receiver: the same.
    f = run(tmp_path, PING_PONG, transport="homa")
    assert f.loc[1, "received_s"] == f.loc[1, "finish_s"]
    assert f.loc[2, "start_s"] == pytest.approx(f.loc[1, "finish_s"] + 5e-6, abs=1e-12)


SEND_THEN_COMPUTE = """\
num_ranks 2
rank 0 {
  a: send 100000b to 1
  c: calc 3000
  b: send 50000b to 1
  c requires a
  b requires c
}
rank 1 {
  ra: recv 100000b from 0
  rb: recv 50000b from 0
}
"""


def test_a_computation_after_a_send_waits_for_its_send_done(tmp_path: Path) -> None:
    f = run(tmp_path, SEND_THEN_COMPUTE)
    assert f.loc[2, "start_s"] == pytest.approx(f.loc[1, "finish_s"] + 3e-6, abs=1e-12)
    # A Homa message's send-done happens at its receiver: rank 0 hears of it a
    # synchronisation step later.
    f = run(tmp_path, SEND_THEN_COMPUTE, transport="homa")
    assert f.loc[2, "start_s"] == pytest.approx(f.loc[1, "finish_s"] + 3e-6 + STEP, abs=1e-12)


def test_irequires_starts_operations_together(tmp_path: Path) -> None:
    # b waits for rank 1's message; c starts when b starts, d when c does: all three at
    # once, as the message is in. e waits for nothing, f for e's start: both start with
    # the schedule.
    f = run(tmp_path, """\
num_ranks 6
rank 0 {
  in: recv 50000b from 1
  b: send 20000b to 2
  c: send 20000b to 3
  d: send 20000b to 4
  e: send 20000b to 5
  f: send 20000b to 4 tag 7
  b requires in
  c irequires b
  d irequires c
  f irequires e
}
rank 1 {
  a: send 50000b to 0
}
rank 2 {
  x: recv 20000b from 0
}
rank 3 {
  x: recv 20000b from 0
}
rank 4 {
  x: recv 20000b from 0
  y: recv 20000b from 0 tag 7
}
rank 5 {
  x: recv 20000b from 0
}
""")
    start = f["start_s"]
    # Sends in file order: b, c, d, e, f (1-5), then rank 1's a (6).
    assert start[1] == start[2] == start[3] == pytest.approx(f.loc[6, "received_s"], abs=1e-12)
    assert start[4] == start[5] == start[6] == 0.0


def test_sends_match_receives_in_order_by_source_destination_and_tag(tmp_path: Path) -> None:
    # Rank 1 posts tag 2 first, then tag 1 twice: x matches b, y matches a, z matches c,
    # whatever the order of the posts across tags. Each receive starts a reply whose size
    # names it, as the message it matched is received.
    f = run(tmp_path, """\
num_ranks 5
rank 0 {
  a: send 10000b to 1 tag 1
  b: send 20000b to 1 tag 2
  c: send 30000b to 1 tag 1
}
rank 1 {
  x: recv 20000b from 0 tag 2
  y: recv 10000b from 0 tag 1
  z: recv 30000b from 0 tag 1
  sx: send 2222b to 2
  sy: send 1111b to 3
  sz: send 3333b to 4
  sx requires x
  sy requires y
  sz requires z
}
rank 2 {
  r: recv 2222b from 1
}
rank 3 {
  r: recv 1111b from 1
}
rank 4 {
  r: recv 3333b from 1
}
""")
    by_size = f.set_index("size")
    for request, reply in [(10000, 1111), (20000, 2222), (30000, 3333)]:
        assert by_size.loc[reply, "start_s"] == pytest.approx(
            by_size.loc[request, "received_s"], abs=1e-12)


def ring(ranks: int, size: int) -> tuple[str, str]:
    """A ring all-reduce's 2(ranks - 1) steps as a GOAL schedule and as an htsim matrix
    (step s of rank r waits for the message of step s - 1 from rank r - 1 to be in), its
    messages in the same order."""
    steps = 2 * (ranks - 1)
    goal = [f"num_ranks {ranks}"]
    matrix = [f"Nodes {ranks}"]
    triggers = []
    conn = lambda r, s: r * steps + s + 1  # noqa: E731
    for r in range(ranks):
        nxt, prv = (r + 1) % ranks, (r - 1) % ranks
        goal.append(f"rank {r} {{")
        for s in range(steps):
            goal.append(f"s{s}: send {size}b to {nxt} tag {s}")
            goal.append(f"r{s}: recv {size}b from {prv} tag {s}")
            if s:
                goal.append(f"s{s} requires r{s - 1}")
            start = "start 0" if s == 0 else f"trigger {conn(r, s)}"
            done = f" recv_done_trigger {conn(nxt, s + 1)}" if s + 1 < steps else ""
            matrix.append(f"{r}->{nxt} id {conn(r, s)} {start} size {size}{done}")
            if s:
                triggers.append(f"trigger id {conn(r, s)} oneshot")
        goal.append("}")
    return "\n".join(goal) + "\n", "\n".join(matrix + triggers) + "\n"


def test_a_ring_all_reduce_gives_the_flows_of_the_same_ring_as_an_htsim_matrix(
        tmp_path: Path) -> None:
    goal, matrix = ring(8, 50000)
    write(tmp_path, goal)
    write(tmp_path, matrix, "ring.cm")
    by_goal = manypath.run(scenario(), base_dir=tmp_path).flows
    by_matrix = manypath.run(
        scenario().replace('pattern = "goal"', 'pattern = "matrix"').replace("s.goal", "ring.cm"),
        base_dir=tmp_path).flows
    assert len(by_goal) == 8 * 14 and bool(by_goal["completed"].all())
    columns = ["src", "dst", "size", "start_s", "finish_s", "matrix_id"]
    pd.testing.assert_frame_equal(by_goal[columns], by_matrix[columns])


@pytest.mark.parametrize("extra", [
    "",
    # Every send waits for its receive to be posted: the ranks' triggers are linked
    # across hosts, so they are counted at window ends by every partition, delays and
    # all.
    "rendezvous_bytes = 1000\n",
])
def test_the_tables_are_the_same_on_1_2_and_4_threads(extra: str) -> None:
    text = (ROOT / "scenarios" / "goal-ring.toml").read_text(encoding="utf-8") + extra
    runs = []
    for threads in (1, 2, 4):
        res = manypath.run(text + f"\n[parallel]\nthreads = {threads}\n",
                           base_dir=ROOT / "scenarios")
        assert res.provenance["threads"] == threads
        runs.append(res)
    one = runs[0]
    assert len(one.flows) == 112 and bool(one.flows["completed"].all())
    # Strided: the 8 ranks on every other host of 16.
    assert sorted(set(one.flows["src"])) == list(range(0, 16, 2))
    for other in runs[1:]:
        assert one.flows.equals(other.flows) and one.queues.equals(other.queues)
        assert one.counters["events"] == other.counters["events"]


def test_placements(tmp_path: Path) -> None:
    goal = "num_ranks 3\nrank 0 {\na: send 1000b to 1\nb: send 1000b to 2\n}\n" \
           "rank 1 {\nr: recv 1000b from 0\n}\nrank 2 {\nr: recv 1000b from 0\n}\n"
    base = write(tmp_path, goal)

    def ends(extra: str, seed: int = 1) -> list[tuple[int, int]]:
        text = scenario(extra=extra).replace("seed = 1", f"seed = {seed}")
        f = manypath.run(text, base_dir=base).flows
        return list(zip(f["src"], f["dst"]))

    assert ends("") == [(0, 1), (0, 2)]
    assert ends("hosts = [9, 3, 12]\n") == [(9, 3), (9, 12)]
    assert ends('placement = "strided"\n') == [(0, 5), (0, 10)]
    assert ends('placement = "strided"\nhost_range = [4, 10]\n') == [(4, 6), (4, 8)]
    drawn = ends('placement = "random"\n')
    assert drawn == ends('placement = "random"\n')
    assert len({drawn[0][0], drawn[0][1], drawn[1][1]}) == 3
    assert any(ends('placement = "random"\n', seed) != drawn for seed in range(2, 8))
    # Two ranks on one host: their message is not a flow (the fabric does not carry it).
    assert ends("hosts = [5, 5, 7]\n") == [(5, 7)]


def test_a_rendezvous_send_waits_for_its_receive_to_be_posted(tmp_path: Path) -> None:
    goal = """\
num_ranks 2
rank 0 {
  big: send 100000b to 1
  small: send 500b to 1 tag 1
}
rank 1 {
  late: calc 20000
  r: recv 100000b from 0
  s: recv 500b from 0 tag 1
  r requires late
  s requires late
}
"""
    eager = run(tmp_path, goal)
    assert list(eager["start_s"]) == [0.0, 0.0]
    # The receive is posted 20 µs in, known before the run: the large message leaves then.
    f = run(tmp_path, goal, extra="rendezvous_bytes = 1000\n")
    assert f.loc[1, "start_s"] == pytest.approx(20e-6, abs=1e-12)
    assert f.loc[2, "start_s"] == 0.0


TWO = "num_ranks 2\nrank 0 {{\n{a}\n}}\nrank 1 {{\n{b}\n}}\n"


@pytest.mark.parametrize(("goal", "extra", "message"), [
    (TWO.format(a="l1: recv 10b from 1\nl2: send 10b to 1\nl2 requires l1",
                b="l1: recv 10b from 0\nl2: send 10b to 0\nl2 requires l1"), "",
     "s.goal: the dependencies form a cycle, so these operations can never run (each waits "
     "for the one before): rank 0's recv l1 (from rank 1, tag 0) → rank 0's send l2 (to rank "
     "1, tag 0) → rank 1's recv l1 (from rank 0, tag 0) → rank 1's send l2 (to rank 0, tag 0) "
     "→ rank 0's recv l1 (from rank 1, tag 0)"),
    (TWO.format(a="l1: send 10b to 1", b="l1: recv 10b from 0\nl1 requires l9"), "",
     "s.goal line 7: rank 1 has no operation labelled l9"),
    (TWO.format(a="l1: send 10b to 2", b=""), "",
     "s.goal line 3: rank 2 does not exist: num_ranks is 2 (ranks 0..1)"),
    (TWO.format(a="l1: send 10b to 1 tag 3", b="l1: recv 10b from 0"), "",
     "s.goal line 3: rank 0's send l1 (to rank 1, tag 3) has no matching recv: rank 0 sends 1 "
     "message(s) to rank 1 with tag 3, rank 1 posts 0 recv(s) from rank 0 with tag 3"),
    (TWO.format(a="l1: send 10b to 1", b="l1: recv 10b from 0\nl2: recv 5b from 0"), "",
     "s.goal line 7: rank 1's recv l2 (from rank 0, tag 0) has no matching send: rank 0 sends 1 "
     "message(s) to rank 1 with tag 0, rank 1 posts 2 recv(s) from rank 0 with tag 0"),
    (TWO.format(a="l1: send 0b to 1", b="l1: recv 10b from 0"), "",
     's.goal line 3: size must be a positive number of bytes, got "0b"'),
    (TWO.format(a="l1: send -4b to 1", b="l1: recv 10b from 0"), "",
     's.goal line 3: size must be a positive number of bytes, got "-4b"'),
    (TWO.format(a="l1 send 10b to 1", b=""), "",
     's.goal line 3: expected an operation (LABEL: send, recv or calc), a dependency '
     '(A requires B, A irequires B) or "}", got "l1"'),
    (TWO.format(a="l1: send 10b to 1", b="l1: recv 10b from 0"), "hosts = [3]\n",
     "s.goal: num_ranks is 2 but the entry has 1 host(s) to place the ranks on (its hosts, "
     "host_range or the topology's)"),
])
def test_a_bad_schedule_is_refused_naming_the_file_and_line(
        tmp_path: Path, goal: str, extra: str, message: str) -> None:
    base = write(tmp_path, goal)
    with pytest.raises(ValueError) as e:
        manypath.validate(scenario(extra=extra), base_dir=base)
    assert str(e.value) == f"traffic[0].file: {message}"


def test_goal_fields_are_checked_against_the_pattern(tmp_path: Path) -> None:
    base = write(tmp_path, TWO.format(a="l1: send 10b to 1", b="l1: recv 10b from 0"))
    other = FABRIC + '\n[[traffic]]\npattern = "permutation"\nsize = { fixed = 10 }\n'
    checks = [
        (scenario(extra="size = { fixed = 10 }\n"),
         'traffic[0].size: does not apply to pattern "goal": its file gives each message\'s size'),
        (scenario("missing.goal"), "traffic[0].file: cannot read GOAL schedule missing.goal"),
        (FABRIC + '\n[[traffic]]\npattern = "goal"\n',
         'traffic[0].file: pattern "goal" needs a file (a GOAL schedule, relative to the scenario)'),
        (other + 'placement = "random"\n',
         'traffic[0].placement: applies only to pattern "collective" or "goal"'),
        (other + "rendezvous_bytes = 10\n",
         'traffic[0].rendezvous_bytes: applies only to pattern "goal"'),
        (other + 'file = "s.goal"\n', 'traffic[0].file: applies only to pattern "matrix" or "goal"'),
        (scenario(extra="trigger_delay_us = 5\n"),
         'traffic[0].trigger_delay_us: applies only to pattern "matrix"'),
        (scenario(extra="repeat = 2\n"),
         'traffic[0].repeat: does not apply to pattern "goal": its file gives the messages'),
        (scenario(extra="connection_pool = true\n"),
         'traffic[0].connection_pool: does not apply to pattern "goal"'),
        (scenario(extra='placement = "random"\nhosts = [1, 1, 2]\n'),
         'traffic[0].file: s.goal: placement "random" needs distinct hosts'),
        ('level = "flow"\n' + scenario(),
         "traffic[0].pattern: the flow level models long-lived flows only: a connection matrix's "
         "or a GOAL schedule's flows have sizes"),
    ]
    for text, want in checks:
        with pytest.raises(ValueError) as e:
            manypath.validate(text, base_dir=base)
        assert str(e.value).startswith(want), (want, str(e.value))


def test_operations_never_started_are_reported(tmp_path: Path) -> None:
    # The run ends before rank 1's 10 MB message is in: rank 0's reply never starts.
    goal = TWO.format(a="r: recv 10000000b from 1\ns: send 10b to 1 tag 1\ns requires r",
                      b="x: send 10000000b to 0\ny: recv 10b from 0 tag 1")
    with pytest.warns(runner.ScenarioWarning):
        res = manypath.run(scenario().replace("duration_ms = 20", "duration_ms = 1"),
                           base_dir=write(tmp_path, goal))
    assert list(res.flows["started"]) == [False, True]
    assert res.scenario_warnings == [
        ("traffic", "1 flow(s) never started: their trigger never fired (flow 0 (connection 1))")]
