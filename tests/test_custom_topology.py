"""Topologies from files (`[topology.custom]`): a generator's fabric written as a file
runs bit-identically to the generator; the shipped examples run (the dragonfly at packet
and flow level, the two-plane fabric on both planes); graph imports and per-link
settings reach the network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import manypath
from manypath import runner

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

FAT_TREE = """\
duration_ms = 5
seed = 3

[topology.fat_tree]
k = 4
oversubscription = 2

[network.link]
rate_gbps = 10
delay_us = 1

[network.tiers.agg_core]
rate_gbps = 20

[network.queue]
limit_packets = 50
ecn_k_packets = 10

[[traffic]]
pattern = "random_pairs"
transport = "dctcp"
arrival = "poisson"
load = 0.6
size = { cdf = "websearch" }

[[traffic]]
pattern = "permutation"
transport = "mptcp"
size = { fixed = 200000 }
"""


def as_file(text: str, name: str) -> str:
    return text.replace("[topology.fat_tree]\nk = 4\noversubscription = 2", f'[topology.custom]\nfile = "{name}"')


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_fat_tree_from_a_file_is_bit_identical(suffix: str, tmp_path: Path) -> None:
    (tmp_path / f"ft{suffix}").write_text(runner.export_topology(FAT_TREE, json=suffix == ".json"))
    built = manypath.run(FAT_TREE, base_dir=tmp_path)
    from_file = manypath.run(as_file(FAT_TREE, f"ft{suffix}"), base_dir=tmp_path)
    assert len(built.flows) > 20 and built.flows["completed"].sum() > 10
    for table in ("flows", "subflows", "queues"):
        pd.testing.assert_frame_equal(getattr(built, table), getattr(from_file, table))


def test_fat_tree_file_at_flow_level_is_identical(tmp_path: Path) -> None:
    long_lived = FAT_TREE.split("[[traffic]]")[0] + '[[traffic]]\npattern = "permutation"\ntransport = "mptcp"\nsize = "long_lived"\n'
    (tmp_path / "ft.toml").write_text(runner.export_topology(long_lived))
    built = manypath.run(long_lived, level="flow")
    from_file = manypath.run(as_file(long_lived, "ft.toml"), base_dir=tmp_path, level="flow")
    for table in ("flows", "queues"):
        pd.testing.assert_frame_equal(getattr(built, table), getattr(from_file, table))


def test_resolved_scenario_carries_the_topology(tmp_path: Path) -> None:
    (tmp_path / "ft.toml").write_text(runner.export_topology(FAT_TREE))
    res = manypath.run(as_file(FAT_TREE, "ft.toml"), base_dir=tmp_path)
    assert "file =" not in res.resolved_text and "[[topology.custom.nodes]]" in res.resolved_text
    again = manypath.run(res.resolved_text)
    pd.testing.assert_frame_equal(res.flows, again.flows)


@pytest.mark.parametrize("suffix", [".toml", ".json", ".graphml"])
def test_cli_exports_a_topology_in_the_format_of_its_suffix(suffix: str, tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(FAT_TREE)
    out = tmp_path / f"topo{suffix}"
    subprocess.run([sys.executable, "-m", "manypath", "topology", "export", str(scenario), "-o", str(out)], check=True)
    text = out.read_text()
    first = {".toml": 'tiers = ["host", "edge_agg", "agg_core"]',
             ".json": '"multigraph": true',
             ".graphml": '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'}[suffix]
    assert first in text and "edge0.0" in text
    built = manypath.run(FAT_TREE, base_dir=tmp_path)
    from_file = manypath.run(as_file(FAT_TREE, out.name), base_dir=tmp_path)
    for table in ("flows", "subflows", "queues"):
        pd.testing.assert_frame_equal(getattr(built, table), getattr(from_file, table))


def test_an_unknown_suffix_is_refused_naming_the_accepted_ones(tmp_path: Path) -> None:
    from manypath.topology_files import TopologyFileError, format_of

    with pytest.raises(TopologyFileError) as e:
        format_of(".xml")
    assert str(e.value) == (
        "cannot tell the format of a topology file with '.xml': write .toml (the custom "
        "format), .json (networkx node-link JSON) or .graphml (GraphML)"
    )
    scenario = tmp_path / "s.toml"
    scenario.write_text(FAT_TREE)
    res = subprocess.run([sys.executable, "-m", "manypath", "topology", "export", str(scenario),
                          "-o", str(tmp_path / "topo.xml")], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr == (
        f"error: --out {tmp_path / 'topo.xml'}: cannot tell the format of a topology file with "
        "'.xml': write .toml (the custom format), .json (networkx node-link JSON) or .graphml "
        "(GraphML)\n"
    )
    assert not (tmp_path / "topo.xml").exists()


# Two leaves with three links between them (two of 40 Gb/s, 5 µs, one of the tier's
# rate), a host on each leaf.
PARALLEL = """duration_ms = 2
[topology.custom]
tiers = ["host", "fabric"]
nodes = [
  { name = "h0", kind = "host" }, { name = "h1", kind = "host" },
  { name = "leaf0", kind = "switch" }, { name = "leaf1", kind = "switch" },
]
links = [
  { a = "h0", b = "leaf0" }, { a = "h1", b = "leaf1" },
  { a = "leaf0", b = "leaf1", tier = "fabric", count = 2, rate_gbps = 40, delay_us = 5 },
  { a = "leaf0", b = "leaf1", tier = "fabric" },
]
[[traffic]]
pattern = "permutation"
size = { fixed = 100000 }
"""


def test_networkx_reads_the_exported_graph_files() -> None:
    nx = pytest.importorskip("networkx")
    import io
    import json

    for fmt in ("graphml", "node-link"):
        text = runner.export_topology(PARALLEL, format=fmt)
        if fmt == "graphml":
            g = nx.read_graphml(io.BytesIO(text.encode()))
        else:
            g = nx.node_link_graph(json.loads(text), edges="links")
        assert (g.number_of_nodes(), g.number_of_edges()) == (4, 5), fmt
        assert g.is_multigraph() and not g.is_directed()
        assert dict(g.nodes(data="kind")) == {"h0": "host", "h1": "host", "leaf0": "switch", "leaf1": "switch"}
        between = [dict(d) for d in g.get_edge_data("leaf0", "leaf1").values()]
        own = {"tier": "fabric", "rate_gbps": 40.0, "delay_us": 5.0}
        assert between == [own, own, {"tier": "fabric"}], fmt
        assert g.get_edge_data("h0", "leaf0")[next(iter(g.get_edge_data("h0", "leaf0")))] == {"tier": "host"}


@pytest.mark.parametrize("fmt,suffix", [("graphml", ".graphml"), ("node-link", ".json")])
def test_parallel_links_from_a_graph_file_run_the_same(fmt: str, suffix: str, tmp_path: Path) -> None:
    (tmp_path / f"t{suffix}").write_text(runner.export_topology(PARALLEL, format=fmt))
    inline = manypath.run(PARALLEL)
    text = PARALLEL.split("[[traffic]]")[0].split("[topology.custom]")[0]
    from_file = manypath.run(text + f'[topology.custom]\nfile = "t{suffix}"\n[[traffic]]'
                             + PARALLEL.split("[[traffic]]")[1], base_dir=tmp_path)
    assert len(inline.queues) == 10
    for table in ("flows", "queues"):
        pd.testing.assert_frame_equal(getattr(inline, table), getattr(from_file, table))


def test_a_per_link_queue_is_refused_by_the_graph_formats() -> None:
    from manypath.topology_files import TopologyFileError

    text = PARALLEL.replace('{ a = "h1", b = "leaf1" }', '{ a = "h1", b = "leaf1", queue_b = { limit_packets = 50 } }')
    with pytest.raises(TopologyFileError) as e:
        runner.export_topology(text, format="graphml")
    assert str(e.value) == (
        "links[1] (h1–leaf1) has a queue of its own (queue_b), which GraphML cannot hold: "
        "write it as .toml"
    )


@pytest.mark.parametrize("level", ["packet", "flow"])
def test_dragonfly_runs_at_both_levels(level: str) -> None:
    res = manypath.run(SCENARIOS / "dragonfly-permutation.toml", level=level)
    flows = res.flows
    assert len(flows) == 72
    assert (flows["goodput_bps"] > 0).all(), flows["goodput_bps"].describe()
    q = res.queues
    # Every group's global links exist and some carry traffic; no port above its rate.
    glob = q[q["tier"] == "global"]
    assert len(glob) == 2 * 36
    assert (glob["tx_bytes"] > 0).sum() > 36
    assert (q["utilization"] <= 1.0 + 1e-9).all()


def test_dragonfly_has_the_same_ports_at_both_levels() -> None:
    cols = ["port", "node", "peer", "tier", "rate_bps"]
    packet = manypath.run(SCENARIOS / "dragonfly-permutation.toml").queues[cols]
    flow = manypath.run(SCENARIOS / "dragonfly-permutation.toml", level="flow").queues[cols]
    pd.testing.assert_frame_equal(packet, flow)


def test_two_plane_hosts_send_on_both_nics() -> None:
    q = manypath.run(SCENARIOS / "two-plane-mptcp.toml").queues
    nics = q[q["node_kind"] == "host"]
    assert len(nics) == 16
    # Each host's four subflows pick NICs by hash: both planes carry data from the hosts.
    plane = nics["peer"].str[0]
    per_plane = nics.groupby(plane)["tx_bytes"].sum()
    assert per_plane["a"] > 0.2 * per_plane.sum() and per_plane["b"] > 0.2 * per_plane.sum()
    fabric = q[q["tier"] == "fabric"]
    assert (fabric.groupby(fabric["node"].str[0])["tx_bytes"].sum() > 0).all()


def test_two_plane_connections_all_deliver_after_the_warm_up() -> None:
    # In the opening slow start some subflows lose a fast retransmission and wait for
    # a 200 ms timeout, longer than the run. Their connections' data-level windows fill
    # behind the data those subflows hold; the other subflows resend it (opportunistic
    # retransmission), so every connection delivers after the warm-up. Without that,
    # four of the eight connections delivered nothing from 5 ms on.
    flows = manypath.run(SCENARIOS / "two-plane-mptcp.toml").flows
    assert len(flows) == 8
    assert (flows["goodput_bps"] > 2e9).all(), flows["goodput_bps"].tolist()


def test_clos_example_runs_oversubscribed() -> None:
    res = manypath.run(SCENARIOS / "clos-2to1-websearch.toml", overrides={"duration_ms": 5})
    q = res.queues
    assert set(q["tier"]) == {"host", "tor_agg", "agg_spine"}
    assert set(q.loc[q["tier"] == "agg_spine", "rate_bps"]) == {20e9}
    # Each aggregation switch: 2 ToR ports, 1 spine port.
    aggs = q[q["node"].str.startswith("agg")]
    assert (aggs.groupby("node")["tier"].apply(lambda t: (t == "tor_agg").sum() == 2 and (t == "agg_spine").sum() == 1)).all()
    assert res.flows["completed"].sum() > 0


def test_graphml_rates_and_links_reach_the_network(tmp_path: Path) -> None:
    text = (
        "duration_ms = 2\n[topology.custom]\n"
        f'file = "{SCENARIOS / "topologies" / "leaf-spine.graphml"}"\n'
        '[[traffic]]\npattern = "permutation"\ntransport = "tcp"\nsize = "long_lived"\n'
    )
    q = manypath.run(text).queues
    assert set(q.loc[q["tier"] == "fabric", "rate_bps"]) == {40e9}
    assert set(q.loc[q["tier"] == "host", "rate_bps"]) == {10e9}
    assert len(q) == 2 * (4 + 4)


def test_a_links_own_rate_delay_and_queue(tmp_path: Path) -> None:
    text = """\
duration_ms = 5
[[traffic]]
pattern = "incast"
transport = "tcp"
size = { fixed = 500000 }
[topology.custom]
tiers = ["host", "fabric"]
nodes = [
  { name = "r", kind = "host" }, { name = "a", kind = "host" }, { name = "b", kind = "host" },
  { name = "s0", kind = "switch" }, { name = "s1", kind = "switch" },
]
links = [
  { a = "r", b = "s0", queue_b = { limit_packets = 8 } },
  { a = "a", b = "s1" }, { a = "b", b = "s1" },
  { a = "s1", b = "s0", tier = "fabric", count = 2, rate_gbps = 40, delay_us = 3 },
]
"""
    res = manypath.run(text)
    q = res.queues.set_index(["node", "peer"])
    assert q.loc[("s0", "r"), "max_packets"] <= 8 and q.loc[("s0", "r"), "drops"] > 0
    assert q.loc[("r", "s0"), "max_packets"] > 8 or q.loc[("r", "s0"), "drops"] == 0
    parallel = res.queues[(res.queues["node"] == "s1") & (res.queues["peer"] == "s0")]
    assert len(parallel) == 2 and set(parallel["rate_bps"]) == {40e9}
    assert res.flows["completed"].all()
