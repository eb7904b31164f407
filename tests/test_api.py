from __future__ import annotations

from pathlib import Path

import pytest

import manypath
from manypath.experiments import incast


def test_run_accepts_a_path_text_and_a_dict(incast_file: Path, incast_text: str) -> None:
    from_path = manypath.run(incast_file)
    from_text = manypath.run(incast_text)
    from_dict = manypath.run(incast.scenario(4))
    for res in (from_path, from_text, from_dict):
        assert len(res.flows) == 4
        assert res.flows["completed"].all()
    # Same scenario, same seed: the same simulation.
    assert from_path.flows["fct_s"].tolist() == from_text.flows["fct_s"].tolist()


def test_run_tables_have_the_documented_columns(incast_file: Path) -> None:
    res = manypath.run(incast_file)
    assert {"flow_id", "class", "job", "size", "fct_s", "completed", "bytes_acked",
            "goodput_bps", "timeouts"} <= set(res.flows.columns)
    assert {"port", "node", "node_kind", "peer", "drops", "ecn_marks", "utilization"} <= set(
        res.queues.columns
    )
    assert {"events", "packet_hops", "sim_time_s", "wall_s", "seed"} <= set(res.counters)
    assert res.name == "incast-small"


def test_seed_overrides_the_scenario(incast_file: Path) -> None:
    assert manypath.run(incast_file, seed=42).counters["seed"] == 42
    assert manypath.run(incast_file).counters["seed"] == 1


def test_validate(incast_file: Path) -> None:
    manypath.validate(incast_file)
    with pytest.raises(ValueError, match=r"topology\.fat_tree\.k"):
        manypath.validate(
            {
                "duration_ms": 1,
                "topology": {"fat_tree": {"k": 7}},
                "traffic": [{"pattern": "permutation", "size": {"fixed": 1000}}],
            }
        )


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError, match="missing.toml"):
        manypath.run("missing.toml")


def test_schema_and_version() -> None:
    assert manypath.schema()["title"] == "Scenario"
    assert manypath.__version__


def test_shipped_json_schema_is_current() -> None:
    """docs/scenario.schema.json is what `manypath schema` prints (regenerate: make schema)."""
    import json
    from pathlib import Path

    shipped = Path(__file__).resolve().parent.parent / "docs" / "scenario.schema.json"
    assert json.loads(shipped.read_text()) == manypath.schema()
