"""The fabric of a run drawn as a static SVG: nodes layered by their distance from the
hosts (hosts at the bottom, then edge switches, and so on up), links coloured and
widened by utilisation and annotated with their drops and ECN marks, so hot spots show
at a glance. Every link carries a tooltip (its ends, utilisation, drops, marks) that a
browser shows on hover. Built from the queue table alone, so it works for any topology
and either level."""

from __future__ import annotations

import html
import math
from collections import deque
from dataclasses import dataclass

import pandas as pd

#: Fabrics with more nodes than this are not drawn (the picture would be a blur).
MAX_NODES = 1500
#: Links labelled with their numbers: the hottest ones, and any with drops or marks up
#: to this many.
LABELLED_LINKS = 6

_WIDTH = 1100.0
_LAYER_GAP = 110.0
_MARGIN = 30.0
#: Label font sizes (px): the default, and the smallest a dense layer's labels shrink to
#: before every other one (or fewer) is left out.
FONT = 10.0
MIN_FONT = 7.0
#: A label's width per character, in ems: wide enough for digits and lower-case letters
#: of a sans-serif face, so labels estimated apart do not touch.
_CHAR_EM = 0.62

Box = tuple[float, float, float, float]


def label_box(text: str, x: float, y: float, size: float) -> Box:
    """The box (left, top, right, bottom) a label of font ``size`` takes when drawn
    centred on ``x`` with its baseline at ``y``, by an estimate that errs wide."""
    half = len(text) * _CHAR_EM * size / 2
    return (x - half, y - size, x + half, y + 0.3 * size)


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def layer_labels(names: list[str], step: float) -> tuple[float, int]:
    """How a layer of nodes ``step`` apart is labelled: the font size, shrunk from
    ``FONT`` so the longest name fits the spacing, and every how many nodes gets its
    label (1: all; more when even ``MIN_FONT`` does not fit)."""
    room = 0.9 * step
    longest = max((len(n) for n in names), default=1) * _CHAR_EM
    size = min(FONT, room / longest)
    if size >= MIN_FONT:
        return size, 1
    return MIN_FONT, math.ceil(longest * MIN_FONT / room)


@dataclass(frozen=True)
class Link:
    """One node pair's links (parallel links together): their busiest direction's
    utilisation, and drops and marks summed over both directions."""

    a: str
    b: str
    count: int
    utilization: float
    drops: int
    marks: int

    @property
    def name(self) -> str:
        return f"{self.a} — {self.b}"


def links(queues: pd.DataFrame) -> list[Link]:
    """The links of a queue table (one row per port), one per node pair."""
    q = queues.assign(
        pair=[tuple(sorted(p)) for p in zip(queues["node"].astype(str), queues["peer"].astype(str))]
    )
    out = []
    for (a, b), g in q.groupby("pair", sort=False):
        out.append(Link(a, b, count=len(g) // 2 or 1,
                        utilization=float(g["utilization"].fillna(0).max()),
                        drops=int(g["drops"].fillna(0).sum()),
                        marks=int(g["ecn_marks"].fillna(0).sum()) if "ecn_marks" in g else 0))
    return out


def hottest(found: list[Link]) -> Link | None:
    """The link with the highest utilisation; drops, then marks, break ties."""
    return max(found, key=lambda l: (l.utilization, l.drops, l.marks), default=None)


def layers(queues: pd.DataFrame) -> dict[str, int]:
    """Each node's layer: its hop distance from the nearest host (hosts 0)."""
    kinds = dict(zip(queues["node"].astype(str), queues["node_kind"].astype(str)))
    nbrs: dict[str, list[str]] = {}
    for a, b in zip(queues["node"].astype(str), queues["peer"].astype(str)):
        nbrs.setdefault(a, []).append(b)
    layer = {n: 0 for n, k in kinds.items() if k == "host"}
    todo = deque(layer)
    while todo:
        n = todo.popleft()
        for m in nbrs.get(n, []):
            if m not in layer:
                layer[m] = layer[n] + 1
                todo.append(m)
    for n in kinds:  # switches no host reaches
        layer.setdefault(n, max(layer.values(), default=0) + 1)
    return layer


def _colour(u: float) -> str:
    """Green (idle) through yellow to red (saturated)."""
    u = min(max(u, 0.0), 1.0)
    if u < 0.5:
        r, g = int(60 + 390 * u), 170
    else:
        r, g = 255, int(170 - 300 * (u - 0.5))
    return f"rgb({min(r, 255)},{max(g, 20)},60)"


def fabric_svg(queues: pd.DataFrame) -> str | None:
    """The fabric as an SVG document, or ``None`` if the table has no ports or too many
    nodes to draw."""
    if not len(queues) or not {"node", "peer", "node_kind", "utilization", "drops"} <= set(queues.columns):
        return None
    layer = layers(queues)
    if len(layer) > MAX_NODES:
        return None
    rows: dict[int, list[str]] = {}
    for n, l in layer.items():
        rows.setdefault(l, []).append(n)
    top = max(rows)
    height = 2 * _MARGIN + top * _LAYER_GAP + 40
    pos: dict[str, tuple[float, float]] = {}
    for l, names in rows.items():
        step = (_WIDTH - 2 * _MARGIN) / len(names)
        for i, n in enumerate(names):
            pos[n] = (_MARGIN + step * (i + 0.5), _MARGIN + (top - l) * _LAYER_GAP)
    found = links(queues)
    hot = hottest(found)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="fabric" viewBox="0 0 {_WIDTH:.0f} {height:.0f}" '
           f'width="{_WIDTH:.0f}" height="{height:.0f}" font-family="sans-serif" font-size="{FONT:g}">']
    for link in sorted(found, key=lambda l: l.utilization):
        (x1, y1), (x2, y2) = pos[link.a], pos[link.b]
        tip = (f"{link.name}{f' (×{link.count})' if link.count > 1 else ''}: utilisation "
               f"{link.utilization:.0%}, {link.drops} drops, {link.marks} ECN marks")
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="{_colour(link.utilization)}" stroke-width="{0.6 + 3.4 * min(link.utilization, 1):.2f}">'
                   f"<title>{html.escape(tip)}</title></line>")
    # Labels never overlap: the hottest links' first, each left out if it would cover one
    # placed before it; then the switches', shrunk or thinned out where a layer is dense.
    placed: list[Box] = []
    flagged = sorted(found, key=lambda l: (l.utilization, l.drops, l.marks), reverse=True)[:LABELLED_LINKS]
    for link in flagged:
        if link.utilization <= 0 and link.drops == 0 and link.marks == 0:
            continue
        (x1, y1), (x2, y2) = pos[link.a], pos[link.b]
        label = f"{link.utilization:.0%}" + (f" d{link.drops}" if link.drops else "") + (
            f" m{link.marks}" if link.marks else "")
        x, y = (x1 + x2) / 2, (y1 + y2) / 2 - 3
        box = label_box(label, x, y, FONT)
        if any(overlaps(box, b) for b in placed):
            continue
        placed.append(box)
        out.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" fill="#222">{html.escape(label)}</text>')
    radius = {True: 3.0, False: 5.0}
    for n, (x, y) in pos.items():
        host = layer[n] == 0
        shape = "#555" if host else "#1f4e8c"
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius[host]}" fill="{shape}">'
                   f"<title>{html.escape(n)}</title></circle>")
    for l, names in sorted(rows.items()):
        if l == 0:  # hosts: their names are in their tooltips
            continue
        size, every = layer_labels(names, (_WIDTH - 2 * _MARGIN) / len(names))
        for i, n in enumerate(names):
            x, y = pos[n][0], pos[n][1] - 8
            box = label_box(n, x, y, size)
            if i % every or any(overlaps(box, b) for b in placed):
                continue
            placed.append(box)
            font = "" if size == FONT else f' font-size="{size:.1f}"'
            out.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" fill="#333"{font}>'
                       f"{html.escape(n)}</text>")
    if hot is not None:
        out.append(f'<text x="{_MARGIN}" y="{height - 10:.0f}" font-size="12" fill="#222">hottest link: '
                   f"{html.escape(hot.name)}, utilisation {hot.utilization:.0%}, {hot.drops} drops, "
                   f"{hot.marks} ECN marks</text>")
    out.append("</svg>")
    return "\n".join(out)
