"""Traffic as a dependency graph, from connection-matrix files (`pattern = "matrix"`):
triggers start flows only once they fire (a oneshot at once, a barrier after its count,
a multishot one flow per activation), exactly the trigger delay later; receive-done
comes before send-done; flows never triggered are reported; the tables are the same on
1, 2 and 4 threads; htsim's own files run unchanged; bad files are refused naming the
file and line."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import manypath
from manypath import runner
from manypath.cli import app

ROOT = Path(__file__).resolve().parent.parent
MATRICES = ROOT / "scenarios" / "matrices"

cli = CliRunner()

FABRIC = """\
name = "matrix"
seed = 1
duration_ms = 20

[topology.fat_tree]
k = 4

[network.link]
rate_gbps = 10
delay_us = 1

[network.queue]
limit_packets = 100
ecn_k_packets = 15

[tcp]
rto_min_us = 5000
"""

DELAY_US = 20.0


def scenario(file: str, transport: str = "dctcp", delay_us: float | None = DELAY_US,
             extra: str = "") -> str:
    delay = "" if delay_us is None else f"trigger_delay_us = {delay_us}\n"
    return FABRIC + f"""
[[traffic]]
pattern = "matrix"
transport = "{transport}"
class = "steps"
file = "{file}"
{delay}""" + extra


def run(text: str, base: Path = MATRICES.parent) -> manypath.Results:
    return manypath.run(text, base_dir=base)


def by_id(res: manypath.Results) -> pd.DataFrame:
    return res.flows.set_index("matrix_id")


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "m.cm").write_text(text, encoding="utf-8")
    return tmp_path


def test_triggered_flows_start_exactly_the_delay_after_their_trigger_fires() -> None:
    res = run(scenario("matrices/two-steps.cm"))
    f = by_id(res)
    assert bool(f["completed"].all()), f
    start, finish = f["start_s"], f["finish_s"]
    delay = DELAY_US * 1e-6
    # Oneshot 1: connection 1's send-done starts connection 4.
    assert start[4] == pytest.approx(finish[1] + delay, abs=1e-12)
    # Barrier 2 (count 2): connections 2 and 3's send-dones start 5 and 6 at the later one.
    assert finish[3] > finish[2]
    for c in (5, 6):
        assert start[c] == pytest.approx(max(finish[2], finish[3]) + delay, abs=1e-12)
        assert start[c] > finish[2] + delay
    # Barrier 3 (count 3): connection 4's receive-done and 5 and 6's send-dones.
    for c in (7, 8):
        assert start[c] >= max(finish[5], finish[6]) + delay - 1e-12
        assert start[c] <= max(finish[4], finish[5], finish[6]) + delay + 1e-12
    # Nothing triggered starts before its trigger could have fired.
    assert (start[[4, 5, 6, 7, 8]] > delay).all()
    assert list(f.index) == list(range(1, 9))


def test_a_barrier_waits_for_all_its_activations(tmp_path: Path) -> None:
    # Three flows of different sizes activate barrier 1 (count 3); flow 4 waits for it.
    text = """Nodes 16
Connections 4
Triggers 1
0->1 id 1 start 0 size 10000 send_done_trigger 1
2->3 id 2 start 0 size 200000 send_done_trigger 1
4->5 id 3 start 0 size 50000 send_done_trigger 1
6->7 id 4 trigger 1 size 1000
trigger id 1 barrier count 3
"""
    f = by_id(run(scenario("m.cm"), write(tmp_path, text)))
    last = f.loc[[1, 2, 3], "finish_s"].max()
    assert f.loc[2, "finish_s"] == last
    assert f.loc[4, "start_s"] == pytest.approx(last + DELAY_US * 1e-6, abs=1e-12)


def test_a_multishot_starts_one_flow_per_activation_in_file_order(tmp_path: Path) -> None:
    text = """Nodes 16
Connections 4
Triggers 1
0->1 id 1 start 0 size 10000 send_done_trigger 1
2->3 id 2 start 0 size 200000 send_done_trigger 1
4->5 id 3 trigger 1 size 1000
6->7 id 4 trigger 1 size 1000
trigger id 1 multishot
"""
    f = by_id(run(scenario("m.cm"), write(tmp_path, text)))
    delay = DELAY_US * 1e-6
    assert f.loc[3, "start_s"] == pytest.approx(f.loc[1, "finish_s"] + delay, abs=1e-12)
    assert f.loc[4, "start_s"] == pytest.approx(f.loc[2, "finish_s"] + delay, abs=1e-12)


RECEIVE_THEN_SEND = """Nodes 16
Connections 3
Triggers 2
0->4 id 1 start 0 size 100000 recv_done_trigger 1 send_done_trigger 2
8->12 id 2 trigger 1 size 1000
9->13 id 3 trigger 2 size 1000
trigger id 1 oneshot
trigger id 2 oneshot
"""


@pytest.mark.parametrize("cc", ["dctcp", "lia", "dcqcn", "ndp", "homa"])
def test_receive_done_comes_before_send_done(tmp_path: Path, cc: str) -> None:
    base = write(tmp_path, RECEIVE_THEN_SEND)
    text = scenario("m.cm", transport="t", delay_us=0) + f'\n[transports.t]\ncc = "{cc}"\n'
    if cc == "homa":
        text = text.replace("ecn_k_packets = 15", "priority_levels = 8")
    elif cc == "ndp":
        text = text.replace("ecn_k_packets = 15", "trim = {}")
    transport = cc
    f = by_id(run(text, base))
    assert bool(f["completed"].all()), (transport, f)
    received, sent = f.loc[2, "start_s"], f.loc[3, "start_s"]
    if transport == "homa":
        # Complete at its receiver: received and finished at once.
        assert received == sent
    else:
        assert received < sent
        # Started a synchronisation step (1 µs) after the firing, with no delay.
        assert sent == pytest.approx(f.loc[1, "finish_s"] + 1e-6, abs=1e-12)
        assert received < f.loc[1, "finish_s"] + 1e-6


def test_flows_whose_trigger_never_fires_are_reported(tmp_path: Path) -> None:
    text = """Nodes 16
Connections 3
Triggers 1
0->1 id 1 start 0 size 10000 send_done_trigger 1
2->3 id 2 trigger 1 size 1000
4->5 id 3 trigger 1 size 1000
trigger id 1 barrier count 2
"""
    with pytest.warns(runner.ScenarioWarning) as caught:
        res = run(scenario("m.cm"), write(tmp_path, text))
    f = by_id(res)
    assert math.isnan(f.loc[2, "start_s"]) and math.isnan(f.loc[3, "start_s"])
    assert not f.loc[[2, 3], "started"].any()
    message = ("2 flow(s) never started: their trigger never fired "
               "(flow 1 (connection 2), flow 2 (connection 3))")
    assert res.scenario_warnings == [("traffic", message)]
    assert [str(w.message) for w in caught] == [f"traffic: {message}"]


def test_the_tables_are_the_same_on_1_2_and_4_threads() -> None:
    text = scenario("matrices/two-steps.cm")
    tables = []
    for threads in (1, 2, 4):
        res = run(text + f"\n[parallel]\nthreads = {threads}\n")
        assert res.provenance["threads"] == threads
        tables.append(res)
    one = tables[0]
    assert bool(one.flows["completed"].all())
    for other in tables[1:]:
        assert one.flows.equals(other.flows) and one.queues.equals(other.queues)
        assert one.counters["events"] == other.counters["events"]


def test_a_matrix_runs_end_to_end_through_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(ROOT / "scenarios" / "htsim-permutation.toml"),
                              "--out", str(out)])
    assert result.exit_code == 0, result.output
    flows = pd.read_parquet(out / "flows.parquet")
    assert sorted(flows["matrix_id"]) == list(range(1, 17))
    assert bool(flows["completed"].all())
    assert set(flows["size"]) == {2_000_000}
    # Host i of the file is host i of the fabric: htsim's "7->5 id 1".
    first = flows.set_index("matrix_id").loc[1]
    assert (first["src"], first["dst"]) == (7, 5)


def test_htsims_incast_file_runs_unchanged_without_ids() -> None:
    res = run(scenario("matrices/incast.cm", delay_us=None))
    assert list(res.flows["matrix_id"]) == [-1] * 15
    assert set(res.flows["dst"]) == {15}


def test_other_runs_have_no_matrix_column() -> None:
    text = FABRIC + '\n[[traffic]]\npattern = "permutation"\nsize = { fixed = 10000 }\n'
    assert "matrix_id" not in manypath.run(text).flows.columns


@pytest.mark.parametrize(("text", "field", "message"), [
    ("Nodes 16\n0->1 id 1 start 0 size 10\n2->3 id 2 trigger 1 size 10 send_done_trigger 2\n"
     "4->5 id 3 trigger 2 size 10 send_done_trigger 1\ntrigger id 1 oneshot\ntrigger id 2 oneshot\n",
     "traffic[0].file",
     "m.cm: the triggers form a cycle, so its flows can never start: "
     "trigger 1 → connection 2 → trigger 2 → connection 3 → trigger 1"),
    ("0->1 id 1 start 0 size 10\n2->3 id 2 trigger 7 size 10\n",
     "traffic[0].file", 'm.cm line 2: trigger 7 is not defined (no "trigger id 7 ..." line)'),
    ("0->16 id 1 start 0 size 10\n",
     "traffic[0].file", "m.cm line 1: host 16 does not exist: the fabric has 16 hosts, 0..15"),
    ("0->1 id 1 start 0 size -3\n",
     "traffic[0].file", 'm.cm line 1: size must be a positive number of bytes, got "-3"'),
    ("0->1 id 1 start 0 size 0\n",
     "traffic[0].file", 'm.cm line 1: size must be a positive number of bytes, got "0"'),
    ("Nodes 16\nConnections 1\n0->1 id 1 start 0 size 10 prio\n",
     "traffic[0].file", "m.cm line 3: prio needs a value"),
    ("# a comment\n0->1 id 1 size 10\n",
     "traffic[0].file",
     "m.cm line 2: connection 0->1 has neither a start time nor a trigger (give start T or trigger K)"),
    ("0->1 id 1 start 0 size 10\nfailure switch_type TOR switch_id 0 link_id 1\n",
     "traffic[0].file",
     "m.cm line 2: failure lines are not supported: htsim numbers the failed link by its switch "
     "type, switch and link number and fails it at a time given on its command line, which have "
     "no equivalent here; give the failure as a [[faults]] entry (kind = \"link_down\") instead"),
])
def test_a_bad_matrix_is_refused_naming_the_file_and_line(
        tmp_path: Path, text: str, field: str, message: str) -> None:
    base = write(tmp_path, text)
    with pytest.raises(ValueError) as e:
        manypath.validate(scenario("m.cm"), base_dir=base)
    assert str(e.value) == f"{field}: {message}"


def test_matrix_fields_are_checked_against_the_pattern(tmp_path: Path) -> None:
    base = write(tmp_path, "0->1 id 1 start 0 size 10\n")
    checks = [
        (scenario("m.cm") + 'size = { fixed = 10 }\n',
         'traffic[0].size: does not apply to pattern "matrix": its file gives each connection\'s size'),
        (scenario("missing.cm"), "traffic[0].file: cannot read connection matrix missing.cm"),
        (FABRIC + '\n[[traffic]]\npattern = "matrix"\n',
         'traffic[0].file: pattern "matrix" needs a file (a connection matrix, relative to the scenario)'),
        (FABRIC + '\n[[traffic]]\npattern = "permutation"\nsize = { fixed = 10 }\nfile = "m.cm"\n',
         'traffic[0].file: applies only to pattern "matrix"'),
        (FABRIC + '\n[[traffic]]\npattern = "permutation"\n',
         "traffic[0].size: missing (a required field of every pattern but \"matrix\" and \"goal\": "
         "a flow-size distribution, e.g. { fixed = 131072 })"),
        (scenario("m.cm") + "hosts = [0, 1]\n",
         'traffic[0].hosts: does not apply to pattern "matrix": its file gives the flows'),
        (scenario("m.cm") + "connection_pool = true\n",
         'traffic[0].connection_pool: does not apply to pattern "matrix"'),
        ('level = "flow"\n' + scenario("m.cm"),
         'traffic[0].pattern: the flow level models long-lived flows only: a connection matrix'),
    ]
    for text, want in checks:
        with pytest.raises(ValueError) as e:
            manypath.validate(text, base_dir=base)
        assert str(e.value).startswith(want), (want, str(e.value))


def test_the_shipped_scenario_reads_its_file_relative_to_itself(tmp_path: Path) -> None:
    shutil.copytree(MATRICES, tmp_path / "matrices")
    (tmp_path / "s.toml").write_text(
        (ROOT / "scenarios" / "htsim-permutation.toml").read_text(encoding="utf-8"), encoding="utf-8")
    assert manypath.validate(tmp_path / "s.toml") == []


def test_the_command_line_names_the_flows_never_triggered(tmp_path: Path) -> None:
    write(tmp_path, "0->1 id 1 start 0 size 1000 send_done_trigger 1\n"
                    "2->3 id 2 trigger 1 size 1000\ntrigger id 1 barrier count 2\n")
    (tmp_path / "s.toml").write_text(scenario("m.cm"), encoding="utf-8")
    result = cli.invoke(app, ["run", str(tmp_path / "s.toml")])
    assert result.exit_code == 0, result.output
    assert ("warning: traffic: 1 flow(s) never started: their trigger never fired "
            "(flow 1 (connection 2))") in result.output
