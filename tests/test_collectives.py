"""Collectives (`pattern = "collective"`): no step starts before the data it waits for
has arrived (a rank going on with what it received starts at that instant); a collective
and the same collective read back from `manypath matrix`'s file run alike; on an idle
non-blocking fat tree, NDP's ring and recursive-doubling all-reduces complete within 10%
of the α–β bound at three sizes, and the bound is the textbook formula on the fabric's
paths; the tables are the same on 1, 2 and 4 threads; iterations follow each other after
the compute gap; the tables reach the summary, JSON, Parquet and the report; bad input is
named."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from manypath import runner
from manypath.cli import app
from manypath.results import load_run

cli = CliRunner()

NDP_FABRIC = """\
name = "collective"
seed = 1
duration_ms = 200
stop_when_done = true

[topology.fat_tree]
k = 4

[network.link]
rate_gbps = 10
delay_us = 1

[network.queue]
limit_packets = 100
trim = {}

[network.host_queue]
priority = true

[transports.ndp]
cc = "ndp"
window_bytes = 135000
"""

DCTCP_FABRIC = """\
name = "collective"
seed = 1
duration_ms = 200
stop_when_done = true

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


def entry(collective: str, algorithm: str, size: int, transport: str = "ndp", extra: str = "") -> str:
    return f"""
[[traffic]]
pattern = "collective"
collective = "{collective}"
algorithm = "{algorithm}"
transport = "{transport}"
size = {{ fixed = {size} }}
""" + extra


def matrix_of(text: str, tmp_path: Path) -> tuple[Path, str]:
    """The scenario's collective written by `manypath matrix`, and its text."""
    src = tmp_path / "collective.toml"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "collective.cm"
    r = cli.invoke(app, ["matrix", str(src), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out, out.read_text(encoding="utf-8")


def triggers_of(cm: str) -> tuple[dict[int, str], dict[int, list[tuple[int, str]]], dict[int, int]]:
    """From a matrix's text: each trigger's kind, the (connection id, event) pairs that
    activate it, and the trigger each connection waits for."""
    kinds: dict[int, str] = {}
    feeders: dict[int, list[tuple[int, str]]] = {}
    waits: dict[int, int] = {}
    for line in cm.splitlines():
        t = line.split()
        if t and t[0] == "trigger":
            kinds[int(t[2])] = t[3]
        elif t and "->" in t[0]:
            kv = dict(zip(t[1::2], t[2::2]))
            cid = int(kv["id"])
            if "trigger" in kv:
                waits[cid] = int(kv["trigger"])
            for key, event in (("recv_done_trigger", "received_s"), ("send_done_trigger", "finish_s")):
                if key in kv:
                    feeders.setdefault(int(kv[key]), []).append((cid, event))
    return kinds, feeders, waits


@pytest.mark.parametrize("collective,algorithm,extra", [
    ("allreduce", "ring", ""),
    ("allreduce", "double_binary_tree", "chunks = 3\n"),
    ("alltoall", "bruck", ""),
    ("broadcast", "recursive_doubling", ""),
])
def test_no_step_starts_before_the_data_it_waits_for(tmp_path: Path, collective: str, algorithm: str,
                                                     extra: str) -> None:
    text = NDP_FABRIC + entry(collective, algorithm, 480_000, extra="ranks = 8\n" + extra)
    _, cm = matrix_of(text, tmp_path)
    kinds, feeders, waits = triggers_of(cm)
    flows = runner.run(text).flows
    assert flows["completed"].all()
    by_id = flows.set_index(flows["flow_id"] + 1)  # the matrix numbers connections from 1
    step_s = 1e-6  # the fabric's smallest link delay: a synchronisation step
    local = 0
    for cid, t in waits.items():
        times = [float(by_id.loc[f, ev]) for f, ev in feeders[t]]
        fired = min(times) if kinds[t] == "oneshot" else max(times)
        start = float(by_id.loc[cid, "start_s"])
        assert start >= fired - 1e-12, (cid, start, fired)
        # A rank goes on at once with what it received; news from another host takes a
        # step to cross the fabric.
        hosts = {int(by_id.loc[f, "dst" if ev == "received_s" else "src"]) for f, ev in feeders[t]}
        if hosts == {int(by_id.loc[cid, "src"])}:
            assert start == pytest.approx(fired, abs=1e-12)
            local += 1
        else:
            assert start == pytest.approx(fired + step_s, abs=1e-12)
    assert local > 0
    # Every flow is watched to its last byte, and that comes before its acknowledgment.
    assert (flows["received_s"] <= flows["finish_s"]).all()


@pytest.mark.parametrize("collective,algorithm,transport,extra", [
    ("allreduce", "ring", "dctcp", ""),
    ("allreduce", "double_binary_tree", "ndp", "chunks = 2\n"),
    ("alltoall", "pairwise", "dctcp", "placement = \"random\"\nranks = 6\n"),
    ("allgather", "bruck", "ndp", "ranks = 5\n"),
])
def test_a_collective_and_its_matrix_read_back_run_alike(tmp_path: Path, collective: str, algorithm: str,
                                                         transport: str, extra: str) -> None:
    fabric = DCTCP_FABRIC if transport == "dctcp" else NDP_FABRIC
    text = fabric + entry(collective, algorithm, 300_000, transport, extra + "start_us = 7\n")
    cm_path, _ = matrix_of(text, tmp_path)
    back = fabric + f"""
[[traffic]]
pattern = "matrix"
transport = "{transport}"
file = "{cm_path.name}"
"""
    a = runner.run(text).flows
    b = runner.run(back, base_dir=tmp_path).flows
    assert "matrix_id" in b and "collective_id" in a and "collective_id" not in b
    shared = [c for c in a.columns if c in b.columns and c != "matrix_id"]
    pd.testing.assert_frame_equal(a[shared], b[shared])
    assert a["completed"].all()


def ndp_transfer_s(nbytes: float, hops: int) -> float:
    """NDP's bytes alone on an idle path of `hops` 10 Gb/s, 1 µs links: every packet's
    wire bytes at the rate, one full packet's store and forward per further hop, and the
    propagation (the last packet may be shorter: bounds within a packet)."""
    payload, header, rate = 8936, 64, 10e9
    n = math.ceil(nbytes / payload)
    wire = nbytes + n * header
    return wire * 8 / rate + (hops - 1) * 9000 * 8 / rate + hops * 1e-6


def links(a: int, b: int) -> int:
    """Links between hosts a and b of a k = 4 fat tree (2 hosts per edge switch, 4 per pod)."""
    return 2 if a // 2 == b // 2 else 4 if a // 4 == b // 4 else 6


@pytest.mark.parametrize("algorithm", ["ring", "recursive_doubling"])
def test_ndp_allreduce_is_within_10_percent_of_the_alpha_beta_bound(algorithm: str) -> None:
    n = 16
    for size in (1_000_000, 4_000_000, 16_000_000):
        c = runner.run(NDP_FABRIC + entry("allreduce", algorithm, size)).collectives
        assert len(c) == 1 and bool(c["completed"].iloc[0])
        row = c.iloc[0]
        # The bound is the textbook cost with each pair's own α and β: a rank's step waits
        # for what it received in the step before, so the longest chain of transfers
        # ends it. Ring: piece r goes round from rank r, 2(N−1) hops of S/N each.
        # Recursive doubling: rank r exchanges all S with r xor 2^k at step k.
        if algorithm == "ring":
            textbook = max(sum(ndp_transfer_s(size / n, links((r + k) % n, (r + k + 1) % n))
                               for k in range(2 * (n - 1))) for r in range(n))
        else:
            textbook = max(sum(ndp_transfer_s(size, links(r, r ^ (1 << k))) for k in range(4))
                           for r in range(n))
        assert row["ideal_cct_s"] == pytest.approx(textbook, rel=0.01), (size, row["ideal_cct_s"], textbook)
        assert row["ideal_cct_s"] <= row["cct_s"] <= 1.10 * row["ideal_cct_s"], (size, row["slowdown"])
        assert row["jct_s"] == row["cct_s"]
        assert 0 <= row["straggler_rank"] < n


def test_a_congested_collective_is_slower_than_its_bound() -> None:
    # All-to-all on ECMP with DCTCP: flows collide on the fat tree's uplinks and queue.
    c = runner.run(DCTCP_FABRIC + entry("alltoall", "direct", 8_000_000, "dctcp")).collectives
    assert c["slowdown"].iloc[0] > 1.3


def test_identical_on_1_2_and_4_threads() -> None:
    text = (DCTCP_FABRIC + entry("allreduce", "ring", 400_000, "dctcp", "iterations = 2\ngap_us = 30\nranks = 12\n")
            + entry("alltoall", "pairwise", 200_000, "dctcp", "hosts = [12, 13, 14, 15, 0, 5]\n"))
    runs = [runner.run(text, threads=t) for t in (1, 2, 4)]
    for r in runs[1:]:
        pd.testing.assert_frame_equal(runs[0].flows, r.flows)
        pd.testing.assert_frame_equal(runs[0].collectives, r.collectives)
        pd.testing.assert_frame_equal(runs[0].collective_steps, r.collective_steps)
    assert len(runs[0].collectives) == 3


def test_iterations_follow_each_other_after_the_gap() -> None:
    gap_us = 50.0
    res = runner.run(DCTCP_FABRIC + entry("allreduce", "recursive_doubling", 800_000, "dctcp",
                                          f"ranks = 8\niterations = 3\ngap_us = {gap_us}\n"))
    c = res.collectives
    assert list(c["iteration"]) == [0, 1, 2] and c["completed"].all()
    for prev, nxt in zip(c.itertuples(), c.iloc[1:].itertuples()):
        # Every rank's result, then the compute gap (the barrier's news crosses the fabric
        # in less than the gap).
        assert nxt.start_s == pytest.approx(prev.end_s + gap_us * 1e-6, abs=1e-12)
    assert c["jct_s"].iloc[-1] == pytest.approx(c["end_s"].iloc[-1] - c["start_s"].iloc[0])
    steps = res.collective_steps
    assert len(steps) == 3 * 3
    assert (steps["end_s"] >= steps["start_s"]).all()
    # A step of a collective starts after the one before it began.
    for _, g in steps.groupby("collective_id"):
        assert g["start_s"].is_monotonic_increasing


def test_the_tables_reach_the_summary_json_parquet_and_report(tmp_path: Path) -> None:
    src = tmp_path / "allreduce.toml"
    src.write_text(DCTCP_FABRIC + entry("allreduce", "ring", 400_000, "dctcp", "ranks = 8\niterations = 2\n"),
                   encoding="utf-8")
    out = tmp_path / "run"
    r = cli.invoke(app, ["run", str(src), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "collectives (CCT: first start to last byte received" in r.output
    assert re.search(r"0\s+allreduce\s+ring\s+8\s+0.4\s+2/2", r.output), r.output
    res = load_run(out)
    assert len(res.collectives) == 2 and len(res.collective_steps) == 2 * 14
    assert (out / "collectives.parquet").is_file() and (out / "collective_steps.parquet").is_file()
    r = cli.invoke(app, ["run", str(src), "--json"])
    doc = json.loads(r.output)
    job = doc["summary"]["collectives"][0]
    assert (job["collective"], job["algorithm"], job["ranks"], job["iterations"], job["completed"]) == (
        "allreduce", "ring", 8, 2, 2)
    assert job["slowdown_mean"] >= 1.0
    r = cli.invoke(app, ["report", str(out)])
    assert r.exit_code == 0, r.output
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Collectives</h2>" in page and "collective completion time CDF per job" in page
    assert "the steps of the slowest collective run" in page


def test_runs_without_collectives_have_no_collective_files(tmp_path: Path) -> None:
    text = DCTCP_FABRIC + """
[[traffic]]
pattern = "permutation"
transport = "dctcp"
size = { fixed = 100000 }
"""
    res = runner.run(text)
    assert not len(res.collectives) and "collective_id" not in res.flows and "received_s" not in res.flows
    res.to_parquet(tmp_path / "run")
    assert not (tmp_path / "run" / "collectives.parquet").exists()
    assert res.summary()["collectives"] is None


def test_bad_collectives_are_named(tmp_path: Path) -> None:
    cases = {
        "ranks = 1\n": "traffic[0].ranks: a collective needs at least two ranks, got 1",
        "hosts = [1, 2, 2]\n": "traffic[0].hosts: host 2 is listed twice",
        "hosts = [1, 40]\n": "traffic[0].hosts: host 40 does not exist",
        "iterations = 0\n": "traffic[0].iterations",
    }
    for extra, want in cases.items():
        src = tmp_path / "bad.toml"
        src.write_text(DCTCP_FABRIC + entry("allreduce", "ring", 400_000, "dctcp", extra), encoding="utf-8")
        r = cli.invoke(app, ["validate", str(src)])
        assert r.exit_code != 0 and want in r.output, (extra, r.output)
    src = tmp_path / "gap.toml"
    src.write_text(DCTCP_FABRIC + entry("allreduce", "ring", 400_000, "dctcp", "iterations = 2\ngap_us = 5\n"),
                   encoding="utf-8")
    r = cli.invoke(app, ["matrix", str(src)])
    assert r.exit_code != 0
    assert "starts 5 µs after its trigger fires: htsim's connection matrices start a triggered connection" in r.output
    src.write_text(DCTCP_FABRIC + """
[[traffic]]
pattern = "permutation"
transport = "dctcp"
size = { fixed = 1000 }
""", encoding="utf-8")
    r = cli.invoke(app, ["matrix", str(src)])
    assert r.exit_code != 0 and "0 entries are collectives or connection matrices" in r.output
