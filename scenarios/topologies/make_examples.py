"""Writes the example topology files beside this script (run it after changing them):

- ``clos-2to1.toml``: a 3-tier Clos whose aggregation–spine layer is 2:1 oversubscribed.
- ``two-plane.toml``: two independent leaf-spine planes; every host has one NIC in each.
- ``dragonfly.toml``: a balanced dragonfly (Kim et al., ISCA 2008): p = 2 hosts and
  h = 2 global links per router, a = 4 routers per group, g = a·h + 1 = 9 groups, every
  group a full mesh, every pair of groups joined by one global link.
- ``leaf-spine.graphml``: a small leaf-spine as GraphML, the way graph tools export one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

HERE = Path(__file__).parent


def toml_doc(tiers: list[str], nodes: list[tuple[str, str]], links: list[tuple[str, str, str, int]]) -> str:
    """Nodes as (name, kind), links as (a, b, tier, count)."""
    out = ["tiers = [" + ", ".join(f'"{t}"' for t in tiers) + "]", ""]
    for name, kind in nodes:
        out += ["[[nodes]]", f'name = "{name}"', f'kind = "{kind}"', ""]
    for a, b, tier, count in links:
        out += ["[[links]]", f'a = "{a}"', f'b = "{b}"', f'tier = "{tier}"']
        if count > 1:
            out.append(f"count = {count}")
        out.append("")
    return "\n".join(out)


def clos() -> str:
    """4 pods of 2 ToRs and 2 aggregation switches, 4 hosts per ToR, 2 spines. Every ToR
    has one link to each aggregation switch of its pod (2 up for 4 hosts: its uplinks at
    twice the host rate make it 1:1); each aggregation switch has 2 ToR links and one
    spine link, so at equal tor_agg and agg_spine rates the spine layer is 2:1."""
    nodes: list[tuple[str, str]] = []
    links: list[tuple[str, str, str, int]] = []
    pods, tors, aggs, hosts_per_tor, spines = 4, 2, 2, 4, 2
    for p in range(pods):
        for t in range(tors):
            for h in range(hosts_per_tor):
                name = f"h{p}.{t}.{h}"
                nodes.append((name, "host"))
                links.append((name, f"tor{p}.{t}", "host", 1))
    for p in range(pods):
        nodes += [(f"tor{p}.{t}", "switch") for t in range(tors)]
        nodes += [(f"agg{p}.{a}", "switch") for a in range(aggs)]
        for t in range(tors):
            for a in range(aggs):
                links.append((f"tor{p}.{t}", f"agg{p}.{a}", "tor_agg", 1))
    nodes += [(f"spine{s}", "switch") for s in range(spines)]
    for p in range(pods):
        for a in range(aggs):
            links.append((f"agg{p}.{a}", f"spine{a}", "agg_spine", 1))
    return toml_doc(["host", "tor_agg", "agg_spine"], nodes, links)


def two_plane() -> str:
    """8 hosts; per plane 2 leaves of 4 hosts and 2 spines."""
    nodes: list[tuple[str, str]] = [(f"h{i}", "host") for i in range(8)]
    links: list[tuple[str, str, str, int]] = []
    for plane in "ab":
        for i in range(8):
            links.append((f"h{i}", f"{plane}-leaf{i // 4}", "host", 1))
    for plane in "ab":
        nodes += [(f"{plane}-leaf{l}", "switch") for l in range(2)]
        nodes += [(f"{plane}-spine{s}", "switch") for s in range(2)]
        for l in range(2):
            for s in range(2):
                links.append((f"{plane}-leaf{l}", f"{plane}-spine{s}", "fabric", 1))
    return toml_doc(["host", "fabric"], nodes, links)


def dragonfly(p: int = 2, a: int = 4, h: int = 2) -> str:
    g = a * h + 1
    nodes: list[tuple[str, str]] = []
    links: list[tuple[str, str, str, int]] = []
    router = lambda grp, r: f"g{grp}.r{r}"  # noqa: E731
    for grp in range(g):
        for r in range(a):
            for k in range(p):
                name = f"g{grp}.r{r}.h{k}"
                nodes.append((name, "host"))
                links.append((name, router(grp, r), "host", 1))
    for grp in range(g):
        nodes += [(router(grp, r), "switch") for r in range(a)]
        for r in range(a):
            for r2 in range(r + 1, a):
                links.append((router(grp, r), router(grp, r2), "local", 1))
    # Group i's global port towards group j (of its a·h ports): j − 1 if j > i, else j.
    port = lambda i, j: j - 1 if j > i else j  # noqa: E731
    for i in range(g):
        for j in range(i + 1, g):
            links.append((router(i, port(i, j) // h), router(j, port(j, i) // h), "global", 1))
    return toml_doc(["host", "local", "global"], nodes, links)


def leaf_spine_graphml(leaves: int = 2, spines: int = 2, hosts_per_leaf: int = 2) -> str:
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="kind" for="node" attr.name="kind" attr.type="string"/>',
        '  <key id="tier" for="edge" attr.name="tier" attr.type="string"/>',
        '  <key id="rate" for="edge" attr.name="rate_gbps" attr.type="double"/>',
        '  <graph edgedefault="undirected">',
    ]

    def node(name: str, kind: str) -> None:
        out.append(f'    <node id="{name}"><data key="kind">{kind}</data></node>')

    def edge(a: str, b: str, tier: str, rate: Optional[float] = None) -> None:
        data = f'<data key="tier">{tier}</data>'
        if rate is not None:
            data += f'<data key="rate">{rate:g}</data>'
        out.append(f'    <edge source="{a}" target="{b}">{data}</edge>')

    for i in range(leaves * hosts_per_leaf):
        node(f"h{i}", "host")
    for l in range(leaves):
        node(f"leaf{l}", "switch")
    for s in range(spines):
        node(f"spine{s}", "switch")
    for i in range(leaves * hosts_per_leaf):
        edge(f"h{i}", f"leaf{i // hosts_per_leaf}", "host")
    for l in range(leaves):
        for s in range(spines):
            edge(f"leaf{l}", f"spine{s}", "fabric", 40)
    out += ["  </graph>", "</graphml>", ""]
    return "\n".join(out)


def main() -> None:
    header = "# Written by make_examples.py; see its docstring.\n"
    (HERE / "clos-2to1.toml").write_text(header + clos())
    (HERE / "two-plane.toml").write_text(header + two_plane())
    (HERE / "dragonfly.toml").write_text(header + dragonfly())
    (HERE / "leaf-spine.graphml").write_text(leaf_spine_graphml())


if __name__ == "__main__":
    main()
