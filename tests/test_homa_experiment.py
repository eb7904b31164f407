"""The homa-slowdown experiment's setup: the paper's topology and workloads."""

from __future__ import annotations

import manypath
from manypath.experiments import homa


def test_full_scale_is_the_papers_leaf_spine() -> None:
    doc = homa.scenario("homa", "W4", homa.FULL)
    assert doc["topology"] == {"leaf_spine": {"leaves": 9, "spines": 4, "hosts_per_leaf": 16}}
    assert homa.FULL.hosts == 144
    assert doc["network"]["link"]["rate_gbps"] == 10 and doc["network"]["tiers"]["fabric"]["rate_gbps"] == 40
    assert doc["transports"]["homa"]["homa_rtt_bytes"] == 9_700
    assert doc["network"]["queue"]["priority_levels"] == 8
    manypath.validate(doc)


def test_workloads_are_drawn_as_step_functions_with_their_headers_means() -> None:
    # The step means written in the shipped files' headers.
    means = {"W1": 189.2, "W2": 440.8, "W3": 2929.0, "W4": 127_796.6, "W5": 2_547_267.9}
    for w, mean in means.items():
        assert abs(homa.step_mean(homa.cdf_points(w)) - mean) < 0.1 * max(1.0, mean / 1000), w
        assert "cdf_step" in homa.scenario("dctcp", w)["traffic"][0]["size"]


def test_every_compared_transport_runs_on_the_same_arrivals() -> None:
    docs = [homa.scenario(t, "W2") for t in homa.TRANSPORTS]
    # (pFabric's connection pool leaves the arrivals as they are.)
    apart = {"transport", "connection_pool"}
    traffic = [{k: v for k, v in d["traffic"][0].items() if k not in apart} for d in docs]
    assert all(t == traffic[0] for t in traffic)
    assert [d["seed"] for d in docs] == [1] * len(docs)


def test_bucket_edges_are_listed_sizes_in_order() -> None:
    edges = homa.bucket_edges("W3", 0.1)
    sizes = {x for x, _ in homa.cdf_points("W3")}
    assert edges == sorted(edges) and set(edges) <= sizes


def test_pfabric_runs_on_its_13_packet_priority_queues() -> None:
    doc = homa.scenario("pfabric", "W4", homa.FULL)
    assert doc["transports"]["pfabric"]["cc"] == "pfabric"
    assert doc["network"]["queue"] == {"limit_bytes": 13 * 1500 - 1, "pfabric": True}
    assert doc["network"]["host_queue"] == {"pfabric": True}
    assert doc["traffic"][0]["connection_pool"] is True
    manypath.validate(doc)
