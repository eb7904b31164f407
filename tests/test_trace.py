"""Event traces (``output.trace``): counts match the queue table, occupancy is exact,
the Parquet table is typed, ``manypath trace`` summarises it and the report plots it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from manypath import load, run
from manypath.cli import app
from manypath.traces import occupancy, summarise

BOTTLENECK = {"node": "left", "peer": "right"}


def _scenario(trace: dict[str, Any], *, transport: str = "dctcp") -> dict[str, Any]:
    return {
        "name": "trace",
        "seed": 5,
        "duration_ms": 20,
        "topology": {"dumbbell": {"pairs": 3}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 5},
                    "queue": {"limit_packets": 12, "ecn_k_packets": 6}},
        "traffic": [
            {"pattern": "pair", "src": i, "dst": 3 + i, "transport": transport, "class": "c",
             "size": {"fixed": 400_000}}
            for i in range(3)
        ],
        "output": {"trace": trace},
    }


def _port(res: Any) -> Any:
    q = res.queues
    return q[(q["node"] == "left") & (q["peer"] == "right")].iloc[0]


@pytest.mark.parametrize("transport", ["dctcp", "tcp"])
def test_event_counts_and_peak_occupancy_are_the_queue_tables(transport: str) -> None:
    res = run(_scenario({"ports": [BOTTLENECK]}, transport=transport))
    port = _port(res)
    assert res.trace is not None
    s = summarise(res.trace, res.queues).set_index("port").loc[int(port["port"])]
    assert s["dequeue"] == port["tx_packets"]
    assert s["drop"] == port["drops"]
    assert s["mark"] == port["ecn_marks"]
    assert s["peak_packets"] == port["max_packets"]
    assert s["peak_bytes"] == port["max_bytes"]
    if transport == "dctcp":
        assert s["mark"] > 0
    else:
        assert s["drop"] > 0
    occ = occupancy(res.trace, int(port["port"]))
    assert occ["time_s"].is_monotonic_increasing
    assert occ["queue_packets"].iloc[-1] == 0, "the queue drains by the end"


def test_the_trace_is_typed_parquet_and_summarised_by_the_cli(tmp_path: Path) -> None:
    res = run(_scenario({"ports": [BOTTLENECK]}))
    res.to_parquet(tmp_path)
    back = load(tmp_path)
    assert back.trace is not None and len(back.trace) == len(res.trace)
    types = back.trace.dtypes.astype(str).to_dict()
    assert types["time_ps"] == "uint64" and types["port"] == "uint32"
    assert types["queue_packets"] == "uint64" and types["event"] == "category"
    out = CliRunner().invoke(app, ["trace", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert "left" in out.output and "right" in out.output and "peak_packets" in out.output


def test_the_cli_says_when_a_run_has_no_trace(tmp_path: Path) -> None:
    s = _scenario({"ports": [BOTTLENECK]})
    del s["output"]
    run(s).to_parquet(tmp_path)
    out = CliRunner().invoke(app, ["trace", str(tmp_path)])
    assert out.exit_code != 0 and "no trace.parquet" in out.output


def test_the_report_plots_the_traced_queue(tmp_path: Path) -> None:
    from manypath import report_html

    run(_scenario({"ports": [BOTTLENECK]})).to_parquet(tmp_path)
    assert "event trace" in report_html.render(tmp_path)


def test_the_cap_and_window_hold() -> None:
    res = run(_scenario({"ports": [BOTTLENECK], "max_events": 100}))
    assert len(res.trace) == 100 and res.counters["trace_missed"] > 0
    res = run(_scenario({"ports": [BOTTLENECK], "from_us": 50, "until_us": 80}))
    t = res.trace["time_s"]
    assert len(t) and t.min() >= 50e-6 and t.max() < 80e-6


def test_a_traced_port_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match=r"output\.trace\.ports\[0\]\.peer: .*has no link to"):
        run(_scenario({"ports": [{"node": "left", "peer": "host4"}]}))


def test_a_trace_cap_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match=r"output\.trace\.max_events: must be a positive whole number, got 0"):
        run(_scenario({"ports": [BOTTLENECK], "max_events": 0}))
