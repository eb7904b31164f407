"""Packet capture (``output.pcap``): tshark dissects what the simulator writes, its field
values are the simulator's, counts match the queue table, the cap and window hold."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from manypath import run

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (not installed; make test-deps installs it as root)")

SIZE = 300_000
RCV_WND = 4 * 1024 * 1024


def _scenario(transport: dict[str, Any], *, pairs: int = 2, limit: int = 200, k: int | None = None,
              pcap: dict[str, Any] | None = None) -> dict[str, Any]:
    queue: dict[str, Any] = {"limit_packets": limit}
    if k is not None:
        queue["ecn_k_packets"] = k
    return {
        "name": "capture",
        "seed": 3,
        "duration_ms": 20,
        "topology": {"dumbbell": {"pairs": pairs}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 5}, "queue": queue},
        "transports": {"t": transport},
        "traffic": [
            {"pattern": "pair", "src": i, "dst": pairs + i, "transport": "t", "class": "c",
             "size": {"fixed": SIZE}}
            for i in range(pairs)
        ],
        "output": {"pcap": pcap or {"hosts": [0], "max_packets": 100_000}},
    }


def _tshark(path: Path, *args: str) -> list[list[str]]:
    out = subprocess.run(
        ["tshark", "-r", str(path), "-o", "tcp.analyze_sequence_numbers:FALSE", *args],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def _fields(path: Path, *fields: str, filt: str = "") -> list[list[str]]:
    args = ["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
    if filt:
        args += ["-Y", filt]
    for f in fields:
        args += ["-e", f]
    return _tshark(path, *args)


def _write(res: Any, tmp_path: Path) -> Path:
    assert res.pcap is not None
    path = tmp_path / "capture.pcapng"
    path.write_bytes(res.pcap)
    return path


def _assert_clean(path: Path) -> None:
    """No malformed packet and no expert error in tshark's full dissection."""
    bad = _tshark(path, "-Y", "_ws.malformed || _ws.expert.severity >= error")
    assert bad == [], bad[:5]
    verbose = subprocess.run(["tshark", "-r", str(path), "-V"], check=True,
                             capture_output=True, text=True).stdout
    assert "Malformed" not in verbose


def test_tcp_with_sack_dissects_and_its_fields_are_the_simulators(tmp_path: Path) -> None:
    # A short queue drops packets, so the receiver sends SACK blocks.
    s = _scenario({"cc": "reno"}, limit=8)
    s["tcp"] = {"sack": True}
    res = run(s)
    assert res.queues["drops"].sum() > 0
    path = _write(res, tmp_path)
    _assert_clean(path)
    rows = _fields(path, "ip.src", "tcp.flags.syn", "tcp.flags.fin", "tcp.seq_raw", "tcp.len",
                   "tcp.window_size_value", "tcp.options.sack_le", "tcp.options.sack_re", "tcp.ack_raw")
    data = [r for r in rows if r[0] == "10.0.0.1"]
    acks = [r for r in rows if r[0] == "10.0.0.3"]
    # ISN 0: data byte i has sequence number i + 1; the FIN takes size + 1.
    ends = [int(r[3]) - 1 + int(r[4]) for r in data if r[1] == "0" and int(r[4]) > 0]
    assert max(ends) == SIZE
    assert {int(r[3]) for r in data if r[2] == "1"} == {SIZE + 1}
    syn = [r for r in data if r[1] == "1"]
    assert syn and all(int(r[3]) == 0 for r in syn)
    # SACK blocks lie above the cumulative ACK and within the flow.
    sacked = [r for r in acks if r[6]]
    assert sacked, "the receiver sent SACK blocks"
    for r in sacked:
        for le, re in zip(r[6].split(","), r[7].split(",")):
            assert int(r[8]) < int(le) < int(re) <= SIZE + 1
    # The window after the handshake is the receive buffer less what is held out of
    # order, scaled by 2^7; in order, the whole buffer.
    plain = [int(r[5]) for r in acks if r[1] == "0" and not r[6]]
    assert max(plain) == RCV_WND >> 7
    assert all(int(r[5]) < RCV_WND >> 7 for r in sacked)


def test_dctcp_ce_marks_are_the_bottleneck_ports_marks(tmp_path: Path) -> None:
    pcap = {"ports": [{"node": "left", "peer": "right"}], "max_packets": 100_000}
    res = run(_scenario({"cc": "dctcp"}, k=5, pcap=pcap))
    path = _write(res, tmp_path)
    _assert_clean(path)
    q = res.queues
    port = q[(q["node"] == "left") & (q["peer"] == "right")].iloc[0]
    assert port["ecn_marks"] > 0
    rows = _fields(path, "ip.dsfield.ecn", "frame.comment")
    assert len(rows) == port["tx_packets"]
    ce = [r for r in rows if r[0] == "3"]
    assert len(ce) == port["ecn_marks"]
    assert all(r[1] == "CE marked at this port" for r in ce)
    # Data is ECT(1)... ECT as the simulator codes it (01), pure ACKs are not ECT.
    assert {r[0] for r in rows} <= {"0", "1", "3"}


_MPTCP_FIELDS = ("ip.src", "tcp.srcport", "tcp.flags.syn", "tcp.flags.ack",
                 "tcp.options.mptcp.subtype", "tcp.options.mptcp.rawdataseqno",
                 "tcp.options.mptcp.datalvllen", "tcp.options.mptcp.subflowseqno",
                 "tcp.seq_raw", "tcp.len", "tcp.options.mptcp.rawdataack",
                 "tcp.options.mptcp.sendkey", "tcp.options.mptcp.recvkey",
                 "tcp.options.mptcp.datafin.flag")


def _mptcp_rows(tmp_path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """A 4-subflow MPTCP flow's packets from host 0, and back to it."""
    res = run(_scenario({"cc": "lia", "subflows": 4}, pairs=1))
    path = _write(res, tmp_path)
    _assert_clean(path)
    rows = _fields(path, *_MPTCP_FIELDS)
    return [r for r in rows if r[0] == "10.0.0.1"], [r for r in rows if r[0] == "10.0.0.2"]


def _third_acks(out: list[list[str]]) -> list[list[str]]:
    """The client's segments with data and MP_CAPABLE: its third ACK of the handshake."""
    return [r for r in out if r[2] == "0" and r[4] == "0" and int(r[9]) > 0]


def test_mptcp_four_subflows_carry_their_options_and_data_sequence_numbers(tmp_path: Path) -> None:
    out, back = _mptcp_rows(tmp_path)
    syns = [r for r in out if r[2] == "1"]
    assert len({r[1] for r in syns}) == 4, "four subflows, four source ports"
    assert sorted(r[4] for r in syns).count("0") >= 1, "MP_CAPABLE on the first subflow's SYN"
    assert sorted(r[4] for r in syns).count("1") >= 3, "MP_JOIN on the others"
    synacks = [r for r in back if r[2] == "1"]
    assert {r[4] for r in synacks} == {"0", "1"}
    mapped = [r for r in out if r[5]]
    assert len({r[1] for r in mapped}) == 4, "every subflow carries data"
    # Each mapping: the data-level length is the segment's (and the DATA_FIN's), the
    # subflow sequence number the segment's (relative, first byte 1), and the data
    # sequence space is the flow's.
    for r in mapped:
        assert int(r[6]) == int(r[9]) + (r[13] == "1")
        assert int(r[7]) == int(r[8])
    assert max(int(r[5]) + int(r[9]) for r in mapped) == SIZE
    # The first data segment's mapping is implicit (data sequence number 0, its
    # MP_CAPABLE's data-level length); with the DSS mappings, they tile the flow.
    first = [(0, int(r[6])) for r in _third_acks(out)]
    covered = sorted({(int(r[5]), int(r[9])) for r in mapped} | set(first))
    assert covered[0][0] == 0
    end = 0
    for dsn, length in covered:
        assert dsn <= end
        end = max(end, dsn + length)
    assert end == SIZE


def test_mptcp_third_ack_carries_both_keys_and_the_first_data_length(tmp_path: Path) -> None:
    out, back = _mptcp_rows(tmp_path)
    synack_keys = {r[11] for r in back if r[2] == "1" and r[4] == "0"}
    assert len(synack_keys) == 1 and "" not in synack_keys, "the server's key on the SYN-ACK"
    # The simulator's client sends no ACK of its own after the SYN-ACK: its first data
    # segment (subflow 0, sequence number 1) is the third ACK, with the client's key,
    # the server's key echoed and the data's length (RFC 8684 section 3.1, length 22).
    third = _third_acks(out)
    assert third, "MP_CAPABLE on the first data segment"
    first_port = [r[1] for r in out if r[2] == "1" and r[4] == "0"][0]
    for r in third:
        assert r[1] == first_port and r[8] == "1" and r[3] == "1"
        assert r[11] and r[11] not in synack_keys, "the client's own key"
        assert {r[12]} == synack_keys
        assert int(r[6]) == int(r[9])
        assert r[5] == "", "no DSS beside it"
    # Every other data segment carries a DSS mapping.
    assert all(r[5] for r in out if r[2] == "0" and int(r[9]) > 0 and r not in third)


def test_mptcp_data_fin_rides_on_the_last_byte_and_is_acknowledged(tmp_path: Path) -> None:
    out, back = _mptcp_rows(tmp_path)
    mapped = [r for r in out if r[5]]
    last = [r for r in mapped if int(r[5]) + int(r[9]) == SIZE]
    assert last, "the segment with the flow's last byte was captured"
    # Exactly the segments that carry the last data byte set F, and their data-level
    # length counts the DATA_FIN's octet (RFC 8684 section 3.3.3).
    assert all(r[13] == "1" and int(r[6]) == int(r[9]) + 1 for r in last)
    assert all(r[13] == "0" for r in mapped if r not in last)
    # The data ACK of every byte acknowledges the DATA_FIN too.
    acks = [int(r[10]) for r in back if r[10]]
    assert max(acks) == SIZE + 1
    assert SIZE not in acks


def test_port_and_drop_captures_count_what_the_queue_table_counts(tmp_path: Path) -> None:
    pcap = {"ports": [{"node": "left", "peer": "right"}], "max_packets": 100_000}
    res = run(_scenario({"cc": "reno"}, limit=8, pcap=pcap))
    path = _write(res, tmp_path)
    q = res.queues
    port = q[(q["node"] == "left") & (q["peer"] == "right")].iloc[0]
    assert port["drops"] > 0
    names = [r[0] for r in _fields(path, "frame.interface_name")]
    assert names.count("left->right") == port["tx_packets"]
    assert names.count("left->right drops") == port["drops"]
    assert res.counters["capture_packets"] == len(names)
    comments = {r[0] for r in _fields(path, "frame.comment", filt='frame.interface_name == "left->right drops"')}
    assert comments == {"dropped: queue full"}


def test_the_cap_and_the_window_are_honoured(tmp_path: Path) -> None:
    res = run(_scenario({"cc": "reno"}, pcap={"hosts": [0], "max_packets": 25}))
    path = _write(res, tmp_path)
    assert len(_fields(path, "frame.number")) == 25
    assert res.counters["capture_missed"] > 0
    win = {"hosts": [0], "from_us": 100, "until_us": 150, "max_packets": 100_000}
    res = run(_scenario({"cc": "reno"}, pcap=win))
    times = [float(r[0]) for r in _fields(_write(res, tmp_path), "frame.time_epoch")]
    assert times and all(100e-6 <= t < 150e-6 for t in times)
    assert res.counters["capture_missed"] == 0


def test_flow_and_class_filters_keep_only_their_packets(tmp_path: Path) -> None:
    s = _scenario({"cc": "reno"}, pcap={"ports": [{"node": "left", "peer": "right"}], "flows": [1],
                                        "max_packets": 100_000})
    src = {r[0] for r in _fields(_write(run(s), tmp_path), "ip.src")}
    assert src == {"10.0.0.2"}
    s["output"]["pcap"] = {"ports": [{"node": "left", "peer": "right"}], "classes": ["c"], "max_packets": 10}
    assert len(_fields(_write(run(s), tmp_path), "frame.number")) == 10


def test_capture_leaves_the_results_unchanged() -> None:
    s = _scenario({"cc": "dctcp"}, k=5)
    off = copy.deepcopy(s)
    del off["output"]
    a, b = run(s), run(off)
    assert a.flows.drop(columns=[]).equals(b.flows)
    assert a.queues.equals(b.queues)
    assert a.counters["events"] == b.counters["events"]


def _bad(pcap: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as e:
        run(_scenario({"cc": "reno"}, pcap=pcap))
    return str(e.value)


def test_a_port_that_does_not_exist_is_refused() -> None:
    msg = _bad({"ports": [{"node": "nosuch", "peer": "right"}]})
    assert "output.pcap.ports[0].node: no node of this topology has that name" in msg
    msg = _bad({"ports": [{"node": "host0", "peer": "right"}]})
    assert "output.pcap.ports[0].peer" in msg and "has no link to" in msg


@pytest.mark.parametrize("cap", [0, -5])
def test_a_cap_that_is_not_positive_is_refused(cap: int) -> None:
    msg = _bad({"hosts": [0], "max_packets": cap})
    assert f"output.pcap.max_packets: must be a positive whole number, got {cap}" in msg


def test_an_unknown_host_is_refused() -> None:
    assert "output.pcap.hosts[0]: no such host" in _bad({"hosts": [99]})


def test_an_unknown_flow_is_refused() -> None:
    assert "output.pcap.flows[0]: no such flow" in _bad({"hosts": [0], "flows": [7]})


def test_an_unknown_class_is_refused() -> None:
    assert "output.pcap.classes[0]: not a class of this scenario's traffic" in _bad(
        {"hosts": [0], "classes": ["nosuch"]}
    )


def test_an_uncapped_capture_of_a_long_run_warns() -> None:
    from manypath import validate

    s = _scenario({"cc": "reno"}, pcap={"hosts": [0]})
    s["duration_ms"] = 1000
    warnings = validate(s)
    assert any(p == "output.pcap.max_packets" for p, _ in warnings), warnings
    s["output"]["pcap"]["max_packets"] = 10
    assert not any(p == "output.pcap.max_packets" for p, _ in validate(s))


_PCAP_HOST0 = "\n[output.pcap]\nhosts = [0]\nmax_packets = 100000\n"


def test_roce_is_bth_over_udp_4791_with_cnps(tmp_path: Path) -> None:
    from test_roce import scenario

    s = scenario("dcqcn")
    s["duration_ms"] = 1
    s["output"] = {"pcap": {"hosts": [0], "max_packets": 100_000}}
    res = run(s)
    assert res.flows["cnps"].sum() > 0
    path = _write(res, tmp_path)
    _assert_clean(path)
    rows = _fields(path, "udp.dstport", "infiniband.bth.opcode", "ip.dsfield.ecn")
    assert rows and {r[0] for r in rows} == {"4791"}
    opcodes = [int(r[1]) for r in rows]
    assert 0x04 in opcodes and 0x11 in opcodes
    # The CNPs host 0 (the receiver) sends are the flows' CNPs.
    assert opcodes.count(0x81) == res.flows["cnps"].sum()
    assert any(r[2] == "3" for r in rows if int(r[1]) == 0x04), "CE-marked data"


@pytest.mark.parametrize("transport, port", [("ndp", "61000"), ("homa", "61001")])
def test_ndp_and_homa_go_over_udp_with_their_documented_header(tmp_path: Path, transport: str, port: str) -> None:
    from test_homa import HOMA
    from test_ndp import STAR

    res = run((STAR if transport == "ndp" else HOMA) + _PCAP_HOST0)
    path = _write(res, tmp_path)
    _assert_clean(path)
    rows = _fields(path, "udp.dstport", "udp.srcport", "udp.length", "data.data")
    assert rows and all(r[0] == r[1] == port for r in rows)
    assert all(r[3][:2] == "6d" for r in rows)
    kinds = {r[3][2:4] for r in rows}
    assert "00" in kinds and "01" in kinds, "data and control packets"
    if port == "61000":
        trimmed = _fields(path, "frame.comment", filt='frame.comment == "trimmed to its header"')
        assert len(trimmed) > 0
    # The shipped Lua dissector reads the header: every packet's type and connection.
    lua = Path(__file__).resolve().parents[1] / "docs" / "wireshark" / "manypath.lua"
    proto = f"manypath_{transport}"
    rows = _tshark(path, "-X", f"lua_script:{lua}", "-T", "fields", "-e", f"{proto}.type", "-e", f"{proto}.conn",
                   "-e", "_ws.malformed", "-e", "_ws.expert.severity")
    assert rows and all(r[0] != "" and r[1] != "" and r[2] == "" for r in rows)
    if transport == "ndp":
        flags = _tshark(path, "-X", f"lua_script:{lua}", "-T", "fields", "-e", "manypath_ndp.flags")
        assert sum(int(r[0], 16) & 1 for r in flags) == len(trimmed)
        # ACKs and NACKs carry the PULLs an idle pacer grants at once (flag 0x04); the
        # other PULLs are packets of their own (type 3), never flagged.
        typed = _tshark(path, "-X", f"lua_script:{lua}", "-T", "fields", "-e", "manypath_ndp.type",
                        "-e", "manypath_ndp.flags")
        assert any(int(f, 16) & 4 and t in ("1", "2") for t, f in typed)
        assert not any(int(f, 16) & 4 and t not in ("1", "2") for t, f in typed)


def test_the_cli_captures_a_port_into_the_run_directory(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from manypath import _toml
    from manypath.cli import app

    s = _scenario({"cc": "reno"})
    del s["output"]
    scenario = tmp_path / "s.toml"
    scenario.write_text(_toml.dumps(s), encoding="utf-8")
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["run", str(scenario), "-q", "--out", str(out), "--pcap", "left:right",
                                 "--set", "output.pcap.max_packets=100000"])
    assert r.exit_code == 0, r.output
    names = {row[0] for row in _fields(out / "capture.pcapng", "frame.interface_name")}
    assert names == {"left->right"}
    r = CliRunner().invoke(app, ["run", str(scenario), "-q", "--pcap", "left:right"])
    assert r.exit_code != 0 and "--out" in r.output
    r = CliRunner().invoke(app, ["run", str(scenario), "-q", "--out", str(out), "--pcap", "left"])
    assert r.exit_code != 0 and "NODE:PEER" in r.output


def _pfc_incast(pcap: dict[str, Any] | None) -> dict[str, Any]:
    """Four RoCE senders into host 0 through one switch with a 200 kB buffer and PFC: the
    switch pauses and resumes each sender's link, over and over."""
    s: dict[str, Any] = {
        "name": "pfc-incast",
        "duration_ms": 1,
        "stop_when_done": False,
        "topology": {"star": {"senders": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1}, "buffer": {"bytes": 200_000}, "pfc": {}},
        "transports": {"qp": {"cc": "roce"}},
        "traffic": [{"pattern": "incast", "senders": 4, "transport": "qp", "size": {"fixed": 200_000}}],
    }
    if pcap is not None:
        s["output"] = {"pcap": pcap, "trace": {"hosts": [1]}}
    return s


PFC_FIELDS = ("frame.interface_name", "frame.time_epoch", "frame.len", "eth.dst", "eth.src", "eth.type",
              "macc.opcode", "macc.cbfc.enbv", *(f"macc.cbfc.pause_time.c{c}" for c in range(8)),
              "eth.fcs.status", "frame.comment")


def test_pfc_pause_and_resume_are_802_1qbb_frames_on_the_port_that_sends_them(tmp_path: Path) -> None:
    port = {"node": "switch", "peer": "host1"}
    res = run(_pfc_incast({"ports": [port], "hosts": [2], "max_packets": 100_000}))
    path = _write(res, tmp_path)
    _assert_clean(path)
    q = res.queues
    sender = q[(q["node"] == "switch") & (q["peer"] == "host1")].iloc[0]
    pauses, resumes = int(sender["pfc_pauses_sent_c0"]), int(sender["pfc_resumes_sent_c0"])
    assert pauses >= 5 and resumes >= 5
    out = subprocess.run(
        ["tshark", "-r", str(path), "-o", "eth.check_fcs:TRUE", "-Y", "eth.type == 0x8808", "-T", "fields",
         *(a for f in PFC_FIELDS for a in ("-e", f))],
        check=True, capture_output=True, text=True).stdout
    rows = [dict(zip(PFC_FIELDS, line.split("\t"))) for line in out.splitlines()]
    # On the switch's port to host 1, every frame it sent and none other: the captured
    # host 2's link carries its own pauses, but host 2 (a host) sends none.
    assert {r["frame.interface_name"] for r in rows} == {"switch->host2", "switch->host1"}
    mine = [r for r in rows if r["frame.interface_name"] == "switch->host1"]
    assert len(mine) == pauses + resumes
    assert res.counters["capture_packets"] == sum(q[(q["node"] == "switch") & (q["peer"].isin(["host1", "host2"]))]
                                                  [["tx_packets", "pfc_pauses_sent_c0", "pfc_resumes_sent_c0"]]
                                                  .sum()) + int(q[q["node"] == "host2"]["tx_packets"].sum())
    switch_mac = "02:00:00:00:00:05"  # hosts 0-4 first, then the switch: node 5
    for i, r in enumerate(mine):
        pause = i % 2 == 0  # a pause, then its resume, in turn
        assert r["frame.len"] == "64"
        assert r["eth.dst"] == "01:80:c2:00:00:01" and r["eth.src"] == switch_mac
        assert r["macc.opcode"] == "0x0101"
        assert r["macc.cbfc.enbv"] == "0x0001", "class 0 enabled, in the PAUSE and in the RESUME"
        quanta = [int(r[f"macc.cbfc.pause_time.c{c}"]) for c in range(8)]
        assert quanta == [65535 if pause else 0] + [0] * 7
        assert r["eth.fcs.status"] == "1", "a good FCS"
        assert r["frame.comment"] == f"PFC {'PAUSE' if pause else 'RESUME'} (IEEE 802.1Qbb priority-based flow control)"
    # Sent when the switch sent them: each arrives at host 1 (the trace's pause and
    # resume events at host 1's port) a 64-byte serialisation (51.2 ns) and the link's
    # 1 µs later. Capture timestamps are whole nanoseconds, truncated.
    assert res.trace is not None
    nic = int(q[(q["node"] == "host1")].iloc[0]["port"])
    got = res.trace[(res.trace["port"] == nic) & res.trace["event"].isin(["pause", "resume"])]
    assert list(got["event"]) == ["pause", "resume"] * pauses
    for r, arrived in zip(mine, got["time_ps"]):
        sent_ns = round(float(r["frame.time_epoch"]) * 1e9)
        assert 0 <= (int(arrived) - 51_200 - 1_000_000) - sent_ns * 1000 < 1000
    # Wireshark's MAC control dissector names the frame: "Class Based Flow Control
    # [CBFC] Pause" (tshark 4.0) or "Priority-based Flow Control" (later releases).
    verbose = subprocess.run(["tshark", "-r", str(path), "-V", "-Y", "macc"], check=True,
                             capture_output=True, text=True).stdout
    assert "Type: MAC Control (0x8808)" in verbose
    assert re.search(r"Opcode: (Class Based Flow Control \[CBFC\]|Priority-based Flow Control \[PFC\]) Pause "
                     r"\(0x0101\)", verbose)
    assert "C0: 65535" in verbose and "PFC PAUSE" in verbose
    # A flow filter keeps every PFC frame of the port (they belong to no flow).
    res = run(_pfc_incast({"ports": [port], "flows": [3], "max_packets": 100_000}))
    kinds = [r[0] for r in _fields(_write(res, tmp_path), "eth.type")]
    assert kinds.count("0x8808") == pauses + resumes and kinds.count("0x0800") == 0


def test_pfc_frames_in_a_capture_leave_the_results_unchanged() -> None:
    on = run(_pfc_incast({"ports": [{"node": "switch", "peer": "host1"}], "max_packets": 100_000}))
    off = run(_pfc_incast(None))
    assert on.counters["pfc_pauses"] > 0
    assert on.flows.equals(off.flows) and on.queues.equals(off.queues)
    assert on.counters["events"] == off.counters["events"]
