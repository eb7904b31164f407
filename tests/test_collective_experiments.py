"""The collective experiments (docs/experiments.md, "Collectives") at reduced scale: what
they must show, checked against the α–β bounds, the textbook costs and htsim's measured
times."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from manypath import experiments
from manypath.experiments import citations as cite
from manypath.experiments import collectives as coll

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("allreduce-algorithms", "alltoall-moe", "training-background", "htsim-matrix")


@pytest.fixture(scope="module")
def allreduce() -> pd.DataFrame:
    return coll.run_allreduce(False, 1)


@pytest.fixture(scope="module")
def alltoall() -> pd.DataFrame:
    return coll.run_alltoall(False, 1)


@pytest.fixture(scope="module")
def training() -> pd.DataFrame:
    return coll.run_training(False, 1)


@pytest.fixture(scope="module")
def htsim() -> pd.DataFrame:
    return coll.run_htsim(False, 1)


def test_experiments_are_registered_and_cited() -> None:
    for name in NAMES:
        exp = experiments.get(name)
        assert exp.document and exp.figure and exp.compares and exp.plot_fn is not None
    assert cite.THAKUR_SHORT in experiments.get("allreduce-algorithms").document
    assert cite.DCTCP in experiments.get("training-background").document
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for short in (cite.THAKUR_SHORT, cite.PATARASUK_YUAN_SHORT, cite.TWO_TREE_SHORT, cite.NCCL_TREES_SHORT):
        assert f"**{short}**" in refs, short


def test_textbook_costs() -> None:
    a, b, s = 2e-6, 1e-10, 1e6
    assert coll.model_cct_s("ring", 2, s, a, b) == pytest.approx(2 * (a + s / 2 * b))
    assert coll.model_cct_s("recursive_doubling", 16, s, a, b) == pytest.approx(4 * (a + s * b))
    assert coll.model_cct_s("halving_doubling", 16, s, a, b) == pytest.approx(8 * a + 2 * 15 / 16 * s * b)
    assert coll.model_cct_s("double_binary_tree", 16, s, a, b, chunks=8) == pytest.approx(15 * (a + s / 8 * b))
    # The ring's cost meets recursive doubling's at the model's crossover.
    x = coll.model_crossover_bytes(16, a, b)
    assert coll.model_cct_s("ring", 16, x, a, b) == pytest.approx(coll.model_cct_s("recursive_doubling", 16, x, a, b))
    # β counts the 64-byte header of each 9000-byte NDP packet.
    assert coll.beta_s_per_byte() == pytest.approx(9000 / 8936 * 8 / 100e9)
    assert [coll.hops(4, 0, d) for d in (1, 2, 4)] == [2, 4, 6]
    assert [coll.hops(8, 0, d) for d in (3, 4, 15, 16)] == [2, 4, 4, 6]


def test_crossover_interpolates_on_log_axes() -> None:
    t = pd.DataFrame({"algorithm": ["a", "a", "b", "b"], "size_bytes": [100, 10_000] * 2,
                      "cct_us": [10.0, 100.0, 1.0, 1000.0]})
    # log(b/a) goes from −log 10 to +log 10: the curves cross half way, at 1000 bytes.
    assert coll.crossover_bytes(t, "b", "a") == pytest.approx(1000.0)
    assert math.isnan(coll.crossover_bytes(t, "a", "b"))


def test_allreduce_follows_the_alpha_beta_costs(allreduce: pd.DataFrame) -> None:
    assert allreduce["completed"].all()
    by = allreduce.set_index(["algorithm", "size_bytes"])
    small, large = min(coll.REDUCED_SIZES), max(coll.REDUCED_SIZES)
    # Recursive doubling's log₂N steps beat the ring's 2(N−1) at 64 KiB...
    assert by.loc[("recursive_doubling", small), "cct_us"] < 0.5 * by.loc[("ring", small), "cct_us"]
    # ...and the ring, sending 2(N−1)/N of the buffer instead of log₂N times it, wins large.
    assert by.loc[("ring", large), "cct_us"] < 0.7 * by.loc[("recursive_doubling", large), "cct_us"]
    # On the idle fabric the ring stays within 10% of its α–β bound, and at 64 KiB within 1%.
    assert by.loc[("ring", large), "slowdown"] < 1.10
    assert by.loc[("ring", small), "slowdown"] < 1.01
    # No algorithm beats its bound.
    assert (allreduce["slowdown"] >= 0.999).all()
    # The textbook cost, with α of the algorithm's mean path and β of the line rate, is
    # the bound itself for the ring and recursive doubling (within 2%).
    for alg in ("ring", "recursive_doubling"):
        rows = allreduce[allreduce["algorithm"] == alg]
        assert ((rows["model_cct_us"] / rows["ideal_cct_us"] - 1).abs() < 0.02).all(), rows
    # The measured ring/recursive-doubling crossover lies between the smallest two sizes,
    # as the model's (α/β · 26/2.125 ≈ 0.7 MB for 16 ranks) does.
    x = coll.crossover_bytes(allreduce, "recursive_doubling", "ring")
    assert small < x < sorted(coll.REDUCED_SIZES)[1]


def test_alltoall_collides_on_ecmp_and_not_when_sprayed(alltoall: pd.DataFrame) -> None:
    assert alltoall["completed"].all()
    by = alltoall.set_index(["scheme", "algorithm"])
    # The direct all-to-all is an incast at every receiver: DCTCP on drop-tail queues
    # times out, NDP's trimming does not.
    assert by.loc[("ecmp-dctcp", "direct"), "timeouts"] > 0
    assert by.loc[("spray-ndp", "direct"), "timeouts"] == 0
    for alg in coll.MOE_ALGORITHMS:
        assert by.loc[("spray-ndp", alg), "slowdown"] < by.loc[("ecmp-dctcp", alg), "slowdown"]
        # ECMP hashes whole flows onto uplinks; spraying spreads every packet.
        assert by.loc[("spray-ndp", alg), "uplink_imbalance"] < by.loc[("ecmp-dctcp", alg), "uplink_imbalance"]
    assert (alltoall["slowdown"] >= 0.999).all()


def test_uplink_imbalance() -> None:
    q = pd.DataFrame({"node": ["edge0.0", "edge0.0", "agg0.0", "host0", "agg0.0"],
                      "peer": ["agg0.0", "agg0.1", "core0", "edge0.0", "edge0.0"],
                      "tx_bytes": [300, 100, 200, 10_000, 10_000]})
    # Three upward links (the host's and the downward one do not count): 300 / 200.
    assert coll.uplink_imbalance(q) == pytest.approx(1.5)


def test_background_load_slows_the_training_job(training: pd.DataFrame) -> None:
    assert (training["completed"] == training["iterations"]).all()
    by = training.set_index("load")
    # Alone on the fabric, within 40% of the bound (1.25: each step's message starts
    # with the window the previous one left on the pair's connection; 1.34 with a
    # connection per transfer); background traffic slows it, more at 60% than at 30%.
    assert by.loc[0.0, "slowdown_mean"] < 1.4
    assert by.loc[0.3, "slowdown_mean"] > 1.5 * by.loc[0.0, "slowdown_mean"]
    assert by.loc[0.6, "slowdown_mean"] > by.loc[0.3, "slowdown_mean"]
    # The background is measured, with and without the job, over the same flows.
    loaded = training[training["load"] > 0]
    assert (loaded["bg_flows"] > 100).all()
    assert (loaded["bg_p50_slowdown"] >= 1).all() and (loaded["bg_alone_p50_slowdown"] >= 1).all()
    assert by.loc[0.6, "bg_alone_p50_slowdown"] > by.loc[0.3, "bg_alone_p50_slowdown"]


def test_htsim_ring_matrix_runs_unchanged_and_matches_htsim(htsim: pd.DataFrame) -> None:
    h = htsim[htsim["case"] == "htsim matrix"].set_index("size_bytes")
    # Every flow of htsim's own file runs and completes: 16 chains of 31.
    assert (h["flows"] == 496).all() and (h["completed"] == 496).all()
    # At 64 KiB the flows hardly meet: the CCT is within 5% of htsim's.
    assert abs(h.loc[64 * coll.KiB, "diff_pct"]) < 5
    # Larger flows meet on the ring's links, and the two simulators share them out
    # differently: within 20% (manypath above htsim).
    assert (h["diff_pct"].abs() < 20).all()
    # The first flows of each chain run alone: htsim's fastest flow within 6%.
    assert ((h["fct_min_us"] / h["htsim_fct_min_us"] - 1).abs() < 0.06).all()
    # manypath's own ring, with htsim's send-done triggers, within 5% of htsim's run of it.
    s = htsim[htsim["case"] == "manypath ring, send-done"].set_index("size_bytes")
    assert abs(s.loc[64 * coll.KiB, "diff_pct"]) < 5
    # With its receive-done triggers (started at once at the next sender) it is faster.
    r = htsim[htsim["case"] == "manypath ring"].set_index("size_bytes")
    assert r.loc[64 * coll.KiB, "cct_us"] < 0.8 * s.loc[64 * coll.KiB, "cct_us"]


def test_send_done_matrix_replaces_every_receive_done(tmp_path: Path) -> None:
    text = coll.send_done_matrix(64 * coll.KiB, 1, tmp_path).read_text(encoding="utf-8")
    assert "recv_done_trigger" not in text and "send_done_trigger" in text
    assert text.startswith("Nodes 16\nConnections 480\n")


def test_shipped_htsim_matrices() -> None:
    readme = (coll.MATRICES / "README.md").read_text(encoding="utf-8")
    for size, name in coll.HTSIM_FILES.items():
        lines = (coll.MATRICES / name).read_text(encoding="utf-8").splitlines()
        assert lines[:3] == ["Nodes 16", "Connections 496", "Triggers 480"]
        assert lines[3] == f"0->1 id 1 start 0 size {size} send_done_trigger 1"
        assert name in readme
    assert "gen_allreduce.py" in readme and "BSD 2-Clause" in readme


@pytest.mark.parametrize("name", NAMES)
def test_figures(name: str, allreduce: pd.DataFrame, alltoall: pd.DataFrame, training: pd.DataFrame,
                 htsim: pd.DataFrame) -> None:
    table = {"allreduce-algorithms": allreduce, "alltoall-moe": alltoall, "training-background": training,
             "htsim-matrix": htsim}[name]
    fig = experiments.get(name).plot(table)
    assert fig is not None and fig.axes
