"""The report's fabric drawing: an SVG of the fabric from the queue table, links
coloured by utilisation, naming the hottest link; in a run's HTML report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import manypath
from manypath import report_html
from manypath.fabric_svg import fabric_svg, hottest, layers, links


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
