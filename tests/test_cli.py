from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from manypath.cli import app
from manypath.loader import load

runner = CliRunner()

COMMANDS = ["run", "validate", "schema", "reproduce", "sweep", "report"]


@pytest.mark.parametrize("args", [["--help"], *([c, "--help"] for c in COMMANDS)])
def test_help(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "Usage" in res.stdout


def test_no_command_is_a_usage_error() -> None:
    assert runner.invoke(app, []).exit_code == 2


def test_unknown_option_is_a_usage_error() -> None:
    assert runner.invoke(app, ["run", "--no-such-option"]).exit_code == 2


def test_version() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("manypath ")


@pytest.mark.parametrize("command", ["run", "validate"])
def test_missing_file_fails_naming_it(command: str, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    res = runner.invoke(app, [command, str(missing)])
    assert res.exit_code == 1
    assert "nowhere.toml" in res.stderr
    assert "Traceback" not in res.output


def test_validate_bad_file_lists_field_paths(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "bad"\nduration_ms = 10\n[topology.fat_tree]\nk = 7\n'
        '[[traffic]]\npattern = "permutation"\nsize = { fixed = 1000 }\n'
    )
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 1
    assert "topology.fat_tree.k" in res.stderr
    assert res.stdout == ""
    assert "Traceback" not in res.output


def test_validate_json_and_quiet(tmp_path: Path, incast_file: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'name = "bad"\nduration_ms = 10\n[topology.fat_tree]\nk = 7\n'
        '[[traffic]]\npattern = "permutation"\nsize = { fixed = 1000 }\n'
    )
    res = runner.invoke(app, ["validate", "--json", str(bad)])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert doc["ok"] is False and any("topology.fat_tree.k" in p for p in doc["problems"])
    res = runner.invoke(app, ["validate", "--json", str(incast_file)])
    assert res.exit_code == 0 and json.loads(res.stdout) == {
        "file": str(incast_file), "ok": True, "problems": [], "warnings": []}
    for path, code in ((bad, 1), (incast_file, 0)):
        res = runner.invoke(app, ["validate", "--quiet", str(path)])
        assert res.exit_code == code and res.output == ""


def test_validate_good_file(incast_file: Path) -> None:
    res = runner.invoke(app, ["validate", str(incast_file)])
    assert res.exit_code == 0, res.output
    assert "ok" in res.stdout


def test_run_invalid_scenario_fails_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("duration_ms = -1\n")
    res = runner.invoke(app, ["run", str(bad)])
    assert res.exit_code == 1
    assert res.stderr.startswith("error:")
    assert "Traceback" not in res.output


def test_schema_is_json() -> None:
    res = runner.invoke(app, ["schema"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert "properties" in doc and "topology" in doc["properties"]


def test_run_prints_a_summary_table(incast_file: Path) -> None:
    res = runner.invoke(app, ["run", str(incast_file)])
    assert res.exit_code == 0, res.output
    for word in ("incast", "FCT mean ms", "p99 ms", "goodput", "drops", "ECN marks",
                 "timeouts", "events", "packet-hops", "wall time", "hops/s"):
        assert word in res.stdout


def test_run_json_is_the_only_stdout(incast_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", str(incast_file), "--json", "--seed", "9", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == {"summary", "counters"}
    incast = doc["summary"]["classes"]["incast"]
    assert incast["flows"] == 4 and incast["completed"] == 4
    assert doc["counters"]["seed"] == 9
    saved = load(out)
    assert len(saved.flows) == 4 and saved.name == "incast-small"


def test_run_quiet_prints_nothing(incast_file: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", str(incast_file), "--quiet", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert res.output == ""
    assert (tmp_path / "o" / "flows.parquet").is_file()


def test_run_default_scenario() -> None:
    res = runner.invoke(app, ["run", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["name"] == "default"
    assert doc["summary"]["flows"] > 0


def test_reproduce_lists_experiments() -> None:
    res = runner.invoke(app, ["reproduce"])
    assert res.exit_code == 0
    assert "incast-tcp" in res.stdout
    res = runner.invoke(app, ["reproduce", "--json"])
    listed = {e["name"]: e for e in json.loads(res.stdout)}
    assert set(listed["incast-tcp"]) >= {"document", "figure", "compares", "reduced_time", "full_time"}


def test_reproduce_unknown_experiment_is_a_usage_error() -> None:
    res = runner.invoke(app, ["reproduce", "no-such-experiment"])
    assert res.exit_code == 2
    assert "incast-tcp" in res.output


def test_reproduce_incast_json(tmp_path: Path) -> None:
    res = runner.invoke(app, ["reproduce", "incast-tcp", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["fan_in"] for r in rows] == [1, 4, 16, 40]
    assert all(r["completed"] == r["fan_in"] for r in rows)


# --- A run's setup kept, overrides, bad input, progress -------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_run_out_keeps_the_scenario_as_run_and_the_report_shows_it(incast_file: Path, tmp_path: Path) -> None:
    from manypath.results import load_run

    out = tmp_path / "run"
    res = runner.invoke(app, ["run", str(incast_file), "--seed", "5", "--set", "traffic.0.size.fixed=65536",
                              "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    stored = load_run(out)
    assert stored.scenario["seed"] == 5 and stored.scenario["traffic"][0]["size"] == {"fixed": 65536}
    assert stored.flows["size"].tolist() == [65536] * 4
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["seed"] == 5 and prov["scenario_sha256"] == stored.provenance["scenario_sha256"]
    res = runner.invoke(app, ["report", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    page = (out / "report.html").read_text()
    assert "<h2>Scenario</h2>" in page and "fixed = 65536" in page
    assert "<h2>Provenance</h2>" in page and prov["scenario_sha256"] in page


def test_run_set_values_are_toml_values(incast_file: Path, tmp_path: Path) -> None:
    from manypath.results import load_run

    out = tmp_path / "run"
    res = runner.invoke(app, ["run", str(incast_file), "--quiet", "--out", str(out),
                              "--set", "network.queue.ecn_k_packets=20", "--set", "traffic.0.transport=dctcp",
                              "--set", 'name="renamed"'])
    assert res.exit_code == 0, res.output
    doc = load_run(out).scenario
    assert doc["network"]["queue"]["ecn_k_packets"] == 20 and doc["traffic"][0]["transport"] == "dctcp"
    assert doc["name"] == "renamed" and load_run(out).name == "renamed"


def test_run_bad_set_is_named(incast_file: Path) -> None:
    res = runner.invoke(app, ["run", str(incast_file), "--set", "traffic.2.load=0.5"])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr == (f"error: invalid scenario {incast_file}:\n"
                          "override traffic.2.load: traffic.2 does not exist (the array has 1 entries)\n")
    res = runner.invoke(app, ["run", str(incast_file), "--set", "traffic.0.load"])
    assert res.exit_code == 2 and "expected PATH=VALUE, got 'traffic.0.load'" in res.stderr


# A file whose line 6 is wrong (the queue's limit), and whose topology lacks a field.
BAD_LINE_6 = """\
duration_ms = 5
[topology.star]
senders = 2

[network.queue]
limit_packets = "ten"
[[traffic]]
pattern = "incast"
size = { fixed = 1000 }
"""


def test_an_error_from_a_set_names_the_set_not_a_line(incast_file: Path) -> None:
    res = runner.invoke(app, ["run", str(incast_file), "--set", 'duration_ms="x"'])
    assert res.exit_code == 1
    assert res.stderr == (f"error: invalid scenario {incast_file}:\n"
                          'duration_ms: invalid type: string "x", expected f64 (set by --set duration_ms="x")\n')
    res = runner.invoke(app, ["run", str(incast_file), "--set", "traffic.0.size.fixed=-5"])
    assert res.stderr == (f"error: invalid scenario {incast_file}:\n"
                          "traffic[0].size.fixed: invalid value: integer `-5`, expected u64 "
                          "(set by --set traffic.0.size.fixed=-5)\n")
    # A problem the checks find (no line) names it too.
    res = runner.invoke(app, ["run", str(incast_file), "--set", "traffic.0.senders=0"])
    assert res.stderr.splitlines()[1].endswith(", got 0 (set by --set traffic.0.senders=0)")


def test_an_error_in_the_file_keeps_the_files_line_with_a_set_or_seed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_LINE_6)
    want = (f"error: invalid scenario {bad}:\n"
            'network.queue.limit_packets: invalid type: string "ten", expected u64 (line 6)\n')
    # As given, with an override (the text is re-serialised) and with a seed (written first).
    for extra in ([], ["--set", "duration_ms=3"], ["--seed", "4"]):
        res = runner.invoke(app, ["run", str(bad), *extra])
        assert res.exit_code == 1 and res.stderr == want, extra
    missing = tmp_path / "missing.toml"
    missing.write_text("# a comment\nduration_ms = 5\n\n[topology.leaf_spine]\nleaves = 2\nhosts_per_leaf = 2\n"
                       + BAD_LINE_6.split("[network.queue]")[1].split("\n", 2)[2])
    res = runner.invoke(app, ["run", str(missing), "--set", "duration_ms=3"])
    assert res.stderr == (f"error: invalid scenario {missing}:\n"
                          "topology.leaf_spine.spines: missing (a required field of the table at line 4)\n")


def test_an_override_from_python_is_named_as_given() -> None:
    import manypath

    text = BAD_LINE_6.replace('"ten"', "10")
    with pytest.raises(ValueError) as e:
        manypath.run(text, overrides={"duration_ms": "x"})
    assert str(e.value) == "duration_ms: invalid type: string \"x\", expected f64 (set by override duration_ms='x')"


@pytest.mark.parametrize("seed", ["-1", str(2**63)])
def test_run_seed_out_of_range_is_a_usage_error(incast_file: Path, seed: str) -> None:
    res = runner.invoke(app, ["run", str(incast_file), "--seed", seed])
    assert res.exit_code == 2
    assert "--seed must be between 0 and 2^63-1" in res.stderr and "Traceback" not in res.output


def test_run_max_seed_is_accepted(incast_file: Path) -> None:
    res = runner.invoke(app, ["run", str(incast_file), "--seed", str(2**63 - 1), "--json",
                              "--set", "duration_ms=1"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_directory_as_scenario_says_so(command: str, tmp_path: Path) -> None:
    res = runner.invoke(app, [command, str(tmp_path)])
    assert res.exit_code == 1
    assert res.stderr == f"error: {tmp_path}: is a directory, not a scenario file\n"


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_binary_file_is_not_a_toml_text_file(command: str, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.toml"
    garbage.write_bytes(bytes(range(250, 256)) + b"\x00\x01")
    res = runner.invoke(app, [command, str(garbage)])
    assert res.exit_code == 1
    assert res.stderr == f"error: {garbage}: not a TOML text file (byte 0xfa at offset 0 is not UTF-8)\n"


SWEEP_TOML = 'name = "s"\nscenario = "incast.toml"\nseeds = [1, 2]\n[grid]\n"traffic.0.senders" = [2, 4]\n'


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_sweep_file_given_as_scenario_suggests_sweep(command: str, tmp_path: Path) -> None:
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text(SWEEP_TOML)
    res = runner.invoke(app, [command, str(sweep_file)])
    assert res.exit_code == 1
    assert res.stderr.endswith(
        f"\nhint: {sweep_file} looks like a sweep file (it has grid, seeds, scenario); "
        f"did you mean `manypath sweep {sweep_file}`?\n"
    )


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_scenario_given_to_sweep_suggests_run(incast_file: Path, dry_run: list[str]) -> None:
    res = runner.invoke(app, ["sweep", str(incast_file), *dry_run])
    assert res.exit_code == 1
    assert res.stderr.endswith(
        f"\nhint: {incast_file} looks like a scenario (it has topology, traffic, network, duration_ms); "
        f"did you mean `manypath run {incast_file}`?\n"
    )


def test_a_broken_scenario_gets_no_hint(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\nduration_ms = 10\n[topology.fat_tree]\nk = 7\n')
    res = runner.invoke(app, ["run", str(bad)])
    assert res.exit_code == 1 and "hint" not in res.stderr


def test_run_without_a_terminal_prints_progress_lines(tmp_path: Path) -> None:
    args = ["run", str(ROOT / "bench" / "fattree8-dctcp.toml"), "--set", "duration_ms=3", "--json",
            "--progress-interval", "0"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("progress: ")]
    assert lines, res.stderr
    assert re.fullmatch(r"progress: \d+\.\d{3} of 3 ms simulated \(\d+\.\d%\), [\d.]+ [kMG]? ?events/s, "
                        r"ETA \d+s", lines[0]), lines[0]
    json.loads(res.stdout)  # stdout stays the JSON document
    assert runner.invoke(app, [*args, "--quiet"]).stderr == ""
    # The default interval (seconds) prints nothing for a run this short.
    assert "progress" not in runner.invoke(app, args[:-2]).stderr


def test_sim_progress_lines_follow_the_interval() -> None:
    from manypath.cli import _SimProgress

    clock = iter([0.0, 1.0, 2.5, 4.0, 9.0]).__next__
    bar = _SimProgress(0.1, tty=False, interval_s=2.0, clock=clock)
    shown = []
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        for sim_s, events in ((0.01, 1_000_000), (0.025, 3_000_000), (0.03, 4_000_000), (0.05, 9_000_000)):
            assert bar.update(sim_s, events) is True
    shown = buf.getvalue().splitlines()
    assert shown == [
        "progress: 25.000 of 100 ms simulated (25.0%), 1.20 M events/s, ETA 8s",
        "progress: 50.000 of 100 ms simulated (50.0%), 923.08 k events/s, ETA 9s",
    ]


def test_flow_progress_and_sweep_progress_lines() -> None:
    import contextlib
    import io

    from manypath.cli import _ProgressBar, _SimProgress

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        flow = _SimProgress(20000, flow=True, tty=False, interval_s=0.0, clock=iter([0.0, 2.0]).__next__)
        flow.update(5000.0, 5000)
        unknown = _SimProgress(None, flow=True, tty=False, interval_s=0.0, clock=iter([0.0, 2.0]).__next__)
        unknown.update(5000.0, 5000)
        sweep = _ProgressBar(True, tty=False, interval_s=10.0,
                             clock=iter([0.0, 0.0, 2.0, 4.0, 12.0, 13.0]).__next__)
        sweep.start(10, 2)
        sweep.update(3, 0, 7)   # 2 s: the first run finished always shows
        sweep.update(3, 1, 6)   # 4 s: within the interval, no line
        sweep.update(4, 1, 5)   # 12 s: 3 runs in 12 s, 5 to go
        sweep.update(10, 0, 0)  # the last run always shows
    assert buf.getvalue().splitlines() == [
        "progress: iteration 5000 of at most 20000 (25%), 2.50 k iterations/s, ETA at most 6s",
        "progress: iteration 5000, 2.50 k iterations/s",
        "2 of 10 runs already stored",
        "[3/10] done 3, failed 0, remaining 7, ETA 14s",
        "[5/10] done 4, failed 1, remaining 5, ETA 20s",
        "[10/10] done 10, failed 0, remaining 0, ETA 0s",
    ]


def test_a_flow_level_run_prints_its_iteration_limit_and_eta() -> None:
    # Without [flow_model], the limit is the default (20000), which the line names.
    args = ["run", str(ROOT / "scenarios" / "dragonfly-permutation.toml"), "--level", "flow",
            "--json", "--progress-interval", "0"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("progress: ")]
    assert lines, res.stderr
    assert re.fullmatch(r"progress: iteration 100 of at most 20000 \(\d+%\), [\d.]+ [kMG]? ?iterations/s, "
                        r"ETA at most \d+s", lines[0]), lines[0]


def test_flow_level_run_warns_when_it_stops_unconverged(tmp_path: Path) -> None:
    scenario = tmp_path / "flow.toml"
    scenario.write_text(
        'name = "unconverged"\nduration_ms = 40\nlevel = "flow"\n[topology.fat_tree]\nk = 4\n'
        "[network.link]\nrate_gbps = 10\ndelay_us = 1\n[transports.t]\ncc = \"lia\"\nsubflows = 4\n"
        "[flow_model]\nmax_iterations = 2\ntolerance = 0.01\n"
        '[[traffic]]\npattern = "permutation"\ntransport = "t"\nsize = "long_lived"\n'
    )
    res = runner.invoke(app, ["run", str(scenario), "--json"])
    assert res.exit_code == 0, res.output
    residual = json.loads(res.stdout)["counters"]["residual"]
    assert res.stderr == (f"warning: flow level stopped at its iteration limit (2) without converging: "
                          f"residual {residual:.1e} > tolerance 1e-02; raise flow_model.max_iterations "
                          "or read the rates as approximate\n")
    assert runner.invoke(app, ["run", str(scenario), "--quiet"]).output == ""
    res = runner.invoke(app, ["run", str(scenario), "--json", "--set", "flow_model.max_iterations=20000"])
    assert res.exit_code == 0 and res.stderr == ""
