"""Malformed custom topologies (`[topology.custom]`, inline or from a file) are refused
with a ValueError naming the element (node or link, by index and name) and what was
expected, by `manypath.validate` and by `manypath.run` before it simulates anything."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import manypath
from refusals import assert_refused

# Two hosts on one switch: the valid base each case breaks once.
NODES = """\
[[topology.custom.nodes]]
name = "h0"
kind = "host"

[[topology.custom.nodes]]
name = "h1"
kind = "host"

[[topology.custom.nodes]]
name = "s0"
kind = "switch"
"""

LINKS = """\
[[topology.custom.links]]
a = "h0"
b = "s0"

[[topology.custom.links]]
a = "h1"
b = "s0"
"""

TRAFFIC = """\
duration_ms = 1

[[traffic]]
pattern = "pair"
src = 0
dst = 1
size = { fixed = 10000 }

"""

BASE = TRAFFIC + NODES + "\n" + LINKS

# A scenario whose topology is the file `topo` (relative to its directory).
def from_file(ext: str) -> str:
    return TRAFFIC + f'[topology.custom]\nfile = "topo{ext}"\n'

GRAPHML = """\
<?xml version="1.0"?>
<graphml>
  <key id="k" for="node" attr.name="kind"/>
  <graph>
    <node id="h0"><data key="k">host</data></node>
    <node id="h1"><data key="k">host</data></node>
    <node id="s0"><data key="k">switch</data></node>
    <edge source="h0" target="s0"/>
    <edge source="h1" target="s0"/>
  </graph>
</graphml>
"""

NODE_LINK = """\
{"directed": false, "multigraph": false, "graph": {},
 "nodes": [{"id": "h0", "kind": "host"}, {"id": "h1", "kind": "host"}, {"id": "s0", "kind": "switch"}],
 "links": [{"source": "h0", "target": "s0"}, {"source": "h1", "target": "s0"}]}
"""


@dataclass(frozen=True)
class Case:
    id: str
    toml: str
    # Every one of these must appear in the error message; the first is the path.
    expect: tuple[str, ...]
    # Files to write beside the scenario: name → text.
    files: tuple[tuple[str, str], ...] = ()


CASES = [
    Case(
        "disconnected-host",
        BASE + '\n[[topology.custom.nodes]]\nname = "h2"\nkind = "host"\n',
        ("topology.custom.nodes[3]", '"h2"', "no link"),
    ),
    Case(
        "host-in-another-component",
        BASE
        + '\n[[topology.custom.nodes]]\nname = "s1"\nkind = "switch"\n'
        + '\n[[topology.custom.nodes]]\nname = "h2"\nkind = "host"\n'
        + '\n[[topology.custom.links]]\na = "h2"\nb = "s1"\n',
        ("topology.custom.nodes[4]", '"h2" cannot reach host "h0"', "disconnected"),
    ),
    Case(
        "link-to-unknown-node",
        BASE + '\n[[topology.custom.links]]\na = "s0"\nb = "s9"\n',
        ("topology.custom.links[2].b", 'unknown node "s9"', "name of a node"),
    ),
    Case(
        "duplicate-node-name",
        BASE + '\n[[topology.custom.nodes]]\nname = "s0"\nkind = "switch"\n',
        ("topology.custom.nodes[3].name", 'duplicate node name "s0"', "nodes[2]"),
    ),
    Case(
        "zero-rate",
        BASE.replace('a = "h1"', 'rate_gbps = 0\na = "h1"'),
        ("topology.custom.links[1].rate_gbps", "must be a rate between", "got 0"),
    ),
    Case(
        "negative-rate",
        BASE.replace('a = "h1"', 'rate_gbps = -40\na = "h1"'),
        ("topology.custom.links[1].rate_gbps", "got -40"),
    ),
    Case(
        "negative-delay",
        BASE.replace('a = "h1"', 'delay_us = -1\na = "h1"'),
        ("topology.custom.links[1].delay_us", "-1"),
    ),
    Case(
        "zero-parallel-links",
        BASE.replace('a = "h1"', 'count = 0\na = "h1"'),
        ("topology.custom.links[1].count", "at least 1"),
    ),
    Case(
        "link-joins-two-hosts",
        BASE + '\n[[topology.custom.links]]\na = "h0"\nb = "h1"\n',
        ("topology.custom.links[2]", "joins two hosts", "through switches"),
    ),
    Case(
        "unknown-tier",
        TRAFFIC + '[topology.custom]\ntiers = ["host", "fabric"]\n' + NODES + "\n" + LINKS.replace('a = "h1"', 'tier = "spine"\na = "h1"'),
        ("topology.custom.links[1].tier", 'unknown tier "spine"', "host, fabric"),
    ),
    Case(
        "host-link-not-in-host-tier",
        BASE.replace('a = "h1"', 'tier = "fabric"\na = "h1"'),
        ("topology.custom.links[1].tier", "tier 0", '"host"'),
    ),
    Case(
        "per-link-red",
        BASE.replace('a = "h1"', 'queue_b = { red = { min_packets = 5, max_packets = 15 } }\na = "h1"'),
        ("topology.custom.links[1].queue_b.red", "per tier"),
    ),
    Case(
        "file-and-inline",
        TRAFFIC + '[topology.custom]\nfile = "topo.toml"\n' + NODES,
        ("topology.custom.file", "not both"),
    ),
    Case(
        "missing-file",
        from_file(".toml"),
        ("topology.custom.file", "cannot read the topology file", "topo.toml"),
    ),
    Case(
        "unknown-file-format",
        from_file(".csv"),
        ("topology.custom.file", "expected a .toml, .json or .graphml file"),
        (("topo.csv", "a,b\n"),),
    ),
    Case(
        "malformed-graphml",
        from_file(".graphml"),
        ("topology.custom.file (topo.graphml): line 5", "</nod> closes <node>"),
        (("topo.graphml", GRAPHML.replace("</data></node>\n    <node id=\"h1\"", "</data></nod>\n    <node id=\"h1\"")),),
    ),
    Case(
        "graphml-node-without-kind",
        from_file(".graphml"),
        ("topology.custom.file (topo.graphml): nodes[2] (\"s0\")", "no `kind`"),
        (("topo.graphml", GRAPHML.replace('<data key="k">switch</data>', "")),),
    ),
    Case(
        "malformed-json",
        from_file(".json"),
        ("topology.custom.file (topo.json): line 2", "not valid JSON"),
        (("topo.json", NODE_LINK.replace('"kind": "switch"}]', '"kind": "switch"]')),),
    ),
    Case(
        "node-link-unknown-kind",
        from_file(".json"),
        ("topology.custom.file (topo.json): nodes[0] (\"h0\").kind", '"router"'),
        (("topo.json", NODE_LINK.replace('"kind": "host"}, {"id": "h1"', '"kind": "router"}, {"id": "h1"')),),
    ),
    Case(
        "node-link-bad-rate",
        from_file(".json"),
        ("topology.custom.file (topo.json): links[1].rate_gbps", "got 0"),
        (("topo.json", NODE_LINK.replace('"target": "s0"}]', '"target": "s0", "rate_gbps": 0}]')),),
    ),
    Case(
        "toml-file-unknown-node",
        from_file(".toml"),
        ("topology.custom.file (topo.toml): links[1].b", 'unknown node "s1"'),
        (
            (
                "topo.toml",
                (NODES + "\n" + LINKS).replace("topology.custom.", "").replace('a = "h1"\nb = "s0"', 'a = "h1"\nb = "s1"'),
            ),
        ),
    ),
    Case(
        "toml-file-unknown-field",
        from_file(".toml"),
        ("topology.custom.file (topo.toml): nodes[0]", "speed"),
        (("topo.toml", (NODES + "\n" + LINKS).replace("topology.custom.", "").replace('kind = "host"', 'kind = "host"\nspeed = 1', 1)),),
    ),
]

Entry = Callable[..., object]


@pytest.mark.parametrize("entry", [manypath.validate, manypath.run], ids=["validate", "run"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_topology_names_the_element(case: Case, entry: Entry, tmp_path: Path) -> None:
    for name, text in case.files:
        (tmp_path / name).write_text(text)
    assert_refused(entry, case.toml, case.expect, tmp_path)


@pytest.mark.parametrize(
    "files",
    [(), (("topo.graphml", GRAPHML),), (("topo.json", NODE_LINK),), (("topo.toml", (NODES + "\n" + LINKS).replace("topology.custom.", "")),)],
    ids=["inline", "graphml", "node-link", "toml-file"],
)
def test_the_valid_bases_are_valid(files: tuple[tuple[str, str], ...], tmp_path: Path) -> None:
    # Otherwise a case could fail for a reason other than the element it breaks.
    for name, text in files:
        (tmp_path / name).write_text(text)
    text = BASE if not files else from_file(Path(files[0][0]).suffix)
    manypath.validate(text, base_dir=tmp_path)
    res = manypath.run(text, base_dir=tmp_path)
    assert res.flows["completed"].all()
