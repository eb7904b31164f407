"""Link faults: each loss model loses what it was configured to lose, black holes take
only their flows, failed links are routed around after the detection delay, the lossy
link generator places links and draws rates as configured, bad fault settings are
refused with the field named, and the FUSO presets have their documented base RTTs.

Loss rates and burst lengths are measured from the per-port counters: `fault_drops`
(packets lost) over `tx_packets` (packets that started onto the link), and
`fault_drops / fault_bursts` (a burst being a maximal run of consecutive losses on the
link). The random models are put on the ACK direction of a long-lived flow: a lost ACK
barely slows TCP, so the link sees close to a million packets per simulated second.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import manypath

RunFn = Callable[..., manypath.Results]

ROOT = Path(__file__).resolve().parent.parent

# One long-lived Reno flow from host0 (left) to host1 (right) at 10 Gbps: data crosses
# left → right, ACKs right → left.
DUMBBELL = """\
duration_ms = {duration_ms}
stop_when_done = false

[topology.dumbbell]
pairs = 1

[network.link]
rate_gbps = 10
delay_us = 5

[network.queue]
limit_packets = 1000

[tcp]
rto_min_us = 1000

{faults}

[[traffic]]
pattern = "pair"
src = 0
dst = 1
transport = "tcp"
size = "long_lived"
"""


def _port(res: manypath.Results, node: str, peer: str) -> pd.Series:
    q = res.queues
    rows = q[(q["node"] == node) & (q["peer"] == peer)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def _measured(res: manypath.Results, node: str, peer: str) -> tuple[float, float, int]:
    """(loss rate, mean burst length, packets) on one link direction."""
    p = _port(res, node, peer)
    assert p["drops"] == 0, "congestion drops would mix with fault drops"
    return p["fault_drops"] / p["tx_packets"], p["fault_drops"] / p["fault_bursts"], int(p["tx_packets"])


@pytest.mark.parametrize(
    "fault, rate, burst",
    [
        # Independent losses: runs of losses are geometric with mean 1 / (1 − p).
        ('kind = "loss"\nprobability = 0.05', 0.05, 1 / 0.95),
        ('kind = "bursty_loss"\nloss_rate = 0.05\nburst_length = 4', 0.05, 4.0),
        ('kind = "bursty_loss"\nloss_rate = 0.02\nburst_length = 8', 0.02, 8.0),
        # A bad state that lets some packets through: bursts are runs of losses, shorter
        # than the bad state's sojourns.
        ('kind = "bursty_loss"\nloss_rate = 0.1\nburst_length = 3\nbad_loss = 0.8', 0.1, 3.0),
    ],
    ids=["bernoulli", "ge-5%-4", "ge-2%-8", "ge-10%-3-h0.8"],
)
def test_loss_model_gives_its_rate_and_burst_length(
    run_checked: RunFn, fault: str, rate: float, burst: float
) -> None:
    faults = f'[[faults]]\n{fault}\nfrom = "right"\nto = "left"\n'
    res = run_checked(DUMBBELL.format(duration_ms=600, faults=faults))
    measured_rate, measured_burst, packets = _measured(res, "right", "left")
    assert packets > 300_000, "too few packets for a 10% tolerance"
    assert measured_rate == pytest.approx(rate, rel=0.1), (measured_rate, rate)
    assert measured_burst == pytest.approx(burst, rel=0.1), (measured_burst, burst)
    # The configured rate is reported, and only on that link direction.
    assert _port(res, "right", "left")["loss_rate"] == pytest.approx(rate)
    assert _port(res, "left", "right")["fault_drops"] == 0
    assert res.counters["fault_drops"] == _port(res, "right", "left")["fault_drops"]
    assert res.counters["congestion_drops"] == res.counters["packets_dropped"] - res.counters["fault_drops"]


def test_bernoulli_loss_on_data_is_apart_from_congestion_drops(run_checked: RunFn) -> None:
    faults = '[[faults]]\nkind = "loss"\ntier = "bottleneck"\nprobability = 0.01\n'
    res = run_checked(DUMBBELL.format(duration_ms=400, faults=faults))
    measured_rate, _, packets = _measured(res, "left", "right")
    assert packets > 100_000
    assert measured_rate == pytest.approx(0.01, rel=0.1)
    assert res.counters["fault_drops"] == res.counters["packets_dropped"]
    assert res.flows["bytes_retx"].sum() > 0


# --- Black holes ---------------------------------------------------------------------------

# Eight hosts on each side, every ordered pair a flow: 64 flows send data left → right,
# 64 send data right → left (their ACKs cross left → right), 112 stay on one side.
BLACKHOLE = """\
duration_ms = 100

[topology.dumbbell]
pairs = 8

[network.link]
rate_gbps = 10
delay_us = 5

[network.queue]
limit_packets = 1000

[tcp]
rto_min_us = 1000

[[faults]]
kind = "blackhole"
from = "left"
to = "right"
{fraction}

[[traffic]]
pattern = "all_to_all"
transport = "tcp"
size = {{ fixed = 20000 }}
"""


def _crosses_left_to_right(res: manypath.Results) -> pd.Series:
    return (res.flows["src"] < 8) != (res.flows["dst"] < 8)


def test_blackhole_of_a_hash_subset_loses_only_those_flows(run_checked: RunFn) -> None:
    res = run_checked(BLACKHOLE.format(fraction="hash_fraction = 0.5"))
    flows = res.flows
    crossing = flows[_crosses_left_to_right(res)]
    local = flows[~_crosses_left_to_right(res)]
    assert len(crossing) == 128 and len(local) == 112
    # Flows that never cross the black-holed direction are untouched.
    assert local["completed"].all() and local["bytes_retx"].sum() == 0
    # A crossing flow is either black-holed (nothing gets through) or not touched at all.
    lost = crossing[~crossing["completed"]]
    kept = crossing[crossing["completed"]]
    assert (lost["bytes_acked"] == 0).all(), lost
    assert (kept["bytes_retx"] == 0).all() and (kept["timeouts"] == 0).all(), kept
    # About half of the flows' hashes fall in the black-holed half (binomial σ ≈ 5.7).
    assert 0.3 < len(lost) / len(crossing) < 0.7, len(lost)
    assert _port(res, "left", "right")["blackhole_fraction"] == 0.5
    assert _port(res, "right", "left")["fault_drops"] == 0


def test_blackhole_of_all_packets(run_checked: RunFn) -> None:
    res = run_checked(BLACKHOLE.format(fraction=""))
    crossing = _crosses_left_to_right(res)
    assert not res.flows[crossing]["completed"].any()
    assert res.flows[~crossing]["completed"].all()
    assert _port(res, "left", "right")["fault_drops"] == _port(res, "left", "right")["tx_packets"]


# --- A link going down and up ------------------------------------------------------------

# Two leaves under two spines; eight 30 MB flows from leaf0's hosts to leaf1's. The link
# leaf0–spine0 is down from 10 to 25 ms; routing follows 2 ms after each change.
LINK_DOWN = """\
duration_ms = {duration_ms}

[topology.leaf_spine]
leaves = 2
spines = 2
hosts_per_leaf = 4

[network.link]
rate_gbps = 10
delay_us = 2

[tcp]
rto_min_us = 2000

[[faults]]
kind = "link_down"
from = "leaf0"
to = "spine0"
down_us = 10000
up_us = 25000
detection_delay_us = 2000

[[traffic]]
pattern = "pair"
src = 0
dst = 4
repeat = 2
interval_us = 1
size = {{ fixed = 30000000 }}

[[traffic]]
pattern = "pair"
src = 1
dst = 5
repeat = 2
interval_us = 1
size = {{ fixed = 30000000 }}

[[traffic]]
pattern = "pair"
src = 2
dst = 6
repeat = 2
interval_us = 1
size = {{ fixed = 30000000 }}

[[traffic]]
pattern = "pair"
src = 3
dst = 7
repeat = 2
interval_us = 1
size = {{ fixed = 30000000 }}
"""


def test_link_down_is_routed_around_after_the_detection_delay_and_back(run_checked: RunFn) -> None:
    # A run stopped at time t is the first t of the full run (runs are deterministic),
    # so a series of shorter runs shows the counters over time.
    def at(ms: float) -> tuple[int, int, manypath.Results]:
        res = run_checked(LINK_DOWN.format(duration_ms=ms))
        up = _port(res, "leaf0", "spine0")
        down = _port(res, "spine0", "leaf0")
        return int(up["tx_packets"] + down["tx_packets"]), int(res.counters["fault_drops"]), res

    tx_before, drops_before, _ = at(9.9)
    tx_undetected, drops_undetected, _ = at(11.9)
    tx_detected, drops_detected, _ = at(14)
    tx_repaired, drops_repaired, _ = at(26.9)
    tx_end, drops_end, res = at(1000)

    assert drops_before == 0 and tx_before > 0, "the link carried traffic before it failed"
    # Until routing notices, traffic is still sent into the dead link and lost.
    assert drops_undetected > 0
    assert drops_detected - drops_undetected == tx_detected - tx_undetected
    # From detection (plus draining the queue) until the repair is detected, routing
    # avoids the link entirely: nothing more crosses or is lost on it.
    assert tx_repaired == tx_detected
    assert drops_repaired == drops_detected
    # After the repair is detected, the link carries traffic again, losslessly.
    assert tx_end > tx_repaired
    assert drops_end == drops_detected
    assert res.counters["route_drops"] == 0
    # Every flow completes.
    assert res.flows["completed"].all(), res.flows


def test_link_down_with_no_alternative_drops_and_counts(run_checked: RunFn) -> None:
    # A dumbbell's bottleneck is the only path: once the failure is detected the left
    # switch has no route, and the packets it gets are counted as route drops.
    text = DUMBBELL.format(
        duration_ms=20,
        faults='[[faults]]\nkind = "link_down"\nfrom = "left"\nto = "right"\n'
        "down_us = 5000\ndetection_delay_us = 1000\n",
    )
    res = run_checked(text)
    assert res.counters["fault_drops"] > 0
    assert res.counters["route_drops"] > 0
    assert res.counters["packets_dropped"] == (
        res.counters["fault_drops"] + res.counters["route_drops"] + res.counters["congestion_drops"]
    )


# --- The lossy link generator -------------------------------------------------------------

FABRIC = """\
duration_ms = 0.01

[topology.fuso_fabric]

[[faults]]
kind = "random_lossy_links"
{generator}

[[traffic]]
pattern = "pair"
src = 0
dst = 63
size = {{ fixed = 1000 }}
"""


def _lossy_links(res: manypath.Results) -> pd.DataFrame:
    """One row per lossy link (both of its directions carry the same configured rate)."""
    q = res.queues[res.queues["loss_rate"] > 0]
    assert len(q) % 2 == 0
    return q[q["node"] < q["peer"]]


def test_generator_places_the_fraction_by_tier_weight(run_checked: RunFn) -> None:
    # 96 links: 64 host, 16 ToR–aggregation, 16 aggregation–spine. 10% of them is 9.6
    # per run on average; the document's weights on three tiers are 22/24/54%.
    per_tier: dict[str, int] = {"host": 0, "tor_agg": 0, "agg_spine": 0}
    counts = []
    seeds = 100
    for seed in range(seeds):
        links = _lossy_links(run_checked(FABRIC.format(generator="fraction = 0.1"), seed=seed))
        counts.append(len(links))
        for tier, n in links["tier"].value_counts().items():
            per_tier[str(tier)] += int(n)
    assert set(counts) <= {9, 10}
    assert sum(counts) / seeds == pytest.approx(9.6, abs=0.25)
    total = sum(per_tier.values())
    for tier, weight in {"host": 0.22, "tor_agg": 0.24, "agg_spine": 0.54}.items():
        assert per_tier[tier] / total == pytest.approx(weight, abs=0.05), per_tier
    # Different seeds place the links differently; the same seed places them alike.
    a = _lossy_links(run_checked(FABRIC.format(generator="fraction = 0.1"), seed=1))
    b = _lossy_links(run_checked(FABRIC.format(generator="fraction = 0.1"), seed=1))
    c = _lossy_links(run_checked(FABRIC.format(generator="fraction = 0.1"), seed=2))
    assert a["port"].tolist() == b["port"].tolist() and a["loss_rate"].tolist() == b["loss_rate"].tolist()
    assert a["port"].tolist() != c["port"].tolist()


def test_generator_draws_rates_with_the_configured_mean(run_checked: RunFn) -> None:
    rates: list[float] = []
    for seed in range(40):
        links = _lossy_links(run_checked(FABRIC.format(generator="fraction = 1.0"), seed=seed))
        assert len(links) == 96
        rates.extend(links["loss_rate"])
    # The default: the document's 1–60% with mean 4%.
    assert min(rates) >= 0.01 and max(rates) <= 0.6
    assert sum(rates) / len(rates) == pytest.approx(0.04, rel=0.1)
    assert sum(r < 0.1 for r in rates) / len(rates) > 0.85

    generator = (
        "fraction = 0.2\nloss_rates = { uniform = { min = 0.02, max = 0.1 } }\n"
        "tier_weights = { tor_agg = 1, agg_spine = 1 }"
    )
    rates = []
    for seed in range(40):
        links = _lossy_links(run_checked(FABRIC.format(generator=generator), seed=seed))
        assert set(links["tier"]) <= {"tor_agg", "agg_spine"}
        rates.extend(links["loss_rate"])
    assert min(rates) >= 0.02 and max(rates) <= 0.1
    assert sum(rates) / len(rates) == pytest.approx(0.06, rel=0.05)


# Four long-lived flows across a dumbbell whose bottleneck is the only link the
# generator may choose. The bottleneck loses in bursts in both directions, so a flow
# spends time in timeouts; a short maximum RTO and four flows keep the link busy.
GENERATED_BURSTY = """\
duration_ms = 500
stop_when_done = false

[topology.dumbbell]
pairs = 4

[network.link]
rate_gbps = 10
delay_us = 5

[network.queue]
limit_packets = 1000

[tcp]
rto_min_us = 1000
rto_max_us = 4000

[[faults]]
kind = "random_lossy_links"
fraction = 1
loss_rates = { fixed = 0.02 }
burst_length = 4
tier_weights = { bottleneck = 1 }

[[traffic]]
pattern = "pair"
src = 0
dst = 4
size = "long_lived"

[[traffic]]
pattern = "pair"
src = 1
dst = 5
size = "long_lived"

[[traffic]]
pattern = "pair"
src = 2
dst = 6
size = "long_lived"

[[traffic]]
pattern = "pair"
src = 3
dst = 7
size = "long_lived"

"""


def test_generated_bursty_links_lose_in_bursts(run_checked: RunFn) -> None:
    res = run_checked(GENERATED_BURSTY)
    ports = [_port(res, "left", "right"), _port(res, "right", "left")]
    packets = sum(p["tx_packets"] for p in ports)
    lost = sum(p["fault_drops"] for p in ports)
    assert packets > 300_000
    assert lost / packets == pytest.approx(0.02, rel=0.1)
    assert lost / sum(p["fault_bursts"] for p in ports) == pytest.approx(4, rel=0.1)
    assert (res.queues[res.queues["tier"] == "host"]["loss_rate"] == 0).all()


# --- Bad input ---------------------------------------------------------------------------

STAR = """\
duration_ms = 10

[topology.star]
senders = 2

[[faults]]
{fault}

[[traffic]]
pattern = "incast"
size = {{ fixed = 10000 }}
"""


@pytest.mark.parametrize(
    "fault, expected",
    [
        ('kind = "loss"\ntier = "host"\nprobability = -0.1', "faults[0].probability: must be in [0, 1], got -0.1"),
        (
            'kind = "bursty_loss"\ntier = "host"\nloss_rate = 0.05\nburst_length = 0.5',
            "faults[0].burst_length: must be at least 1",
        ),
        ('kind = "bursty_loss"\ntier = "host"\nloss_rate = -0.05\nburst_length = 2', "faults[0].loss_rate: must be in (0, 1)"),
        ('kind = "loss"\ntier = "core"\nprobability = 0.1', "faults[0].tier: not a tier of this topology"),
        (
            'kind = "link_down"\nfrom = "host1"\nto = "switch"\ndown_us = 500\nup_us = 100',
            "faults[0].up_us: must be after down_us",
        ),
        ('kind = "link_down"\nfrom = "host1"\nto = "switch"', "faults[0].down_us: is required"),
        ('kind = "blackhole"\ntier = "host"\nhash_fraction = 1.5', "faults[0].hash_fraction: must be in (0, 1]"),
        ('kind = "loss"\nfrom = "host1"\nto = "nowhere"\nprobability = 0.1', "faults[0].to: no node named"),
        ('kind = "loss"\nfrom = "host1"\nto = "switch"\nparallel = 1\nprobability = 0.1', "faults[0].parallel"),
        ('kind = "loss"\ntier = "host"\nprobability = 0.1\nburst_length = 3', "faults[0].burst_length: applies only to kind"),
        ('kind = "random_lossy_links"\nfraction = 0.1\ntier_weights = { spine = 1 }', "faults[0].tier_weights.spine"),
        ('kind = "random_lossy_links"\nfraction = 2', "faults[0].fraction: must be in [0, 1]"),
        (
            'kind = "random_lossy_links"\nfraction = 0.5\nloss_rates = { bounded_pareto = { min = 0.01, max = 0.6, mean = 0.5 } }',
            "faults[0].loss_rates.bounded_pareto.mean",
        ),
        (
            'kind = "random_lossy_links"\nfraction = 0.5\nloss_rates = { fixed = 0.7 }\nburst_length = 1',
            "faults[0].loss_rates: its largest rate does not fit",
        ),
    ],
    ids=[
        "negative-probability",
        "short-burst",
        "negative-loss-rate",
        "unknown-tier",
        "up-before-down",
        "missing-down",
        "hash-fraction",
        "unknown-node",
        "parallel",
        "field-of-another-kind",
        "weight-of-unknown-tier",
        "fraction",
        "unreachable-mean",
        "unreachable-burst",
    ],
)
def test_bad_fault_is_refused_with_the_field_named(fault: str, expected: str) -> None:
    with pytest.raises(ValueError) as e:
        manypath.validate(STAR.format(fault=fault))
    assert expected in str(e.value), str(e.value)


def test_overlapping_outages_of_one_link_are_refused() -> None:
    faults = (
        'kind = "link_down"\nfrom = "host1"\nto = "switch"\ndown_us = 100\nup_us = 500\n'
        "detection_delay_us = 100\n\n[[faults]]\n"
        'kind = "link_down"\nfrom = "switch"\nto = "host1"\ndown_us = 550\n'
    )
    with pytest.raises(ValueError, match=r"faults\[1\]\.down_us: overlaps faults\[0\]"):
        manypath.validate(STAR.format(fault=faults))


# --- The FUSO presets ------------------------------------------------------------------------


def _base_rtt_us(preset: str, src: int, dst: int, run: RunFn) -> float:
    """The RTT of a full-size segment and its ACK on an idle network, from two flows: a
    1-byte flow takes two small-packet round trips (SYN, then the byte), a one-segment
    flow a small-packet round trip and a full-size one."""
    scenario: dict[str, Any] = tomllib.loads((ROOT / "scenarios" / preset).read_text())
    scenario.pop("faults", None)

    def fct(size: int) -> float:
        scenario["traffic"] = [{"pattern": "pair", "src": src, "dst": dst, "size": {"fixed": size}}]
        res = run(scenario)
        assert res.flows["completed"].all() and res.flows["timeouts"].sum() == 0
        return float(res.flows["fct_s"].iloc[0]) * 1e6

    return fct(1460) - fct(1) / 2


def test_fuso_testbed_base_rtt(run_checked: RunFn) -> None:
    rtt = _base_rtt_us("fuso-testbed.toml", 0, 5, run_checked)
    assert rtt == pytest.approx(280, rel=0.03), rtt


def test_fuso_fabric_base_rtt(run_checked: RunFn) -> None:
    # host0 (pod 0) to host63 (pod 3): through a spine.
    rtt = _base_rtt_us("fuso-fabric.toml", 0, 63, run_checked)
    assert rtt == pytest.approx(240, rel=0.03), rtt


def test_fuso_testbed_spreads_flows_over_its_three_paths(run_checked: RunFn) -> None:
    res = run_checked(ROOT / "scenarios" / "fuso-testbed.toml")
    paths = res.queues[(res.queues["node"] == "tor0") & (res.queues["peer"] == "tor1")]
    assert len(paths) == 3
    assert (paths["tx_packets"] > 0).all()
    # The preset's failure loss is on P1 only.
    assert paths["loss_rate"].tolist() == [0.01, 0.0, 0.0]
    assert not math.isnan(res.counters["fault_drops"])


def test_faulty_runs_are_reproducible(run_checked: RunFn) -> None:
    # Random lossy links (placement, rates, loss draws) and a link outage together.
    text = (ROOT / "scenarios" / "fuso-fabric.toml").read_text() + (
        '\n[[faults]]\nkind = "link_down"\nfrom = "agg0.0"\nto = "spine0"\n'
        "down_us = 2000\nup_us = 6000\ndetection_delay_us = 500\n"
    )
    a, b = run_checked(text), run_checked(text)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    pd.testing.assert_frame_equal(a.queues, b.queues)
    assert a.counters["fault_drops"] > 0
    c = run_checked(text, seed=2)
    assert not a.queues["loss_rate"].equals(c.queues["loss_rate"])
