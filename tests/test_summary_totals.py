"""The summary's totals beyond FCTs: goodput of long-lived flows per class over the
measurement window (printed, JSON, HTML report) and the congestion signals a run counted
(PFC pauses, CNPs, trims, NACKs), shown only when present."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import manypath
from manypath import report, report_html, totals
from manypath.cli import app
from manypath.results import Results

ROOT = Path(__file__).resolve().parent.parent
BBR_SWIFT = ROOT / "scenarios" / "bbr-swift-dumbbell.toml"
cli = CliRunner()


@pytest.fixture(scope="module")
def bbr_swift() -> Results:
    # Samples of every flow's bytes acknowledged each millisecond: one falls on the
    # measurement window's start (10 ms), which gives each flow's bytes in the window
    # independently of the goodput column the summary reads.
    return manypath.run(BBR_SWIFT, overrides={"output.flow_sample_us": 1000})


def _window_bytes_from_samples(res: Results, at_s: float) -> dict[str, int]:
    s = res.flow_samples
    at = s[(s["time_s"] - at_s).abs() < 1e-9].groupby("flow_id")["bytes_acked"].sum()
    delta = res.flows.set_index("flow_id")["bytes_acked"] - at.reindex(res.flows["flow_id"]).to_numpy()
    by_class = res.flows.set_index("flow_id")["class"]
    return {str(c): int(delta[by_class == c].sum()) for c in sorted(by_class.unique())}


def test_long_lived_goodput_per_class_is_each_classs_bytes_in_the_window(bbr_swift: Results) -> None:
    doc = bbr_swift.summary()["long_lived_goodput"]
    assert doc is not None
    assert (doc["from_s"], doc["end_s"]) == (0.01, 0.05)
    window = doc["end_s"] - doc["from_s"]
    assert doc["window_s"] == window
    classes = doc["classes"]
    assert list(classes) == ["bbr", "swift"]
    # Exactly the bytes acknowledged between the sample at 10 ms and the end.
    assert {c: v["bytes"] for c, v in classes.items()} == _window_bytes_from_samples(bbr_swift, 0.01)
    # BBR takes the link from Swift: tens of MB against about one.
    assert classes["bbr"]["bytes"] > 40e6 and classes["swift"]["bytes"] < 2e6
    for c, v in classes.items():
        assert v["flows"] == 1
        assert v["goodput_gbps"] == pytest.approx(v["bytes"] * 8 / window / 1e9, rel=1e-12)
        # One flow per class, started before the window: its goodput column is the window's.
        flow = bbr_swift.flows[bbr_swift.flows["class"] == c].iloc[0]
        assert v["goodput_gbps"] == pytest.approx(flow["goodput_bps"] / 1e9, rel=1e-9)
        assert v["bytes"] < flow["bytes_acked"], "the warm-up's bytes are left out"
    # The classes add up to the whole, and the shares to one.
    assert sum(v["bytes"] for v in classes.values()) == doc["bytes"]
    assert sum(v["goodput_gbps"] for v in classes.values()) == pytest.approx(doc["bytes"] * 8 / window / 1e9,
                                                                            rel=1e-12)
    assert doc["goodput_gbps"] == pytest.approx(doc["bytes"] * 8 / window / 1e9, rel=1e-12)
    assert sum(v["share"] for v in classes.values()) == pytest.approx(1.0, abs=1e-12)
    assert classes["bbr"]["share"] == pytest.approx(classes["bbr"]["bytes"] / doc["bytes"], rel=1e-12)


def test_the_printed_summary_has_the_long_lived_table(bbr_swift: Results) -> None:
    summary = bbr_swift.summary()
    doc = summary["long_lived_goodput"]
    text = report.run_summary(summary, bbr_swift.counters)
    lines = text.splitlines()
    i = lines.index("long-lived flows, over the measurement window 10.000 to 50.000 ms:")
    assert lines[i + 1] == "class  flows  delivered MB  goodput Gbit/s   share"
    rows = {}
    for line in lines[i + 2:i + 5]:
        m = re.fullmatch(r"(\w+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)%", line)
        assert m, line
        rows[m.group(1)] = [float(g) for g in m.groups()[1:]]
    assert list(rows) == ["bbr", "swift", "all"]
    for c, (flows, mb, gbps, share) in rows.items():
        want = doc if c == "all" else doc["classes"][c]
        assert mb == round(want["bytes"] / 1e6, 3)
        assert gbps == round(want["goodput_gbps"], 3)
        assert share == (100.0 if c == "all" else round(100 * want["share"], 1))
    # Printed values add up within their rounding.
    assert rows["bbr"][1] + rows["swift"][1] == pytest.approx(rows["all"][1], abs=0.0015)
    assert rows["bbr"][2] + rows["swift"][2] == pytest.approx(rows["all"][2], abs=0.0015)
    assert rows["bbr"][3] + rows["swift"][3] == pytest.approx(100.0, abs=0.1)
    assert lines[i + 5] == ""


def test_a_class_without_long_lived_flows_has_no_row(tmp_path: Path) -> None:
    text = BBR_SWIFT.read_text().replace('transport = "swift"\nclass = "swift"\nsize = "long_lived"',
                                          'transport = "swift"\nclass = "swift"\nsize = { fixed = 200000 }')
    assert 'size = { fixed = 200000 }' in text
    res = manypath.run(text)
    summary = res.summary()
    doc = summary["long_lived_goodput"]
    assert list(doc["classes"]) == ["bbr"]
    assert doc["classes"]["bbr"]["share"] == 1.0
    printed = report.run_summary(summary, res.counters)
    table = printed[printed.index("long-lived flows, over"):].split("\n\n")[0].splitlines()
    assert len(table) == 3 and table[2].startswith("bbr ")  # no "swift", no "all" row
    assert "swift" in printed  # in the FCT table, as a class with finished flows
    # No long-lived flow at all: nothing to show.
    finite = text.replace('size = "long_lived"', "size = { fixed = 200000 }")
    res = manypath.run(finite)
    assert res.summary()["long_lived_goodput"] is None
    assert "long-lived flows, over" not in report.run_summary(res.summary(), res.counters)


def test_the_json_summary_carries_long_lived_goodput_and_signals() -> None:
    out = cli.invoke(app, ["run", str(BBR_SWIFT), "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)["summary"]
    ll = doc["long_lived_goodput"]
    assert set(ll) == {"from_s", "end_s", "window_s", "bytes", "goodput_gbps", "classes"}
    assert set(ll["classes"]) == {"bbr", "swift"}
    assert set(ll["classes"]["bbr"]) == {"flows", "bytes", "goodput_gbps", "share"}
    assert doc["congestion_signals"] == {}


def test_flow_level_long_lived_goodput_is_what_the_model_delivered() -> None:
    res = manypath.run(BBR_SWIFT.read_text().replace('cc = "bbr"', 'cc = "reno"').replace('cc = "swift"',
                                                                                            'cc = "reno"'),
                       level="flow")
    doc = res.summary()["long_lived_goodput"]
    assert doc is not None
    got = res.flows.groupby("class")["bytes_acked"].sum()
    assert {c: v["bytes"] for c, v in doc["classes"].items()} == {str(c): int(b) for c, b in got.items()}
    assert "long-lived flows, over the measurement window" in report.run_summary(res.summary(), res.counters)


def test_window_bytes_of_a_flow_started_in_the_warm_up_come_from_its_window_goodput() -> None:
    flows = pd.DataFrame({"class": ["a", "a", "b"], "size": [-1, -1, -1], "start_s": [0.0, 0.02, 0.03],
                          "started": [True, True, False], "bytes_acked": [50_000, 5_000, 0],
                          "goodput_bps": [8e6, 5_000 * 8 / 0.03, 0.0]})
    # Flow 0 started in the warm-up: 1,000 bytes/ms over the 40 ms window (not the 50,000
    # it acknowledged since its start). Flow 1 started inside: all it acknowledged. Flow
    # 2 never started: no row for its class.
    got = totals.window_bytes(flows, 0.05, 0.01)
    assert list(got) == [40_000, 5_000, 0]
    table = totals.long_lived_goodput(flows, 0.05, 0.01)
    assert list(table.index) == ["a"]
    assert table.loc["a", "bytes"] == 45_000
    assert table.loc["a", "goodput_gbps"] == pytest.approx(45_000 * 8 / 0.04 / 1e9)


# --- Congestion signals ---------------------------------------------------------------------


def _signal_lines(text: str) -> dict[str, str]:
    labels = {label for _, label, _ in totals.SIGNALS}
    out = {}
    for line in text.splitlines():
        for label in labels:
            if re.fullmatch(rf"{re.escape(label)} +[\d,]+", line):
                out[label] = line
    return out


PFC_INCAST = """\
name = "pfc-incast"
duration_ms = 1
stop_when_done = false
[topology.star]
senders = 4
[network.link]
rate_gbps = 10
delay_us = 1
[network.buffer]
bytes = 200000
[network.pfc]
[transports.qp]
cc = "{cc}"
[[traffic]]
pattern = "incast"
senders = 4
transport = "qp"
size = {{ fixed = 200000 }}
"""


def _printed(res: Results) -> str:
    return report.run_summary(res.summary(), res.counters)


def test_signals_appear_only_when_a_run_counted_them() -> None:
    plain = manypath.run(BBR_SWIFT)
    assert plain.summary()["congestion_signals"] == {}
    assert _signal_lines(_printed(plain)) == {}
    # PFC and plain RoCE: pauses and resumes, no CNP (no marking), no NAK (lossless).
    pfc = manypath.run(PFC_INCAST.format(cc="roce"))
    signals = pfc.summary()["congestion_signals"]
    assert signals == {"pfc_pauses": pfc.counters["pfc_pauses"], "pfc_resumes": pfc.counters["pfc_resumes"]}
    assert signals["pfc_pauses"] > 0
    q = pfc.queues
    assert signals["pfc_pauses"] == int(q[[c for c in q.columns if c.startswith("pfc_pauses_sent")]].sum().sum())
    lines = _signal_lines(_printed(pfc))
    assert lines == {"PFC pauses": f"PFC pauses   {signals['pfc_pauses']:,}",
                     "PFC resumes": f"PFC resumes  {signals['pfc_resumes']:,}"}
    # The lines sit with the run's totals, after the timeouts.
    text = _printed(pfc)
    assert text.index("timeouts") < text.index("PFC pauses") < text.index("events")


def test_cnps_are_the_flows_cnps() -> None:
    from test_roce import scenario

    s: dict[str, Any] = scenario("dcqcn")
    s["duration_ms"] = 1
    res = manypath.run(s)
    signals = res.summary()["congestion_signals"]
    assert signals["cnps"] == int(res.flows["cnps"].sum()) > 0
    assert "pfc_pauses" not in signals and "nacks" not in signals
    assert _signal_lines(_printed(res))["CNPs"] == f"CNPs         {signals['cnps']:,}"


def test_trims_and_nacks_are_ndps() -> None:
    from test_ndp import STAR

    res = manypath.run(STAR)
    signals = res.summary()["congestion_signals"]
    assert signals == {"trims": int(res.queues["trimmed"].sum()), "nacks": int(res.flows["nacks"].sum())}
    assert signals["trims"] > 0 and signals["nacks"] > 0
    lines = _signal_lines(_printed(res))
    assert set(lines) == {"trims", "NACKs"}
    assert lines["NACKs"] == f"NACKs        {signals['nacks']:,}"


# --- The HTML report ------------------------------------------------------------------------


def test_the_run_report_shows_long_lived_goodput_and_signals(bbr_swift: Results, tmp_path: Path) -> None:
    bbr_swift.to_parquet(tmp_path / "run")
    page = report_html.render(tmp_path / "run")
    section = page[page.index("<h2>Long-lived flows</h2>"):page.index("<h2>Figures</h2>")]
    assert "measurement window (10 to 50 ms)" in section
    doc = bbr_swift.summary()["long_lived_goodput"]
    rows = re.findall(r"<tr><td>(\w+)</td><td>(\d+)</td><td>([\d.,]+)</td><td>([\d.,]+)</td><td>([\d.]+)%</td></tr>",
                      section)
    assert [r[0] for r in rows] == ["bbr", "swift", "all"]
    bbr = rows[0]
    assert float(bbr[2]) == pytest.approx(doc["classes"]["bbr"]["bytes"] / 1e6, rel=1e-3)
    assert float(bbr[3]) == pytest.approx(doc["classes"]["bbr"]["goodput_gbps"], rel=1e-3)
    assert float(bbr[4]) == round(100 * doc["classes"]["bbr"]["share"], 1)
    assert "PFC pauses" not in page
    pfc = manypath.run(PFC_INCAST.format(cc="roce"))
    pfc.to_parquet(tmp_path / "pfc")
    page = report_html.render(tmp_path / "pfc")
    assert f"<tr><td>PFC pauses</td><td>{pfc.counters['pfc_pauses']}</td></tr>" in page
    assert "<h2>Long-lived flows</h2>" not in page


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
