from __future__ import annotations

import json
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
        "file": str(incast_file), "ok": True, "problems": []}
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
