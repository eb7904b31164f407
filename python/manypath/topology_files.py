"""A topology in the custom format (``tiers``, ``nodes``, ``links``, as the simulator
exports it) written as a graph file the simulator reads back: GraphML, or networkx's
node-link JSON. Nodes carry ``kind`` and ``tier``, edges ``tier``, ``rate_gbps`` and
``delay_us``; parallel links are parallel edges. Nodes and edges keep the export's
order, which numbers hosts and ports, so the file builds the same network."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

#: The formats ``manypath topology export -o FILE`` writes, by FILE's suffix.
SUFFIXES = {".toml": "toml", ".json": "node-link", ".graphml": "graphml"}


class TopologyFileError(ValueError):
    """A topology that a graph file cannot hold, or a file name of no known format."""


def format_of(suffix: str) -> str:
    """The format of an output file by its suffix; an unknown suffix is refused, naming
    the accepted ones."""
    fmt = SUFFIXES.get(suffix.lower())
    if fmt is None:
        given = repr(suffix) if suffix else "no suffix"
        raise TopologyFileError(
            f"cannot tell the format of a topology file with {given}: write .toml (the custom "
            "format), .json (networkx node-link JSON) or .graphml (GraphML)")
    return fmt


def _check(spec: dict[str, Any], what: str) -> None:
    # A graph file has no tier list: tiers count from `host` in the order nodes, then
    # links, first name them. That order must be the topology's, or the tiers (and so
    # each switch's tier) would differ.
    tiers: list[str] = spec.get("tiers", [])
    seen = ["host"]
    for item in [*spec["nodes"], *spec["links"]]:
        tier = item.get("tier")
        if tier is not None and tier not in seen:
            seen.append(tier)
    if tiers and seen != tiers:
        raise TopologyFileError(
            f"{what} lists no tiers, and this topology's nodes and links name its tiers in "
            f"another order ({', '.join(seen)}) than the topology's ({', '.join(tiers)}): "
            "write it as .toml")
    for i, link in enumerate(spec["links"]):
        for end in ("queue_a", "queue_b"):
            if end in link:
                raise TopologyFileError(
                    f"links[{i}] ({link['a']}–{link['b']}) has a queue of its own ({end}), which "
                    f"{what} cannot hold: write it as .toml")


def _edges(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    edges = []
    for link in spec["links"]:
        attrs = {k: link[k] for k in ("tier", "rate_gbps", "delay_us") if k in link}
        edges += [(link["a"], link["b"], attrs)] * int(link.get("count", 1))
    return edges


def graphml(spec: dict[str, Any]) -> str:
    """``spec`` as GraphML: an undirected graph with ``<key>``s ``kind`` and ``tier``
    (nodes), ``tier``, ``rate_gbps`` and ``delay_us`` (edges)."""
    _check(spec, "GraphML")
    ns = "http://graphml.graphdrawing.org/xmlns"
    ET.register_namespace("", ns)
    root = ET.Element(f"{{{ns}}}graphml")
    keys = [("n_kind", "node", "kind", "string"), ("n_tier", "node", "tier", "string"),
            ("e_tier", "edge", "tier", "string"), ("e_rate", "edge", "rate_gbps", "double"),
            ("e_delay", "edge", "delay_us", "double")]
    ids = {}
    for key_id, owner, name, kind in keys:
        ET.SubElement(root, f"{{{ns}}}key", {"id": key_id, "for": owner, "attr.name": name,
                                            "attr.type": kind})
        ids[(owner, name)] = key_id
    graph = ET.SubElement(root, f"{{{ns}}}graph", {"id": "topology", "edgedefault": "undirected"})

    def data(parent: ET.Element, owner: str, attrs: dict[str, Any]) -> None:
        for name, value in attrs.items():
            d = ET.SubElement(parent, f"{{{ns}}}data", {"key": ids[(owner, name)]})
            d.text = repr(float(value)) if isinstance(value, (int, float)) else str(value)

    for node in spec["nodes"]:
        el = ET.SubElement(graph, f"{{{ns}}}node", {"id": node["name"]})
        data(el, "node", {k: node[k] for k in ("kind", "tier") if k in node})
    for i, (a, b, attrs) in enumerate(_edges(spec)):
        el = ET.SubElement(graph, f"{{{ns}}}edge", {"id": f"e{i}", "source": a, "target": b})
        data(el, "edge", attrs)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def node_link(spec: dict[str, Any]) -> str:
    """``spec`` as networkx's node-link JSON of an undirected multigraph (what
    ``networkx.node_link_data`` writes, edges under ``links`` with their ``key``)."""
    _check(spec, "a node-link JSON file")
    keys: dict[frozenset[str], int] = {}
    links = []
    for a, b, attrs in _edges(spec):
        pair = frozenset((a, b))
        keys[pair] = keys.get(pair, -1) + 1
        links.append({"source": a, "target": b, "key": keys[pair], **attrs})
    doc = {
        "directed": False,
        "multigraph": True,
        "graph": {},
        "nodes": [{"id": n["name"], **{k: n[k] for k in ("kind", "tier") if k in n}}
                  for n in spec["nodes"]],
        "links": links,
    }
    return json.dumps(doc, indent=1) + "\n"


def write(spec_json: str, fmt: str) -> str:
    """The custom format's JSON (``_core.export_topology(..., json=True)``) as ``fmt``:
    ``graphml`` or ``node-link``."""
    spec = json.loads(spec_json)
    if fmt == "graphml":
        return graphml(spec)
    if fmt == "node-link":
        return node_link(spec)
    raise ValueError(f"unknown graph format {fmt!r}: expected 'graphml' or 'node-link'")
