"""Warnings a run or a check gives for what is valid but likely not meant: an overload, a
run that will not fit in memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import manypath
from manypath import runner
from manypath.cli import app

OVERLOAD = """
name = "overload"
duration_ms = 0.2
[topology.star]
senders = 2
[network.link]
rate_gbps = 10
delay_us = 1
[[traffic]]
pattern = "random_pairs"
arrival = "poisson"
load = 1.5
size = { fixed = 10000 }
"""
MESSAGE = (
    "traffic[0].load: 1.5 offers more than the senders' links carry: queues grow until the "
    "end and flows go unfinished"
)


def test_an_overload_warns_from_python_and_is_kept_with_the_results() -> None:
    with pytest.warns(runner.ScenarioWarning) as caught:
        res = manypath.run(OVERLOAD)
    assert [str(w.message) for w in caught] == [MESSAGE]
    assert res.scenario_warnings == [("traffic[0].load", MESSAGE.split(": ", 1)[1])]
    assert manypath.validate(OVERLOAD) == res.scenario_warnings


def test_the_cli_prints_the_warnings_of_a_check_and_of_a_run(tmp_path: Path) -> None:
    path = tmp_path / "overload.toml"
    path.write_text(OVERLOAD, encoding="utf-8")
    cli = CliRunner()
    checked = cli.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 0
    assert f"warning: {MESSAGE}" in checked.stderr
    as_json = json.loads(cli.invoke(app, ["validate", str(path), "--json"]).stdout)
    assert (as_json["ok"], as_json["warnings"]) == (True, [MESSAGE])
    ran = cli.invoke(app, ["run", str(path)])
    assert ran.exit_code == 0
    assert f"warning: {MESSAGE}" in ran.stderr


def test_a_plain_scenario_warns_of_nothing() -> None:
    assert manypath.validate(OVERLOAD.replace("load = 1.5", "load = 0.5")) == []


def test_a_run_larger_than_the_free_memory_is_announced() -> None:
    estimate = {"peak_bytes": 9 << 30, "hosts": 16, "ports": 96, "connections": 16}
    message = runner.memory_warning(estimate, available=8 << 30)
    assert message is not None
    assert message.startswith("this run is estimated to need 9.0 GiB at its peak (16 hosts, 96 ports")
    assert "more than the 8.0 GiB available" in message
    assert runner.memory_warning(estimate, available=10 << 30) is None
    assert runner.memory_warning(estimate, available=None) is None


def test_the_estimate_grows_with_the_fabric() -> None:
    from manypath import _core

    def peak(k: int) -> int:
        text = f'name = "ft"\nduration_ms = 1\n[topology.fat_tree]\nk = {k}\n' \
               '[[traffic]]\npattern = "permutation"\nsize = "long_lived"\n'
        return int(_core.estimate(text, ".")["peak_bytes"])

    small, large = peak(4), peak(16)
    assert 0 < small < large
    # 64 times the hosts: the connections' state and packets dominate, so well over 10x.
    assert large > 10 * (small - (3 << 20))


def test_a_run_directory_keeps_the_scenario_with_its_defaults(tmp_path: Path) -> None:
    res = manypath.run(OVERLOAD.replace("load = 1.5", "load = 0.5"))
    res.to_parquet(tmp_path)
    resolved = (tmp_path / "resolved.toml").read_text(encoding="utf-8")
    # Defaults the scenario left out are written in, and rerunning it changes nothing.
    assert "stop_when_done" in resolved and "stop_when_done" not in res.scenario_text
    again = manypath.run(resolved)
    assert again.flows.equals(res.flows)
    assert manypath.load(tmp_path).resolved_text == resolved
