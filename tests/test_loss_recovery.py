"""The loss-recovery options in the engine, and FUSO §2.2's timeout analysis."""

from __future__ import annotations

import math

import pytest

from manypath import run
from manypath.experiments import fuso


def test_timeout_bound_matches_the_document() -> None:
    # 10 KB = 7 packets: the tail dominates; 100 KB at 4%: the retransmission loss.
    b = fuso.timeout_lower_bound(0.01, 10_000)
    assert b["bound"] == pytest.approx(0.01)
    b = fuso.timeout_lower_bound(0.04, 100_000)
    assert b["p_retx"] == pytest.approx(1 - (1 - 0.04**2) ** 69)
    assert b["bound"] == b["p_retx"]
    assert fuso.timeout_lower_bound(0.5, 1_000)["p_win"] == pytest.approx(0.5)


#: Flows per case. The check is one-sided against each end of [bound, 3·bound] with the
#: Wilson interval at z = 3.5: a model whose true timeout fraction is inside the range
#: fails a check with probability < 0.03%, and with 40 000 flows the interval's
#: half-width at a 1-2% fraction is ≈ 0.2-0.25% (a quarter of the bound), so a model that
#: really lies a third below the bound or a third above three times it fails.
FLOWS = 40_000
Z = 3.5


@pytest.mark.parametrize("size", [10_000, 100_000])
@pytest.mark.parametrize("loss", [0.01, 0.04])
def test_timeout_fraction_lies_between_the_bound_and_three_times_it(size: int, loss: float) -> None:
    r = fuso.timeout_fraction(loss, size, FLOWS, seed=1, z=Z)
    assert r["flows"] == FLOWS, "every flow finishes"
    bound = r["bound"]
    assert r["ci_high"] >= bound, r
    assert r["ci_low"] <= 3 * bound, r
    half = (r["ci_high"] - r["ci_low"]) / 2
    assert half <= bound / 3, f"too few flows for the margin: {r}"


def _lossy_pair(tcp: dict, loss: float, size: int = 100_000, flows: int = 200) -> dict:
    s = fuso.timeout_scenario(loss, size, flows)
    s["tcp"] = {"rto_min_us": 5000, "init_cwnd_packets": 16, **tcp}
    return s


def test_defaults_report_no_loss_recovery_counters() -> None:
    f = run(_lossy_pair({}, 0.02)).flows
    assert f["completed"].all()
    for col in ["tlp_probes", "ir_coded", "ir_recovered", "proactive_copies"]:
        assert (f[col] == 0).all(), col
    assert (f["packets_retx"] > 0).any()
    assert (f["packets_sent"] >= math.ceil(100_000 / 1460)).all()


def test_tlp_tcp_ir_and_proactive_run_end_to_end() -> None:
    base = {"sack": True, "early_retransmit": True, "fin_with_data": True}
    tlp = run(_lossy_pair({**base, "tlp": True}, 0.02)).flows
    assert tlp["completed"].all() and tlp["tlp_probes"].sum() > 0
    ir = run(_lossy_pair({**base, "tcp_ir": True}, 0.02)).flows
    assert ir["completed"].all() and ir["ir_coded"].sum() > 0 and ir["ir_recovered"].sum() > 0
    pro = run(_lossy_pair({**base, "proactive": True}, 0.0)).flows
    assert pro["completed"].all()
    assert (pro["proactive_copies"] == pro["packets_sent"]).all()
    assert pro["fast_retx"].sum() == 0, "copies do not look like losses"


def test_proactive_without_sack_is_rejected() -> None:
    with pytest.raises(Exception, match=r"tcp\.proactive: needs sack"):
        run(_lossy_pair({"proactive": True}, 0.0))
