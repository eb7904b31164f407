from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from manypath import plots
from manypath.cli import app
from manypath.experiments import get
from manypath.results import Results

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_valid_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    from PIL import Image  # matplotlib depends on Pillow

    with Image.open(path) as img:
        img.verify()
    with Image.open(path) as img:
        assert img.width > 100 and img.height > 100


def assert_valid_svg(path: Path) -> None:
    text = path.read_text()
    assert "<svg" in text and text.rstrip().endswith("</svg>")


@pytest.mark.parametrize(
    "draw",
    [
        lambda r: plots.fct_cdf(r.flows, by="class"),
        lambda r: plots.fct_cdf(r.flows, by=None),
        lambda r: plots.goodput_bars(r.flows, 0.01, by="class"),
        lambda r: plots.fairness_bars(r.flows, by="class"),
        lambda r: plots.queue_cdf(r.queues, "mean_packets"),
        lambda r: plots.queue_cdf(r.queues, "max_packets", by="tier", node_kind=None),
        lambda r: plots.fct_vs_load(r.flows.assign(load=[0.3, 0.3, 0.5, 0.5]), "load", by="transport"),
    ],
    ids=["fct_cdf", "fct_cdf_all", "goodput", "fairness", "queue_cdf", "queue_cdf_by", "fct_vs_load"],
)
def test_plots_write_png_and_svg(draw, results: Results, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    written = plots.save(draw(results), tmp_path, "fig")
    assert [p.name for p in written] == ["fig.png", "fig.svg"]
    assert_valid_png(tmp_path / "fig.png")
    assert_valid_svg(tmp_path / "fig.svg")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_label_params_shortens_unambiguous_paths(results: Results) -> None:
    df = results.flows.assign(**{"traffic.0.load": 0.5, "network.queue.ecn_k_packets": 20})
    labelled = plots.label_params(df, ["traffic.0.load", "network.queue.ecn_k_packets"])
    assert set(labelled["point"]) == {"load=0.5, ecn_k_packets=20"}


def test_incast_plot_has_log_jct_axis() -> None:
    import pandas as pd

    table = pd.DataFrame({"fan_in": [1, 4, 16, 40], "jct_ms": [0.24, 1.1, 1.9, 203.0]})
    fig = get("incast-tcp").plot(table)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "fan-in" in ax.get_xlabel() and "completion" in ax.get_ylabel()


def test_reproduce_writes_the_figure(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["reproduce", "incast-tcp", "--out", str(tmp_path), "--quiet"])
    assert res.exit_code == 0, res.output
    assert res.output == ""
    assert_valid_png(tmp_path / "incast-tcp.png")
    assert_valid_svg(tmp_path / "incast-tcp.svg")
    assert (tmp_path / "incast-tcp.csv").read_text().startswith("fan_in,")


def _two_seed_flows(spread: tuple[tuple[float, float], tuple[float, float]] = ((0.0002, 0.02), (0.001, 0.05))
                    ) -> pd.DataFrame:
    """Two runs (seeds) per load, each with five flows; by default their FCTs are two
    decades apart, so a Student-t interval over the two (t = 12.7) reaches far below
    zero."""
    rows = []
    for load, fcts in zip((0.3, 0.6), spread):
        for seed, fct in enumerate(fcts):
            for i in range(5):
                rows.append({"load": load, "run_id": f"{load}-{seed}", "fct_s": fct * (1 + i / 10),
                             "completed": True, "measured": True, "started": True, "size": 1000})
    return pd.DataFrame(rows)


def _lower_ends(ax: Any) -> list[float]:
    return [min(seg[0][1], seg[1][1]) for c in ax.containers for bars in c.lines[2] for seg in bars.get_segments()]


def test_ci_bars_on_a_log_axis_are_clipped_at_its_floor_and_say_n() -> None:
    from manypath import analysis

    flows = _two_seed_flows()
    per_run = analysis.fct_stats(flows, by=["load", "run_id"]).reset_index()
    agg = analysis.seed_aggregate(per_run, "load", ["fct_mean_ms"])
    assert (agg["fct_mean_ms_ci_low"] < 0).all(), "the intervals reach below zero"
    fig = plots.fct_vs_load(flows, "load", stats=("mean",))
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    # The floor is the decade under the smallest mean (12.1 ms at load 0.3).
    floor = ax.get_ylim()[0]
    assert floor == 10.0
    lows = _lower_ends(ax)
    assert len(lows) == 2 and lows == [floor, floor]
    title = ax.get_legend().get_title().get_text()
    assert title == "bars: 95% CI over seeds (Student-t, n = 2)\nclipped at the axis floor"
    # Intervals above the floor are drawn whole, and not said to be clipped.
    close = _two_seed_flows(((0.001, 0.00101), (0.03, 0.0301)))
    ax = plots.fct_vs_load(close, "load", stats=("mean",)).axes[0]
    assert ax.get_yscale() == "log"
    per_run = analysis.fct_stats(close, by=["load", "run_id"]).reset_index()
    agg = analysis.seed_aggregate(per_run, "load", ["fct_mean_ms"])
    assert _lower_ends(ax) == pytest.approx(list(agg["fct_mean_ms_ci_low"]))
    assert min(_lower_ends(ax)) > ax.get_ylim()[0]
    assert ax.get_legend().get_title().get_text() == "bars: 95% CI over seeds (Student-t, n = 2)"
