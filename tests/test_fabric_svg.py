"""The report's fabric drawing: an SVG of the fabric from the queue table, links
coloured by utilisation, naming the hottest link; in a run's HTML report."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

import pandas as pd
import pytest

import manypath
from manypath import report_html
from manypath.fabric_svg import (FONT, MIN_FONT, fabric_svg, hottest, label_box, layer_labels, layers, links,
                                 overlaps)


def table(rows: list[tuple[str, str, str, float, int, int]]) -> pd.DataFrame:
    """Ports as (node, kind, peer, utilisation, drops, marks)."""
    return pd.DataFrame(rows, columns=["node", "node_kind", "peer", "utilization", "drops", "ecn_marks"])


# Two hosts under two leaves joined by two spines; leaf1 → spine1 is the hot link.
PORTS = table([
    ("h0", "host", "leaf0", 0.5, 0, 0), ("h1", "host", "leaf1", 0.1, 0, 0),
    ("leaf0", "switch", "h0", 0.1, 0, 0), ("leaf0", "switch", "spine0", 0.2, 0, 0),
    ("leaf0", "switch", "spine1", 0.3, 0, 0), ("leaf1", "switch", "h1", 0.4, 0, 0),
    ("leaf1", "switch", "spine0", 0.2, 0, 0), ("leaf1", "switch", "spine1", 0.97, 12, 40),
    ("spine0", "switch", "leaf0", 0.1, 0, 0), ("spine0", "switch", "leaf1", 0.1, 0, 0),
    ("spine1", "switch", "leaf0", 0.1, 3, 0), ("spine1", "switch", "leaf1", 0.2, 0, 0),
])


def test_layers_go_up_from_the_hosts() -> None:
    assert layers(PORTS) == {"h0": 0, "h1": 0, "leaf0": 1, "leaf1": 1, "spine0": 2, "spine1": 2}


def test_links_pair_both_directions_and_name_the_hottest() -> None:
    found = links(PORTS)
    assert len(found) == 6
    hot = hottest(found)
    assert hot is not None and {hot.a, hot.b} == {"leaf1", "spine1"}
    assert (hot.utilization, hot.drops, hot.marks) == (0.97, 12, 40)
    svg = fabric_svg(PORTS)
    assert svg is not None and svg.startswith("<svg")
    assert "hottest link: leaf1 — spine1, utilisation 97%, 12 drops, 40 ECN marks" in svg
    assert svg.count("<line") == 6 and svg.count("<circle") == 6


def test_a_runs_report_draws_its_fabric(tmp_path: Path) -> None:
    text = """\
duration_ms = 5
[topology.leaf_spine]
leaves = 2
spines = 2
hosts_per_leaf = 4
[network.queue]
limit_packets = 30
[[traffic]]
pattern = "permutation"
transport = "tcp"
size = "long_lived"
"""
    res = manypath.run(text)
    res.to_parquet(tmp_path / "run")
    page = report_html.render(tmp_path / "run")
    assert "<h2>Fabric</h2>" in page and '<svg xmlns="http://www.w3.org/2000/svg" class="fabric"' in page
    hot = hottest(links(res.queues))
    assert hot is not None and f"hottest link: {hot.name}" in page
    q = res.queues
    assert hot.utilization == q["utilization"].max()


def _labels(svg: str) -> list[tuple[float, float, float, str]]:
    """Every label of a drawing: x, y, font size and text."""
    out = []
    for m in re.finditer(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="middle" fill="#\w+"'
                         r'(?: font-size="([\d.]+)")?>([^<]+)</text>', svg):
        out.append((float(m[1]), float(m[2]), float(m[3] or FONT), html.unescape(m[4])))
    return out


def test_dense_layers_shrink_then_thin_out_their_labels() -> None:
    # "edge0.0" is 7 characters: 43.4 px at 10 px (0.62 em each); a label may take 90% of
    # the spacing. 60 px apart it fits; 40 px apart it shrinks to fit 36 px; 26 px apart
    # even 7 px (30.4 px) does not fit 23.4 px: every second node is labelled.
    assert layer_labels(["edge0.0"] * 16, 60.0) == (10.0, 1)
    size, every = layer_labels(["edge0.0"] * 26, 40.0)
    assert size == pytest.approx(36.0 / (7 * 0.62)) and every == 1
    assert layer_labels(["edge0.0"] * 40, 26.0) == (MIN_FONT, 2)
    assert layer_labels(["edge10.10"] * 200, 5.2) == (MIN_FONT, math.ceil(9 * 0.62 * MIN_FONT / (0.9 * 5.2)))


def test_labels_of_a_k8_fat_tree_do_not_overlap() -> None:
    # A k = 8 fat tree's layers: 128 hosts, 32 edge, 32 aggregation and 16 core switches.
    rows = []
    for p in range(8):
        for e in range(4):
            rows += [(f"h{p}.{e}.{h}", "host", f"edge{p}.{e}", 0.9, 0, 0) for h in range(4)]
            rows += [(f"edge{p}.{e}", "switch", f"h{p}.{e}.{h}", 0.9, 0, 0) for h in range(4)]
            rows += [(f"edge{p}.{e}", "switch", f"agg{p}.{a}", 0.5 + 0.01 * a, 1, 2) for a in range(4)]
            rows += [(f"agg{p}.{a}", "switch", f"edge{p}.{e}", 0.4, 0, 0) for a in range(4)]
        for a in range(4):
            rows += [(f"agg{p}.{a}", "switch", f"core{4 * a + c}", 0.99, 3, 0) for c in range(4)]
            rows += [(f"core{4 * a + c}", "switch", f"agg{p}.{a}", 0.98, 0, 0) for c in range(4)]
    svg = fabric_svg(table(rows))
    assert svg is not None
    labels = _labels(svg)
    names = {t for _, _, _, t in labels}
    # Some switches of every layer are named, the hottest links labelled, hosts not.
    assert any(t.startswith("edge") for t in names) and any(t.startswith("agg") for t in names)
    assert any(t.startswith("core") for t in names) and any(t.endswith("%") or " d" in t for t in names)
    assert not any(t.startswith("h") for t in names)
    # The dense layers (32 switches in 1,040 px) are shrunk or thinned out.
    assert len([t for t in names if t.startswith("edge")]) < 32 or any(s < FONT for *_, s, _ in labels)
    boxes = [label_box(t, x, y, s) for x, y, s, t in labels]
    clashes = [(labels[i][3], labels[j][3]) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
               if overlaps(boxes[i], boxes[j])]
    assert clashes == []
    # Each label stays wider apart than its text at 0.55 em a character, whatever the
    # estimate: neighbours on a line are at least their half-widths apart.
    by_line: dict[float, list[tuple[float, float, str]]] = {}
    for x, y, s, t in labels:
        by_line.setdefault(y, []).append((x, s, t))
    for line in by_line.values():
        line.sort()
        for (x1, s1, t1), (x2, s2, t2) in zip(line, line[1:]):
            assert x2 - x1 >= 0.55 * (len(t1) * s1 + len(t2) * s2) / 2, (t1, t2)
