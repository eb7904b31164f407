"""Single runs from Python: the scenario as run and its provenance kept with the results,
overrides by dotted path, the short repr, the summary as a frame, the package namespace
and the errors for scenario paths that are not TOML files."""

from __future__ import annotations

import hashlib
import types
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import manypath
from manypath.results import Results, load_run
from manypath.runner import NotConvergedWarning


def flows_equal(a: Results, b: Results) -> bool:
    return bool(a.flows.equals(b.flows))


def test_results_keep_the_scenario_as_run_and_its_provenance(tmp_path: Path, incast_text: str) -> None:
    res = manypath.run(incast_text, seed=7, overrides={"network.queue.limit_packets": 50})
    assert res.scenario["seed"] == 7 and res.scenario["network"]["queue"]["limit_packets"] == 50
    assert res.provenance["seed"] == 7
    assert res.provenance["scenario_sha256"] == hashlib.sha256(res.scenario_text.encode()).hexdigest()
    assert res.provenance["manypath_version"] == manypath.__version__
    out = res.to_parquet(tmp_path / "run")
    assert (out / "scenario.toml").read_text() == res.scenario_text
    back = load_run(out)
    assert back.scenario == res.scenario and back.provenance == res.provenance
    # The stored scenario alone reproduces the run, bit for bit.
    again = manypath.run(out / "scenario.toml")
    assert flows_equal(again, res) and again.scenario == res.scenario
    assert not flows_equal(manypath.run(incast_text), res)


def test_the_seed_used_is_written_into_the_scenario(incast_text: str) -> None:
    unseeded = incast_text.replace("seed = 1\n", "")
    res = manypath.run(unseeded)
    assert res.scenario["seed"] == 1 and res.provenance["seed"] == 1
    assert res.scenario_text.startswith("seed = 1\n")
    # Unchanged text (comments and all) when it already says which seed runs.
    commented = "# a comment\n" + incast_text
    assert manypath.run(commented).scenario_text == commented


def test_directories_written_before_provenance_still_load(tmp_path: Path, results: Results) -> None:
    old = results.to_parquet(tmp_path / "old")
    assert not (old / "scenario.toml").exists() and not (old / "provenance.json").exists()
    back = load_run(old)
    assert back.scenario == {} and back.provenance == {} and len(back.flows) == 4


def test_overrides_are_the_sweeps_dotted_paths(incast_text: str) -> None:
    doc = manypath.run(incast_text).scenario
    by_path = manypath.run(incast_text, overrides={"traffic.0.size.fixed": 65536, "traffic.0.senders": 2})
    doc["traffic"][0]["size"] = {"fixed": 65536}
    doc["traffic"][0]["senders"] = 2
    by_dict = manypath.run(doc)
    assert flows_equal(by_path, by_dict)
    assert by_path.flows["size"].tolist() == [65536, 65536]


@pytest.mark.parametrize(
    "path,message",
    [
        ("traffic.3.load", "override traffic.3.load: traffic.3 does not exist (the array has 1 entries)"),
        ("duration_ms.x", "override duration_ms.x: duration_ms is a value (2000), not a table"),
        ("traffic.first.load", "override traffic.first.load: traffic is an array; use a number, not 'first'"),
    ],
)
def test_a_bad_override_path_is_named(path: str, message: str, incast_text: str) -> None:
    with pytest.raises(ValueError) as e:
        manypath.run(incast_text, overrides={path: 1})
    assert str(e.value) == message


def test_a_misspelt_override_field_is_named_by_the_simulator(incast_text: str) -> None:
    with pytest.raises(ValueError, match="no_such_field"):
        manypath.run(incast_text, overrides={"network.queue.no_such_field": 1})


def test_repr_is_one_line_with_name_flows_duration_and_level(incast_text: str, results: Results) -> None:
    assert repr(results) == "<Results 'hand-made': 3/4 flows completed, 10 ms simulated, packet level>"
    res = manypath.run(incast_text, overrides={"duration_ms": 1})
    done = int(res.flows["completed"].sum())
    assert repr(res) == f"<Results 'incast-small': {done}/4 flows completed, 1 ms simulated, packet level>"


def test_summary_frame_is_the_summary_one_row_per_class(results: Results) -> None:
    res = results
    frame = res.summary_frame()
    classes = res.summary()["classes"]
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "class"
    assert sorted(frame.index) == sorted(classes) == ["bulk", "short"]
    for name, row in classes.items():
        for key, value in row.items():
            got = frame.loc[name, key]
            assert (value is None and pd.isna(got)) or got == value, (name, key)
    # A class with no finished flow has no FCT: NaN in a numeric column, not None.
    results.flows["completed"] = False
    results.flows["fct_s"] = float("nan")
    results.flows["finish_s"] = float("nan")
    unfinished = results.summary_frame()
    assert unfinished["fct_p99_ms"].dtype == "float64" and unfinished["fct_p99_ms"].isna().all()


def test_the_package_exports_only_its_public_api() -> None:
    def own_submodule(value: object) -> bool:
        return isinstance(value, types.ModuleType) and value.__name__.startswith("manypath.")

    public = {n for n in dir(manypath) if not n.startswith("_") and not own_submodule(getattr(manypath, n))}
    assert public == {
        "Results", "Scenario", "SweepResults", "SweepSpec", "SweepSummary", "default_scenario_path",
        "load", "run", "schema", "sweep", "validate",
    }
    assert set(manypath.__all__) == public | {"__version__"}


def test_seed_out_of_range_is_a_value_error(incast_text: str) -> None:
    with pytest.raises(ValueError) as e:
        manypath.run(incast_text, seed=-1)
    assert str(e.value) == "seed must be between 0 and 2^63-1, got -1"


def test_a_directory_or_binary_file_as_scenario(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as e:
        manypath.run(tmp_path)
    assert str(e.value) == f"{tmp_path}: is a directory, not a scenario file"
    garbage = tmp_path / "garbage.toml"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(ValueError) as e:
        manypath.validate(garbage)
    assert str(e.value) == f"{garbage}: not a TOML text file (byte 0x89 at offset 0 is not UTF-8)"


def unconverged(**model: Any) -> dict[str, Any]:
    """A flow-level permutation whose fixed point cannot converge in two iterations."""
    return {
        "name": "unconverged",
        "duration_ms": 40,
        "level": "flow",
        "topology": {"fat_tree": {"k": 4}},
        "network": {"link": {"rate_gbps": 10, "delay_us": 1}},
        "transports": {"t": {"cc": "lia", "subflows": 4}},
        "flow_model": {"max_iterations": 2, **model},
        "traffic": [{"pattern": "permutation", "transport": "t", "size": "long_lived"}],
    }


def test_a_flow_level_run_that_did_not_converge_warns() -> None:
    with pytest.warns(NotConvergedWarning) as caught:
        res = manypath.run(unconverged(tolerance=0.001))
    assert res.counters["converged"] is False and res.counters["iterations"] == 2
    message = str(caught[0].message)
    residual = f"{res.counters['residual']:.1e}"
    assert message.startswith(
        f"flow level stopped at its iteration limit (2) without converging: residual {residual} > tolerance 1e-03"
    )


def test_a_converged_flow_level_run_does_not_warn() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", NotConvergedWarning)
        res = manypath.run(unconverged(), overrides={"flow_model.max_iterations": 20000})
    assert res.counters["converged"] is True
