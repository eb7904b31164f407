from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from typer.testing import CliRunner

import manypath
from manypath import report_html
from manypath.cli import app
from manypath.results import Results

runner = CliRunner()

SWEEP = """\
name = "incast-sweep"
seeds = [1, 2]

[scenario]
name = "incast"
duration_ms = 2000
[scenario.topology.star]
senders = 8
[scenario.network.link]
rate_gbps = 10
delay_us = 10
[scenario.network.queue]
limit_packets = 100
[[scenario.traffic]]
pattern = "incast"
transport = "tcp"
class = "incast"
receiver = 0
senders = 4
size = { fixed = 131072 }

[grid]
"traffic.0.senders" = [2, 6]
"network.queue.limit_packets" = [20, 100]
"""

# Counts the images the browser decoded; --dump-dom prints the DOM after the load event,
# so the title it shows is what the page looked like once everything had loaded.
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  document.title = "images " + imgs.filter(i => i.complete && i.naturalWidth > 0).length + "/" + imgs.length;
});
</script>"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    (root / "sweep.toml").write_text(SWEEP)
    summary = manypath.sweep(root / "sweep.toml", out=root / "out", jobs=1)
    assert summary.ok
    return root / "out"


def _images(text: str) -> list[str]:
    return re.findall(r'<img [^>]*src="([^"]+)"', text)


def assert_self_contained(text: str) -> None:
    assert all(src.startswith("data:image/png;base64,") for src in _images(text))
    # Nothing to fetch: no remote (or local) stylesheet, script or image.
    assert not re.search(r'(src|href)="(?!data:)', text)


def test_run_report(results: Results, tmp_path: Path) -> None:
    results.to_parquet(tmp_path)
    path = report_html.write_report(tmp_path)
    text = path.read_text()
    assert path == tmp_path / "report.html"
    assert "hand-made" in text and "short" in text and "bulk" in text
    assert len(_images(text)) == 5
    assert_self_contained(text)


def test_sweep_report(sweep_dir: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(sweep_dir), "--out", str(tmp_path / "r.html"), "--json"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.html").read_text()
    assert "incast-sweep" in text
    assert "senders=2, limit_packets=20" in text
    assert text.count("<tr>") >= 8 + 4
    assert len(_images(text)) >= 4
    assert_self_contained(text)
    # Two seeds per point: every statistic with its interval, figures with error bars.
    assert re.search(r"<td>[\d.,]+ \[[\d.,]+, [\d.,]+\]</td>", text)
    assert "mean over seeds (n = 2), 95% confidence interval" in text
    assert "<th>unfinished</th>" in text and "<th>started</th>" in text
    # The base scenario (the manifest's, or a run's scenario) and the provenance section.
    base = text.index("<h2>Base scenario</h2>")
    assert 'name = &quot;incast&quot;' in text[base:] and "[[traffic]]" in text[base:]
    assert "<h2>Provenance</h2>" in text


def test_sweep_report_shows_the_manifests_base_scenario(tmp_path: Path) -> None:
    manifest = {"name": "s", "current": 2, "generations": [
        {"generation": 1, "base_sha256": "aaa", "base_scenario": {"name": "old", "duration_ms": 5}},
        {"generation": 2, "base_sha256": "bbb", "base_scenario": {"name": "new", "duration_ms": 7}},
    ]}
    (tmp_path / "sweep.json").write_text(json.dumps(manifest))
    shown = SimpleNamespace(generation=2, runs=pd.DataFrame({"run_id": []}))
    text = "".join(report_html._base_scenario(tmp_path, shown))  # type: ignore[arg-type]
    assert "bbb" in text and "duration_ms = 7" in text
    assert "aaa" not in text and "old" not in text
    pooled = SimpleNamespace(generation=None, mixed=True, runs=shown.runs)
    text = "".join(report_html._base_scenario(tmp_path, pooled))  # type: ignore[arg-type]
    assert "aaa" in text and "bbb" in text


def test_sweep_report_shows_provenance_of_its_runs(tmp_path: Path) -> None:
    for i, (version, when) in enumerate([("0.2.0", "2026-01-02T00:00:00+00:00"),
                                         ("0.2.0", "2026-01-01T00:00:00+00:00")]):
        (tmp_path / f"r{i}").mkdir()
        (tmp_path / f"r{i}" / "provenance.json").write_text(json.dumps(
            {"manypath_version": version, "source_revision": "abc123", "ran_at": when,
             "scenario_sha256": f"d{i}", "python": "3.11"}))
    runs = pd.DataFrame({"run_id": ["r0", "r1", "r2"]})
    text = "".join(report_html._provenance(tmp_path, runs))
    assert "2 of 3" in text and "0.2.0" in text and "abc123" in text
    assert "2026-01-01T00:00:00+00:00 to 2026-01-02T00:00:00+00:00" in text


def test_run_report_shows_unfinished_flows(results: Results, tmp_path: Path) -> None:
    # The bulk class's unfinished flow gets a size: censored, no longer long-lived.
    results.flows.loc[3, "size"] = 50_000
    results.to_parquet(tmp_path)
    text = report_html.write_report(tmp_path).read_text()
    assert "<th>unfinished</th>" in text and "<th>warm-up</th>" in text and "By flow size" in text
    assert "p99 FCT of class bulk is a lower bound: 1 of its 2 flows (50.0%) did not finish" in text


def test_report_of_a_non_results_directory_fails(tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 1 and "not a run or sweep" in res.stderr
    res = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert res.exit_code == 1 and res.stderr.startswith("error:")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; .ci/run installs Debian's chromium package")
    pytest.skip("needs chromium (not installed; make test-deps installs it as root)")


def _headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         "--disable-dev-shm-usage", "--hide-scrollbars", *args],
        capture_output=True, text=True, timeout=120,
    )


def test_report_renders_in_headless_chromium(sweep_dir: Path, tmp_path: Path) -> None:
    browser = _chromium()
    page = report_html.write_report(sweep_dir, tmp_path / "report.html")
    n_images = len(_images(page.read_text()))
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "\n</body>"))
    url = probed.resolve().as_uri()

    shot = tmp_path / "shot.png"
    res = _headless(browser, f"--screenshot={shot}", "--window-size=1200,1600", url)
    assert shot.is_file() and shot.stat().st_size > 10_000, res.stderr[-2000:]
    assert shot.read_bytes().startswith(b"\x89PNG")

    res = _headless(browser, "--dump-dom", "--virtual-time-budget=5000", url)
    title = re.search(r"<title>(.*?)</title>", res.stdout)
    assert title is not None, res.stderr[-2000:]
    assert title.group(1) == f"images {n_images}/{n_images}"
    # What the browser laid out holds the intervals, the base scenario and the provenance.
    assert "95% confidence interval" in res.stdout
    assert "Base scenario" in res.stdout and "Provenance" in res.stdout


# Measures, once the page has loaded, whether anything sticks out of the page sideways:
# the document's width against the window's, and each table against the body's content
# box (a table in a box that scrolls shows only what fits the box).
WIDTH_PROBE = """<script>
window.addEventListener("load", () => {
  const body = document.body.getBoundingClientRect();
  const pad = parseFloat(getComputedStyle(document.body).paddingRight);
  let out = 0, scrolling = 0;
  for (const t of document.querySelectorAll("table")) {
    const box = t.parentElement;
    const scrolls = box.classList.contains("table-box") && getComputedStyle(box).overflowX === "auto";
    const right = scrolls ? box.getBoundingClientRect().right : t.getBoundingClientRect().right;
    if (right > body.right - pad + 1) out++;
    if (scrolls && box.scrollWidth > box.clientWidth) scrolling++;
  }
  document.title = "page " + document.documentElement.scrollWidth + "/" + window.innerWidth +
    " tables out " + out + " scrolling " + scrolling;
});
</script>"""


def _title_at(browser: str, page: Path, probe: str, tmp_path: Path, width: int) -> str:
    probed = tmp_path / f"probed-{page.stem}.html"
    probed.write_text(page.read_text().replace("</body>", probe + "\n</body>"))
    res = _headless(browser, "--dump-dom", "--virtual-time-budget=5000", f"--window-size={width},900",
                    probed.resolve().as_uri())
    title = re.search(r"<title>(.*?)</title>", res.stdout)
    assert title is not None, res.stderr[-2000:]
    return title.group(1)


def test_the_sweep_table_scrolls_inside_its_box_at_1400_px(sweep_dir: Path, tmp_path: Path) -> None:
    browser = _chromium()
    # Long parameter values make the per-combination table wider than the page's column.
    page = report_html.write_report(sweep_dir, tmp_path / "report.html")
    text = page.read_text().replace("senders=2, limit_packets=20",
                                    "senders=2, limit_packets=20, a parameter with a long name=a long value")
    page.write_text(text)
    title = _title_at(browser, page, WIDTH_PROBE, tmp_path, 1400)
    m = re.fullmatch(r"page (\d+)/(\d+) tables out (\d+) scrolling (\d+)", title)
    assert m, title
    page_width, window, out, scrolling = map(int, m.groups())
    assert page_width <= window, title
    assert out == 0, title
    assert scrolling >= 1, "the wide table scrolls in its box (else this test checks nothing)"
    # Every table of the page sits in such a box.
    assert text.count("<table>") == text.count('<div class="table-box"><table>')


# Whether any two labels of the fabric drawing overlap, as the browser lays them out.
LABEL_PROBE = """<script>
window.addEventListener("load", () => {
  const texts = Array.from(document.querySelectorAll("svg.fabric text"));
  const boxes = texts.map(t => t.getBoundingClientRect());
  let n = 0;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) n++;
  }
  document.title = "labels " + texts.length + " overlapping " + n;
});
</script>"""


def test_fabric_labels_of_a_k8_fat_tree_do_not_overlap_in_a_browser(tmp_path: Path) -> None:
    browser = _chromium()
    res = manypath.run("""\
duration_ms = 1
[topology.fat_tree]
k = 8
[[traffic]]
pattern = "permutation"
transport = "dctcp"
size = "long_lived"
""")
    res.to_parquet(tmp_path / "run")
    page = report_html.write_report(tmp_path / "run")
    title = _title_at(browser, page, LABEL_PROBE, tmp_path, 1400)
    m = re.fullmatch(r"labels (\d+) overlapping (\d+)", title)
    assert m, title
    labels, overlapping = map(int, m.groups())
    # The 80 switches' names, thinned out, and the hottest links' numbers.
    assert labels >= 40 and overlapping == 0, title


def test_busiest_queues_name_their_ports(results: Results, tmp_path: Path) -> None:
    results.to_parquet(tmp_path)
    text = report_html.write_report(tmp_path).read_text()
    section = text[text.index("<h2>Busiest queues</h2>"):]
    assert "<th>node → peer</th>" in section
    # Sorted by drops: switch → host0 (7), host1 → switch (1), switch → host1 (0).
    named = re.findall(r"<td>(\w+ → \w+)</td>", section)
    assert named == ["switch → host0", "host1 → switch", "switch → host1"]


def test_a_runs_provenance_appears_once(incast_text: str, tmp_path: Path) -> None:
    res = manypath.run(incast_text)
    res.to_parquet(tmp_path / "run")
    assert (tmp_path / "run" / "provenance.json").is_file()
    text = report_html.render(tmp_path / "run")
    assert text.count("<h2>Provenance</h2>") == 1
    assert text.count(str(res.provenance["scenario_sha256"])) == 1
    # Before the scenario, as the documentation lists them.
    assert text.index("<h2>Provenance</h2>") < text.index("<h2>Scenario</h2>")
