"""The RDMA experiments: their scenario builders (the HPCC authors' fat tree, rates,
buffers, thresholds and loads; DCQCN's microbenchmarks) and their measurements on
synthetic tables; and, once the simulator runs RoCE transports, the behaviours the
papers report, at reduced scale."""

from __future__ import annotations

import copy
import dataclasses
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from manypath import experiments, run, validate
from manypath.experiments import dcqcn, hpcc, rdma

ROCE = rdma.roce_supported()
needs_roce = pytest.mark.skipif(not ROCE, reason='the simulator does not accept cc = "dcqcn" yet')


# --- Shared fabric ----------------------------------------------------------------------------


def test_fabric_follows_the_hpcc_simulator_at_100g() -> None:
    net = rdma.network("dcqcn", 100, {"tor_agg": 400, "agg_spine": 400})
    # 16·bw/50 MB with MB = 2^20 B: 32 MiB at 100 Gb/s.
    assert net["buffer"]["bytes"] == 32 * 1024 * 1024
    assert net["queue"]["ecn_red"] == {"kmin_bytes": 400_000, "kmax_bytes": 1_600_000, "pmax": 0.2}
    for tier in ("tor_agg", "agg_spine"):
        assert net["tiers"][tier]["rate_gbps"] == 400
        assert net["tiers"][tier]["queue"]["ecn_red"] == {"kmin_bytes": 1_600_000, "kmax_bytes": 6_400_000,
                                                           "pmax": 0.2}
    assert net["pfc"] == {"alpha": 0.125, "reserve_bytes": 4096, "resume_offset_bytes": 3072}
    # Marked as a packet leaves, on the queue behind it, as the simulator's switches mark.
    assert net["queue"]["ecn_mark"] == "dequeue" and rdma.queue("dctcp", 100, 100)["ecn_mark"] == "dequeue"
    # The static limit never binds before the shared buffer does.
    assert net["queue"]["limit_bytes"] == net["buffer"]["bytes"]
    # DCQCN's ACKs and CNPs go ahead of data (ACK_HIGH_PRIO 1); HPCC's share its queue.
    assert net["queue"]["priority"] is True and rdma.data_priority("dcqcn") == 1
    assert "priority" not in rdma.network("hpcc", 100, {})["queue"] and rdma.data_priority("hpcc") == 0


def test_dctcp_marks_at_a_step_of_30_kb_per_10_gbps() -> None:
    q = rdma.queue("dctcp", 100, 100)
    assert q["ecn_k_bytes"] == 300_000 and "ecn_red" not in q
    assert rdma.queue("dctcp", 400, 100)["ecn_k_bytes"] == 1_200_000
    with pytest.raises(ValueError, match="unknown congestion control 'cubic'"):
        rdma.marking("cubic", 100)


def test_roce_transports() -> None:
    assert rdma.roce_transport("hpcc") == {"cc": "hpcc", "retransmit": "go-back-n", "retransmit_timeout": False,
                                           "ack_every": 1, "window": True, "payload_bytes": 1000,
                                           "hpcc_eta": 0.95, "hpcc_max_stage": 0}
    for cc in ("dcqcn", "timely"):
        t = rdma.roce_transport(cc)
        assert t["window"] is False and t["payload_bytes"] == 1000 and t["cc"] == cc
    assert rdma.transports("dctcp") == {}
    with pytest.raises(ValueError, match="not a RoCE controller"):
        rdma.roce_transport("dctcp")


def test_shipped_workload_means_match_their_headers() -> None:
    for name, header_mean in (("websearch", 1_711_250.0), ("fb_hadoop", 120_420.8)):
        text = rdma.cdf_path(name).read_text(encoding="utf-8")
        assert f"{header_mean}" in text
        assert rdma.cdf_mean(rdma.cdf_points(name)) == pytest.approx(header_mean, abs=0.1)
    # The web-search CDF is the HPCC simulator's WebSearch_distribution.txt, in fractions.
    assert rdma.cdf_points("websearch")[:3] == [(0.0, 0.0), (10_000.0, 0.15), (20_000.0, 0.2)]
    # FB Hadoop is the HPCC simulator's FbHdp_distribution.txt (cdf in percent), point for point.
    fbhdp = [(0, 0), (100, 1), (200, 2), (300, 5), (350, 15), (400, 20), (500, 30), (600, 40), (700, 50),
             (1000, 60), (2000, 67), (7000, 70), (30000, 72), (50000, 82), (80000, 87), (120000, 90),
             (300000, 95), (1000000, 97.5), (2000000, 99), (10000000, 100)]
    assert rdma.cdf_points("fb_hadoop") == [(float(x), p / 100) for x, p in fbhdp]
    assert rdma.size_spec("websearch") == {"cdf": "websearch"}
    assert rdma.size_spec("fb_hadoop")["cdf"].endswith("workloads/fb_hadoop.cdf")
    with pytest.raises(ValueError, match="no shipped workload 'nope'"):
        rdma.size_spec("nope")


def test_cdf_quantile_inverts_the_piecewise_linear_cdf() -> None:
    points = rdma.cdf_points("fb_hadoop")
    assert rdma.cdf_quantile(points, 0.5) == 700
    assert rdma.cdf_quantile(points, 0.1) == pytest.approx(325)  # halfway from 300 (0.05) to 350 (0.15)
    assert rdma.cdf_quantile(points, 1.0) == 10_000_000
    with pytest.raises(ValueError):
        rdma.cdf_quantile(points, 1.5)


def test_incast_mix_carries_its_share_of_capacity() -> None:
    kw = dict(hosts=320, fan_in=60, bytes_per_sender=500_000, load=0.02, nic_gbps=100, seed=4)
    entries = rdma.incast_entries("dcqcn", until_us=1e6, **kw)
    # 2% of 320 × 100 Gb/s in 60 × 500 KB incasts: 2,667 per second, Poisson (σ ≈ 52).
    expected = 0.02 * 320 * 100e9 / (8 * 60 * 500_000)
    assert abs(len(entries) - expected) < 4 * math.sqrt(expected)
    starts = [e["start_us"] for e in entries]
    assert starts == sorted(starts) and 0 < starts[0] and starts[-1] < 1e6
    for e in entries[:50]:
        assert e["pattern"] == "incast" and e["senders"] == 60 and e["size"] == {"fixed": 500_000}
        assert e["receiver"] == e["hosts"][0] and len(set(e["hosts"])) == 61
        assert all(0 <= h < 320 for h in e["hosts"]) and e["priority"] == 1 and e["class"] == "incast"
    # Receivers spread over the hosts rather than sticking to a few.
    assert len(Counter(e["receiver"] for e in entries)) > 250
    assert rdma.incast_entries("dcqcn", until_us=1e6, **kw) == entries
    assert rdma.incast_entries("dcqcn", until_us=1e6, **{**kw, "seed": 5}) != entries
    with pytest.raises(ValueError, match="fan_in must be between 1 and 15"):
        rdma.incast_entries("dcqcn", until_us=1e3, **{**kw, "hosts": 16})


def test_pause_time_sums_every_pause_column() -> None:
    queues = pd.DataFrame({"port": [0, 1], "pfc_paused_s_c0": [0.0, 0.001], "pfc_paused_s_c1": [0.002, 0.0], "drops": [5, 5]})
    assert rdma.pause_time_s(queues) == pytest.approx(0.003)
    assert math.isnan(rdma.pause_time_s(queues.drop(columns=["pfc_paused_s_c0", "pfc_paused_s_c1"])))


# --- hpcc-fct ---------------------------------------------------------------------------------


def test_full_scale_is_the_hpcc_simulators_fat_tree() -> None:
    doc = hpcc.scenario("hpcc", "websearch", 0.3, False, hpcc.FULL)
    spec = doc["topology"]["fuso_fabric"]
    tors = spec["pods"] * spec["tors_per_pod"]
    aggs = spec["pods"] * spec["aggs_per_pod"]
    hosts = tors * spec["hosts_per_tor"]
    links = hosts + tors * spec["aggs_per_pod"] + aggs * spec["spines"] // spec["aggs_per_pod"]
    # mix/fat.txt: 376 nodes, 56 switches, 480 links; 16 hosts per ToR.
    assert (hosts + tors + aggs + spec["spines"], tors + aggs + spec["spines"], links) == (376, 56, 480)
    assert spec["hosts_per_tor"] == 16 and hpcc.FULL.hosts == 320
    net = doc["network"]
    assert net["link"] == {"rate_gbps": 100.0, "delay_us": 1.0}
    assert {t: v["rate_gbps"] for t, v in net["tiers"].items()} == {"tor_agg": 400.0, "agg_spine": 400.0}
    # Every ToR and aggregation switch has as much capacity up as down (1:1).
    assert spec["hosts_per_tor"] * 100 == spec["aggs_per_pod"] * 400
    assert spec["tors_per_pod"] * 400 == spec["spines"] // spec["aggs_per_pod"] * 400
    # 6 links of 1 µs each way: a 12 µs base RTT plus serialisation.
    assert 12 < hpcc.FULL.max_base_rtt_us < 13
    assert doc["transports"]["hpcc"]["cc"] == "hpcc"


def test_reduced_scale_keeps_rates_and_subscription() -> None:
    spec = hpcc.REDUCED.topology["fuso_fabric"]
    assert hpcc.REDUCED.hosts == 16 and hpcc.REDUCED.fan_in == 15
    assert spec["hosts_per_tor"] * 100 == spec["aggs_per_pod"] * 400
    assert spec["tors_per_pod"] * 400 == spec["spines"] // spec["aggs_per_pod"] * 400
    assert hpcc.FULL.fan_in == 60


@pytest.mark.parametrize("workload", hpcc.WORKLOADS)
@pytest.mark.parametrize("load", hpcc.LOADS)
def test_background_load_and_window_follow_the_cdf_mean(workload: str, load: float) -> None:
    doc = hpcc.scenario("dcqcn", workload, load, False)
    (bg,) = doc["traffic"]
    assert (bg["pattern"], bg["arrival"], bg["load"], bg["class"]) == ("random_pairs", "poisson", load, "background")
    mean = {"websearch": 1_711_250.0, "fb_hadoop": 120_420.75}[workload]
    per_host = load * 100e9 / (8 * mean)
    window = bg["arrivals_until_ms"]
    expected_flows = per_host * 16 * window / 1e3
    assert expected_flows >= hpcc.REDUCED.target_flows * 0.999
    assert window == pytest.approx(max(5.0, 1e3 * 600 / (per_host * 16)))
    assert doc["duration_ms"] == pytest.approx(10 * window + 50)


def test_incast_configuration_adds_the_mix_and_dctcp_gets_a_bdp_window() -> None:
    doc = hpcc.scenario("dctcp", "fb_hadoop", 0.3, True, seed=2)
    bg, *incasts = doc["traffic"]
    assert all(e["senders"] == 15 and e["transport"] == "dctcp" for e in incasts)
    assert all(e["size"] == {"fixed": 500_000} for e in incasts)
    # The paper's 500 KB per sender, 15 senders: 2% of the hosts' capacity is 533 incasts
    # per second, a fifth of the full scale's rate (60 × 500 KB over 320 hosts).
    rate = 0.02 * 16 * 100e9 / 8 / (15 * 500_000)
    assert rate == pytest.approx(0.2 * 0.02 * 320 * 100e9 / 8 / (60 * 500_000))
    assert 1 <= len(incasts) <= 10  # 2.7 expected in the 5 ms window
    assert all(e["start_us"] < bg["arrivals_until_ms"] * 1e3 for e in incasts)
    # One BDP of the longest path at 100 Gb/s, in 1000-byte segments.
    assert doc["tcp"] == {"mss": 1000, "init_cwnd_packets": math.ceil(100e9 / 8 * hpcc.REDUCED.max_base_rtt_us
                                                                       * 1e-6 / 1000)}
    assert "transports" not in doc
    assert doc["network"]["queue"]["ecn_k_bytes"] == 300_000
    assert hpcc.scenario("dctcp", "fb_hadoop", 0.3, True, seed=2) == doc


@pytest.mark.parametrize("workload", hpcc.WORKLOADS)
def test_size_buckets_hold_equal_shares_of_flows(workload: str) -> None:
    edges = hpcc.bucket_edges(workload, 0.05)
    assert edges == sorted(set(edges)) and all(e == int(e) for e in edges)
    points = rdma.cdf_points(workload)
    xs, fs = zip(*points)
    shares = np.diff([0.0, *np.interp(edges, xs, fs), 1.0])
    # Twenty buckets of 5% of the flows each (edges rounded to whole bytes; no two
    # quantiles of these CDFs coincide).
    assert len(edges) == 19 and shares == pytest.approx(np.full(20, 0.05), abs=1e-3)


def _flows() -> pd.DataFrame:
    sizes = [1_000] * 10 + [50_000] * 10 + [-1] + [2_000_000] * 2 + [500_000] * 3
    n = len(sizes)
    ideal = np.full(n, 1e-5)
    slow = np.r_[np.arange(1, 11), np.full(10, 3.0), 1.0, 2.0, 2.0, 1.0, 1.0, 1.0]
    completed = np.ones(n, dtype=bool)
    completed[-1] = False
    classes = ["background"] * (n - 3) + ["incast"] * 3
    return pd.DataFrame({
        "flow_id": range(n), "class": classes, "size": sizes, "completed": completed,
        "started": True, "measured": True, "start_s": 0.0,
        "fct_s": np.where(completed, slow * ideal, np.nan), "ideal_fct_s": ideal,
    })


def test_measure_reports_percentiles_per_bucket() -> None:
    queues = pd.DataFrame({"pfc_paused_s_c1": [0.004, 0.001]})
    rows = hpcc.measure(_flows(), queues, [10_000.0, 100_000.0], 10e6)
    assert [r["bucket"] for r in rows] == ["< 10 KB", "10 KB–100 KB", "> 100 KB"]
    small, mid, large = rows
    assert (small["flows"], small["completed"]) == (10, 10)
    assert small["slowdown_p50"] == pytest.approx(5.5) and small["slowdown_p99"] == pytest.approx(9.91)
    assert small["slowdown_p95"] == pytest.approx(9.55)
    assert mid["slowdown_p95"] == pytest.approx(3.0)
    # The long-lived flow is in no bucket, the incast flows not in the background's.
    assert large["flows"] == 2 and large["slowdown_p50"] == pytest.approx(2.0)
    assert [r["size_max_bytes"] for r in rows] == [10_000.0, 100_000.0, 10e6]
    assert all(r["pause_ms"] == pytest.approx(5.0) and r["incast_flows"] == 3 for r in rows)
    assert all(r["censored"] == 0 for r in rows)


def _fct_table() -> pd.DataFrame:
    rows = []
    for cc, factor, pause in (("hpcc", 1.0, 0.0), ("dcqcn", 3.0, 9.0), ("timely", 2.0, 4.0), ("dctcp", 1.5, 1.0)):
        for size, base in ((10e3, 1.2), (100e3, 2.0), (10e6, 4.0)):
            rows.append({"workload": "fb_hadoop", "load": 0.3, "incast": True, "cc": cc, "bucket": "b",
                         "size_max_bytes": size, "flows": 10, "completed": 10, "slowdown_p50": base,
                         "slowdown_p95": base * factor, "slowdown_p99": base * factor * 2, "censored": 0,
                         "pause_ms": pause, "incast_flows": 30})
    return pd.DataFrame(rows, columns=hpcc.COLUMNS)


def test_fct_figure_has_a_panel_per_percentile_and_a_line_per_controller() -> None:
    fig = hpcc.plot_fct(_fct_table())
    assert len(fig.axes) == 3
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["HPCC", "DCQCN", "TIMELY", "DCTCP"]
    assert "95th" in fig.axes[1].get_title() and "FB_Hadoop, 30% load + incast" in fig.axes[1].get_title()
    assert "Li et al., SIGCOMM 2019" in fig._suptitle.get_text()


def test_short_flow_tail_and_pause_table() -> None:
    table = _fct_table()
    tail = hpcc.short_flow_tail(table)
    assert tail.idxmin() == "hpcc" and tail["dcqcn"] == pytest.approx((1.2 * 3 + 2.0 * 3) / 2)
    pauses = hpcc.pause_table(table)
    assert pauses.loc[("fb_hadoop", 0.3, True)].idxmax() == "dcqcn"


def test_experiments_are_registered() -> None:
    names = [e.name for e in experiments.all_experiments()]
    assert {"hpcc-fct", "dcqcn-fairness", "dcqcn-victim"} <= set(names)
    assert experiments.get("hpcc-fct").fn is hpcc.run_hpcc_fct
    assert len(hpcc.configurations()) == 8


# --- dcqcn-fairness and dcqcn-victim -----------------------------------------------------------


def test_fairness_scenario() -> None:
    doc = dcqcn.fairness_scenario(4)
    assert doc["topology"] == {"star": {"senders": 4}}
    assert doc["network"]["link"] == {"rate_gbps": 40.0, "delay_us": 1.0}
    # 40 Gb/s: Kmin 160 KB, Kmax 640 KB, buffer 16·40/50 MiB.
    assert doc["network"]["queue"]["ecn_red"] == {"kmin_bytes": 160_000, "kmax_bytes": 640_000, "pmax": 0.2}
    assert doc["network"]["buffer"]["bytes"] == int(12.8 * 1024 * 1024)
    (t,) = doc["traffic"]
    assert (t["transport"], t["size"], t["senders"], t["stagger_us"]) == ("dcqcn", "long_lived", 4, 5000.0)
    assert doc["transports"]["dcqcn"] == {"cc": "dcqcn", "retransmit": "go-back-n", "payload_bytes": 1000}
    # The window opens 20 ms after the last flow's start and lasts 20 ms.
    assert dcqcn.fairness_window_ms(4, dcqcn.FAIRNESS_REDUCED) == (35.0, 55.0)
    assert doc["duration_ms"] == 55.0 and doc["output"]["flow_sample_us"] == 500.0


def test_fairness_measure_on_synthetic_samples() -> None:
    times = np.arange(0, 11) * 1e-3  # 1 ms samples
    # Flow 7 at 30 Gb/s throughout, flow 9 at 10 Gb/s (from 5 ms on 30 Gb/s, unequal).
    acked7 = 30e9 / 8 * times
    acked9 = 10e9 / 8 * times
    samples = pd.DataFrame({"time_s": np.r_[times, times], "flow_id": [7] * 11 + [9] * 11, "subflow": 0,
                            "bytes_acked": np.r_[acked7, acked9]})
    flows = pd.DataFrame({"flow_id": [7, 9], "bytes_acked": [acked7[-1], acked9[-1]]})
    queues = pd.DataFrame({"node_kind": ["switch", "switch"], "peer": ["host0", "host1"],
                           "tx_bytes": [1.05 * (acked7[-1] + acked9[-1]), 123]})
    table = dcqcn.fairness_measure(samples, flows, queues, 2, (4.0, 10.0))
    row = dcqcn.converged(table).iloc[0]
    assert row["jain"] == pytest.approx((40 ** 2) / (2 * (30 ** 2 + 10 ** 2)))
    assert row["utilization"] == pytest.approx(1.0)
    assert row["wire_utilization"] == pytest.approx(1.05)
    assert sorted(table["flow"].unique()) == [0, 1]
    assert table[table["flow"] == 1]["rate_gbps"].to_numpy() == pytest.approx(10.0)
    fig = dcqcn.plot_fairness(table)
    assert "Jain 0.800" in fig.axes[0].get_title()


@pytest.mark.parametrize("senders", (2, 4, 8))
def test_victim_shares_only_an_upstream_link_with_the_incast(senders: int) -> None:
    doc = dcqcn.victim_scenario(senders, "dcqcn", dcqcn.VICTIM_REDUCED)
    h = doc["topology"]["leaf_spine"]["hosts_per_leaf"]
    assert doc["topology"]["leaf_spine"]["spines"] == 1 and doc["topology"]["leaf_spine"]["leaves"] == 3
    incast, victim = doc["traffic"]
    leaf = lambda host: host // h  # noqa: E731
    senders_ = [x for x in incast["hosts"] if x != incast["receiver"]]
    assert len(senders_) == incast["senders"] == senders
    assert leaf(incast["receiver"]) == 2 and all(leaf(s) in (0, 1) for s in senders_)
    # The victim leaves from leaf 0 beside one incast sender and ends on leaf 1: it shares
    # leaf 0's uplink with the incast and nothing on its way down.
    assert leaf(victim["src"]) == 0 and leaf(victim["dst"]) == 1
    assert sum(leaf(s) == 0 for s in senders_) == 1 and victim["dst"] not in senders_
    assert victim["src"] not in senders_
    assert doc["network"]["tiers"]["fabric"]["rate_gbps"] == 40.0
    assert doc["transports"] == {"dcqcn": {"cc": "dcqcn", "retransmit": "go-back-n", "payload_bytes": 1000}}
    assert dcqcn.victim_scenario(senders, "roce", dcqcn.VICTIM_REDUCED)["transports"]["roce"]["cc"] == "roce"
    with pytest.raises(ValueError, match="unknown mode"):
        dcqcn.victim_scenario(senders, "tcp")


def test_victim_measure_and_figure() -> None:
    flows = pd.DataFrame({"class": ["incast"] * 4 + ["victim"], "goodput_bps": [9e9, 9e9, 9e9, 9e9, 5e9]})
    queues = pd.DataFrame({"drops": [0, 0], "pfc_paused_s_c1": [0.002, 0.0]})
    row = dcqcn.victim_measure(flows, queues, 4, "roce")
    assert row == {"senders": 4, "mode": "roce", "victim_gbps": 5.0, "victim_share_gbps": 30.0,
                   "incast_gbps": 36.0, "pause_ms": pytest.approx(2.0), "drops": 0}
    table = pd.DataFrame([row, {**row, "mode": "dcqcn", "victim_gbps": 28.0},
                          {**row, "senders": 8, "victim_share_gbps": 35.0}], columns=dcqcn.VICTIM_COLUMNS)
    labels = [t.get_text() for t in dcqcn.plot_victim(table).axes[0].get_legend().get_texts()]
    assert labels == ["PFC + DCQCN", "PFC alone", "without HOL blocking"]


# --- The builders against today's simulator ---------------------------------------------------


def tcp_stand_in(doc: dict) -> dict:
    """The scenario without what the lossless fabric adds (shared buffer, PFC, RED-style
    marking, RoCE transports): RED becomes a step at Kmin and every RoCE transport TCP
    DCTCP, so the rest of it can be checked, and run, by any build."""
    d = copy.deepcopy(doc)
    net = d["network"]
    net.pop("buffer")
    net.pop("pfc")
    for q in [net["queue"], *(t["queue"] for t in net.get("tiers", {}).values())]:
        red = q.pop("ecn_red", None)
        if red:
            q["ecn_k_bytes"] = red["kmin_bytes"]
    d["transports"] = {name: {"cc": "dctcp"} for name in d.get("transports", {})}
    return d


def _all_scenarios() -> list[dict]:
    docs = [hpcc.scenario(cc, w, load, inc, scale)
            for cc in rdma.CCS for w, load, inc in hpcc.configurations() for scale in (hpcc.REDUCED, hpcc.FULL)
            if load == 0.3 or not inc]
    docs.append(dcqcn.fairness_scenario(16, dcqcn.FAIRNESS_FULL))
    docs += [dcqcn.victim_scenario(n, m, dcqcn.VICTIM_FULL) for n in (2, 16) for m in dcqcn.VICTIM_MODES]
    return docs


def test_builders_are_valid_apart_from_the_lossless_fields() -> None:
    for doc in _all_scenarios():
        assert validate(tcp_stand_in(doc)) == [], doc["name"]


def test_measures_read_the_tables_a_run_writes() -> None:
    small_incasts = dataclasses.replace(hpcc.REDUCED, incast_bytes=100_000)
    doc = tcp_stand_in(hpcc.scenario("dctcp", "fb_hadoop", 0.3, True, small_incasts, window_ms=1.0))
    res = run(doc)
    rows = hpcc.measure(res.flows, res.queues, hpcc.bucket_edges("fb_hadoop", 0.1), 1e7)
    assert len(rows) == 10 and sum(r["flows"] for r in rows) == (res.flows["class"] == "background").sum()
    assert all(r["slowdown_p50"] >= 1 and r["slowdown_p99"] >= r["slowdown_p95"] >= r["slowdown_p50"] for r in rows)
    assert rows[0]["incast_flows"] > 0 and math.isnan(rows[0]["pause_ms"])  # no PFC: no pause columns
    scale = dcqcn.FairnessScale(flows=(2,), stagger_ms=1.0, settle_ms=2.0, measure_ms=2.0, sample_us=100.0)
    res = run(tcp_stand_in(dcqcn.fairness_scenario(2, scale)))
    row = dcqcn.converged(dcqcn.fairness_measure(res.flow_samples, res.flows, res.queues, 2,
                                                 dcqcn.fairness_window_ms(2, scale))).iloc[0]
    assert 0.5 <= row["jain"] <= 1 and 0.9 < row["utilization"] < row["wire_utilization"] < 1.1
    res = run(tcp_stand_in(dcqcn.victim_scenario(4, "dcqcn", dcqcn.VictimScale((4,), 3.0, 1.0))))
    m = dcqcn.victim_measure(res.flows, res.queues, 4, "dcqcn")
    # Without PFC nothing holds the victim back: it gets at least its share of the uplink.
    assert m["victim_gbps"] > 0.9 * m["victim_share_gbps"] and 30 < m["incast_gbps"] <= 40
    # It shares leaf 0's 40 Gb/s uplink with the incast flow from host 0, and nothing else.
    rates = res.flows.set_index("src")["goodput_bps"] / 1e9
    assert m["victim_gbps"] == pytest.approx(rates[1]) and rates[1] + rates[0] <= 40.5


# --- Behaviours (need the RoCE transports and the lossless fabric) ----------------------------


@needs_roce
def test_hpcc_has_the_lowest_short_flow_tail_and_windowless_controllers_pause() -> None:
    table = pd.concat(
        [hpcc.run_configuration("fb_hadoop", 0.3, True, hpcc.REDUCED, seed=1)], ignore_index=True
    )
    tail = hpcc.short_flow_tail(table, below_bytes=100e3, p="p95")
    assert set(tail.index) == set(rdma.CCS)
    assert tail.idxmin() == "hpcc", tail
    # DCQCN without a window triggers PFC where a window prevents it (the simulator's
    # issue #14). Which of the windowless two pauses most is not asserted: at this scale
    # TIMELY edges DCQCN (1.09 against 1.05 ms).
    pauses = table.drop_duplicates("cc").set_index("cc")["pause_ms"]
    assert pauses["dcqcn"] > 0 and pauses["timely"] > 0, pauses
    assert pauses["dcqcn"] > 10 * max(pauses["hpcc"], pauses["dctcp"], 1e-3), pauses
    assert (table["censored"] == 0).all()


@needs_roce
def test_dcqcn_flows_converge_to_a_fair_share() -> None:
    row = dcqcn.converged(dcqcn.run_dcqcn_fairness(False, 1)).iloc[0]
    assert row["jain"] >= 0.95 and row["wire_utilization"] >= 0.9, row


@needs_roce
def test_victim_is_slowed_by_pfc_alone_and_recovers_with_congestion_control() -> None:
    # Measured at reduced scale (20–40 ms): PFC alone leaves the victim 18.7 Gb/s of a
    # 30–35 Gb/s share (0.53–0.62); DCQCN 28.2–30.0 (21.7–22.7 when marks were made at
    # enqueue, a queue's delay later), HPCC 26.7–28.0, with no pauses at all.
    table = dcqcn.run_dcqcn_victim(False, 1).set_index(["senders", "mode"])
    for n in dcqcn.VICTIM_REDUCED.senders:
        share = dcqcn.RATE_GBPS - dcqcn.RATE_GBPS / n
        alone = table.loc[(n, "roce"), "victim_gbps"]
        assert alone < 0.65 * share
        assert table.loc[(n, "roce"), "pause_ms"] > 0
        for mode in ("dcqcn", "hpcc"):
            assert table.loc[(n, mode), "victim_gbps"] > max(1.1 * alone, 0.6 * share)
            assert table.loc[(n, mode), "pause_ms"] < 0.1 * table.loc[(n, "roce"), "pause_ms"]
        assert (table["drops"] == 0).all()


# --- Bench scenarios ---------------------------------------------------------------------------


@pytest.mark.parametrize("cc", ("dcqcn", "hpcc"))
def test_bench_scenarios_use_the_experiments_fabric_at_10g(cc: str) -> None:
    import tomllib
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "bench"
    doc = tomllib.loads((bench / f"fattree8-{cc}-pfc.toml").read_text(encoding="utf-8"))
    base = tomllib.loads((bench / "fattree8-dctcp.toml").read_text(encoding="utf-8"))
    assert doc["topology"] == base["topology"] and doc["network"]["link"] == base["network"]["link"]
    net = rdma.network(cc, 10, {})
    for key in ("queue", "buffer", "pfc"):
        assert doc["network"][key] == net[key], key
    assert doc["transports"] == rdma.transports(cc)
    (t,) = doc["traffic"]
    assert (t["transport"], t["load"], t["size"], t["priority"] if "priority" in t else 0) == (
        cc, 0.5, {"cdf": "websearch"}, rdma.data_priority(cc))


def test_roce_probe_only_counts_an_objection_to_the_cc(monkeypatch: pytest.MonkeyPatch) -> None:
    import manypath.runner

    def refuse(message: str):  # type: ignore[no-untyped-def]
        def validate(scenario: object) -> list[tuple[str, str]]:
            raise ValueError(message)
        return validate

    monkeypatch.setattr(manypath.runner, "validate", refuse("transports.dcqcn.cc: unknown variant `dcqcn` (line 8)"))
    assert rdma.roce_supported() is False
    # Known cc, another objection (e.g. no PFC and no retransmission): supported.
    monkeypatch.setattr(manypath.runner, "validate", refuse("network.pfc: a RoCE transport needs PFC or ..."))
    assert rdma.roce_supported() is True
    monkeypatch.setattr(manypath.runner, "validate", lambda scenario: [])
    assert rdma.roce_supported() is True
