"""`resolved.toml`: the scenario with every default the run used written in. Loaded
back it runs to the same tables, for every kind of transport and every shipped
scenario, and it carries every TCP setting."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from manypath import _core

ROOT = Path(__file__).resolve().parent.parent

# Six hosts on a small leaf-spine, each sending one 200 KB flow, with a transport
# given per case (its own `[transports.NAME]` entry, or a built-in one).
BASE = """\
duration_ms = 5
seed = 7
[topology.leaf_spine]
leaves = 2
spines = 2
hosts_per_leaf = 3
[network.queue]
limit_packets = 200
{queue}
[tcp]
rto_min_us = 1000
{entry}
[[traffic]]
pattern = "permutation"
transport = "{name}"
size = {{ fixed = 200000 }}
"""

ECN = "ecn_k_packets = 20"

# name: (its [transports.NAME] entry or "" for a built-in, the switch queue it needs)
TRANSPORTS: dict[str, tuple[str, str]] = {
    **{name: ("", ECN) for name in ("tcp", "cubic", "dctcp", "mptcp", "olia", "dcm", "xmp",
                                    "amp", "mmptcp", "fuso", "repflow")},
    "swift": ('[transports.swift]\ncc = "swift"\nswift_host_delay_us = 0.5\n', ECN),
    "bbr": ('[transports.bbr]\ncc = "bbr"\n', ECN),
    "pfabric": ('[transports.pfabric]\ncc = "pfabric"\n', "pfabric = true"),
    "linux": ('[transports.linux]\ncc = "reno"\ntcp = { timers = "linux", sack = true, '
              "lost_retransmit = true }\n", ECN),
    "dcqcn": ('[transports.dcqcn]\ncc = "dcqcn"\n', ECN),
    "timely": ('[transports.timely]\ncc = "timely"\n', ECN),
    "hpcc": ('[transports.hpcc]\ncc = "hpcc"\n', ECN),
    "roce": ('[transports.roce]\ncc = "roce"\n', ECN),
    "homa": ('[transports.homa]\ncc = "homa"\n', "priority_levels = 8"),
    "ndp": ('[transports.ndp]\ncc = "ndp"\n', "trim = {}"),
}


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return repr(a) == repr(b)  # NaN compares equal this way


def runs_the_same(text: str, base_dir: str) -> None:
    resolved = _core.resolve(text, base_dir)
    a = _core.run(text, base_dir)
    b = _core.run(resolved, base_dir)
    for table in ("flows", "queues", "subflows"):
        assert same(a[table], b[table]), table
    assert _core.resolve(resolved, base_dir) == resolved


@pytest.mark.parametrize("name", list(TRANSPORTS))
def test_a_resolved_scenario_runs_the_same_for_every_transport(name: str) -> None:
    entry, queue = TRANSPORTS[name]
    text = BASE.format(queue=queue, entry=entry, name=name)
    runs_the_same(text, ".")
    doc = tomllib.loads(_core.resolve(text, "."))
    # The transport is written out as an entry of its own, with its controller.
    assert "cc" in doc["transports"][name]


SHIPPED = sorted((ROOT / "scenarios").glob("*.toml")) + [
    ROOT / "python" / "manypath" / "scenarios" / "default.toml"
]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_a_resolved_shipped_scenario_runs_the_same(path: Path) -> None:
    runs_the_same(path.read_text(encoding="utf-8"), str(path.parent))


def test_a_written_in_default_changes_the_run_when_changed() -> None:
    # The comparison above can fail: one resolved default changed gives other tables.
    text = BASE.format(queue=ECN, entry="", name="dctcp")
    resolved = _core.resolve(text, ".")
    assert "dctcp_g = 0.0625\n" in resolved
    a = _core.run(resolved, ".")
    b = _core.run(resolved.replace("dctcp_g = 0.0625\n", "dctcp_g = 1.0\n"), ".")
    assert not same(a["flows"], b["flows"])


# Every `[tcp]` field with a default; `init_ssthresh_bytes` (none by default) and `hz`
# (only with the Linux timers) stay unset.
TCP_FIELDS = [
    "mss", "header_bytes", "init_cwnd_packets", "rto_min_us", "rto_max_us", "rto_initial_us",
    "dupack_threshold", "delayed_ack", "delayed_ack_timeout_us", "rcv_wnd_bytes",
    "cwnd_min_packets", "sack", "limited_transmit", "early_retransmit", "tlp",
    "lost_retransmit", "tcp_ir", "proactive", "idle_restart", "fin_with_data", "pacing",
    "timers",
]


def test_resolved_toml_carries_every_tcp_default(tmp_path: Path) -> None:
    import manypath

    res = manypath.run(ROOT / "scenarios" / "incast-tcp.toml")
    res.to_parquet(tmp_path / "run")
    tcp = tomllib.loads((tmp_path / "run" / "resolved.toml").read_text(encoding="utf-8"))["tcp"]
    assert list(tcp) == TCP_FIELDS
    assert tcp == {
        "mss": 1460, "header_bytes": 40, "init_cwnd_packets": 10,
        "rto_min_us": 200000.0,  # the scenario's own
        "rto_max_us": 60e6, "rto_initial_us": 1e6, "dupack_threshold": 3,
        "delayed_ack": False, "delayed_ack_timeout_us": 1000.0, "rcv_wnd_bytes": 4194304,
        "cwnd_min_packets": 2, "sack": False, "limited_transmit": False,
        "early_retransmit": False, "tlp": False, "lost_retransmit": False, "tcp_ir": False,
        "proactive": False, "idle_restart": False, "fin_with_data": False, "pacing": False,
        "timers": "exact",
    }
    # The schema's TCP fields are these and the two without a default.
    schema = __import__("json").loads(_core.schema())
    assert set(schema["definitions"]["TcpSpec"]["properties"]) == {
        *TCP_FIELDS, "init_ssthresh_bytes", "hz"
    }


def test_a_transport_writes_the_tcp_settings_it_differs_in() -> None:
    text = BASE.format(queue="pfabric = true", entry=TRANSPORTS["pfabric"][0], name="pfabric")
    doc = tomllib.loads(_core.resolve(text, "."))
    assert doc["transports"]["pfabric"]["tcp"] == {
        "init_cwnd_packets": 12, "rto_min_us": 24.0, "rto_max_us": 24.0, "rto_initial_us": 24.0,
        "dupack_threshold": 4294967295, "rcv_wnd_bytes": 17520, "sack": True,
        "idle_restart": True,
    }
    assert doc["transports"]["pfabric"]["pfabric_probe_timeouts"] == 5
    linux = BASE.format(queue=ECN, entry=TRANSPORTS["linux"][0], name="linux")
    tcp = tomllib.loads(_core.resolve(linux, "."))["transports"]["linux"]["tcp"]
    assert tcp == {
        "delayed_ack": True, "delayed_ack_timeout_us": 40000.0, "sack": True,
        "lost_retransmit": True, "timers": "linux", "hz": 1000,
    }
