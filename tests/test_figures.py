"""What figures must get right: error bars over seeds, zeros on log axes, tick labels that
do not overlap, lines that stay visible, readable axis labels, papers named by author,
venue and year."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import ErrorbarContainer

from manypath import analysis, plots
from manypath.experiments import all_experiments, fuso

DOCS = Path(__file__).resolve().parent.parent / "docs"


def sweep_flows() -> pd.DataFrame:
    """Loads 0.3 and 0.6 × three seeds; every flow of run r at load L takes L·(1 + r) ms."""
    rows = []
    for load in (0.3, 0.6):
        for seed in range(3):
            for _ in range(5):
                rows.append({"traffic.0.load": load, "run_id": f"{load}-{seed}", "size": 1000,
                             "completed": True, "fct_s": load * (1 + seed) * 1e-3})
    return pd.DataFrame(rows)


def overlapping_labels(fig: Any) -> list[tuple[str, str]]:
    """Pairs of visible tick labels (major and minor, either axis) whose boxes overlap."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    pairs = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels(which="both") if t.get_visible() and t.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            pairs += [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]
    return pairs


def test_fct_vs_load_draws_the_confidence_interval_over_seeds() -> None:
    fig = plots.fct_vs_load(sweep_flows(), "traffic.0.load", stats=("mean",))
    ax = fig.axes[0]
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    line, _caps, (segments,) = bars.lines
    # Per-run means L, 2L, 3L ms: mean 2L, s = L, half-width t(0.975, 2)·L/√3.
    assert list(line.get_ydata()) == pytest.approx([0.6, 1.2])
    half = [seg[1, 1] - seg[0, 1] for seg in segments.get_segments()]
    t = analysis.t_quantile(0.975, 2)
    assert half == pytest.approx([2 * t * 0.3 / math.sqrt(3), 2 * t * 0.6 / math.sqrt(3)])
    assert ax.get_xlabel() == "offered load"
    assert "95% CI over seeds" in ax.get_legend().get_title().get_text()


def test_fct_vs_load_with_one_run_per_point_has_no_bars() -> None:
    one = sweep_flows()
    one = one[one["run_id"].str.endswith("-0")]
    ax = plots.fct_vs_load(one, "traffic.0.load").axes[0]
    assert not [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert ax.get_legend().get_title().get_text() == ""


def test_zero_on_a_log_axis_is_drawn_at_zero() -> None:
    df = pd.DataFrame({"x": [1, 2, 3, 4], "y": [0.0, 0.04, 0.5, 3.0]})
    ax = plots.line(df, "x", "y", logy=True).axes[0]
    assert ax.get_yscale() == "symlog"
    assert list(ax.lines[0].get_ydata()) == [0.0, 0.04, 0.5, 3.0]
    low, _ = ax.get_ylim()
    assert -0.01 < low < 0  # just below zero, not mirrored into negative decades
    canvas = FigureCanvasAgg(ax.figure)
    canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert "0" in labels and not any(t.startswith("-") for t in labels)
    # Without zeros, a plain log axis.
    assert plots.line(df[df["y"] > 0], "x", "y", logy=True).axes[0].get_yscale() == "log"


def fuso_table() -> pd.DataFrame:
    rows = []
    for i, scheme in enumerate(fuso.SCHEMES):
        for j, p in enumerate(fuso.LOSS_RATES):
            rows.append({"scheme": scheme, "loss_rate": p, "fct_p99_ms": 1.2 + 0.4 * i + j,
                         "timeout_fraction": 0.0 if (i + j) % 3 == 0 else 1e-3 * (i + 1) * (j + 1)})
    return pd.DataFrame(rows)


def test_fuso_loss_figure_labels_do_not_overlap_and_zeros_are_zeros() -> None:
    fig = fuso.plot_loss(fuso_table(), "network")
    assert overlapping_labels(fig) == []
    _, timeouts = fig.axes
    assert timeouts.get_yscale() == "symlog"
    ys = np.concatenate([line.get_ydata() for line in timeouts.lines])
    assert (ys == 0).sum() == (fuso_table()["timeout_fraction"] == 0).sum()
    assert not ((ys > 0) & (ys < 1e-3)).any()  # nothing clamped to a small value
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == [f"{p * 100:g}" for p in fuso.LOSS_RATES]


def test_series_that_coincide_stay_distinguishable() -> None:
    df = pd.DataFrame({"scheme": ["a"] * 3 + ["b"] * 3, "x": [1, 2, 3] * 2, "y": [1.0, 2.0, 3.0] * 2})
    a, b = plots.line(df, "x", "y", by="scheme").axes[0].lines
    assert a.get_marker() != b.get_marker()
    assert a.get_linestyle() != b.get_linestyle()
    assert a.get_markersize() > b.get_markersize()  # the one below shows around the one on top


def test_parameter_paths_become_readable_labels() -> None:
    assert plots.param_label("traffic.0.load") == "offered load"
    assert plots.param_label("network.queue.ecn_k_packets") == "ECN marking threshold K (packets)"
    assert plots.param_label("transports.mp.subflows") == "subflows (transports.mp)"
    assert plots.param_label("traffic.2.load") == "offered load (traffic.2)"
    df = pd.DataFrame({"traffic.0.load": [0.1, 0.2], "y": [1.0, 2.0]})
    assert plots.line(df, "traffic.0.load", "y").axes[0].get_xlabel() == "offered load"


def test_bars_with_intervals() -> None:
    values = pd.Series([2.0, 4.0], index=["a", "b"])
    ax = plots.bars(values, "v", low=pd.Series([1.5, 3.0], index=["a", "b"]),
                    high=pd.Series([2.5, 5.0], index=["a", "b"])).axes[0]
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = bars.lines[2][0].get_segments()
    assert [(s[0, 1], s[1, 1]) for s in segments] == [(1.5, 2.5), (3.0, 5.0)]


def test_experiments_name_papers_by_author_venue_and_year() -> None:
    references = (DOCS / "references.md").read_text(encoding="utf-8")
    for exp in all_experiments():
        assert re.search(r"\b(19|20)\d\d\b", exp.document), exp.name
        assert not re.search(r"\(00\d\)|\b00\d\b", exp.document + exp.figure), exp.name
        cited = re.match(r"(.*?, (?:arXiv|USENIX ATC|INFOCOM|SIGCOMM|CloudNet|IJHPCA) \d{4})", exp.document.split(
            "(the setting of ")[-1])
        assert cited is not None, exp.document
        # Everything cited is in docs/references.md under the same short form.
        assert cited.group(1).split(", as surveyed")[0] in references.replace("**", ""), exp.name


def test_experiment_figure_titles_name_papers() -> None:
    titles = " ".join(
        str(fig._suptitle.get_text() if fig._suptitle else "") + " ".join(a.get_title() for a in fig.axes)
        for fig in [fuso.plot_loss(fuso_table(), "network")]
    )
    assert "Chen et al., ATC 2016" in titles and "FUSO Fig." not in titles


def test_fct_cdf_says_how_many_flows_it_covers() -> None:
    flows = pd.DataFrame({"class": ["a"] * 4 + ["b"] * 2, "size": [1000] * 6,
                          "start_s": [0.0, 0.0, 0.0, math.nan, 0.0, 0.0],
                          "completed": [True, True, False, False, True, True],
                          "fct_s": [1e-3, 2e-3, math.nan, math.nan, 1e-3, 1e-3]})
    legend = plots.fct_cdf(flows).axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["a: 2 / 3 / 4", "b: 2 / 2 / 2"]
    assert legend.get_title().get_text() == "class: finished / started / generated"
