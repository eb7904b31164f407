"""RoCE transports through the Python API: their columns and time series."""

from __future__ import annotations

from typing import Any

from manypath import run


def scenario(cc: str) -> dict[str, Any]:
    return {
        "duration_ms": 5,
        "stop_when_done": False,
        "topology": {"star": {"senders": 2}},
        "network": {
            "link": {"rate_gbps": 40, "delay_us": 1},
            "queue": {"limit_bytes": 20_000_000, "ecn_k_bytes": 100_000},
            "host_queue": {"limit_packets": 4},
        },
        "transports": {"qp": {"cc": cc}},
        "output": {"flow_sample_us": 100},
        "traffic": [{"pattern": "incast", "senders": 2, "transport": "qp", "size": "long_lived"}],
    }


def test_dcqcn_flows_report_cnps_and_their_progress() -> None:
    res = run(scenario("dcqcn"))
    flows = res.flows
    assert {"naks", "cnps"} <= set(flows.columns)
    assert (flows["cnps"] > 0).all()
    assert (flows["naks"] == 0).all()
    samples = res.flow_samples
    assert set(samples["flow_id"]) == set(flows["flow_id"])
    for _, g in samples.groupby("flow_id"):
        assert g["bytes_acked"].is_monotonic_increasing
        assert g["bytes_acked"].iloc[-1] > 0


def test_tcp_runs_keep_their_columns() -> None:
    s = scenario("dctcp")
    s["transports"] = {}
    s["traffic"][0]["transport"] = "dctcp"
    assert "cnps" not in run(s).flows.columns
