from __future__ import annotations

from pathlib import Path

import pytest

from manypath.scenario import ScenarioNotFound, default_scenario_path, resolve

tomllib = pytest.importorskip("tomllib")


def test_path_resolves_relative_to_its_directory(incast_file: Path) -> None:
    for arg in (incast_file, str(incast_file)):
        src = resolve(arg)
        assert src.base_dir == str(incast_file.parent.resolve())
        assert src.text == incast_file.read_text()


def test_text_and_dict_resolve_against_cwd_or_base_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    src = resolve('name = "x"\nduration_ms = 1\n')
    assert src.base_dir == str(Path.cwd()) and src.origin == "<string>"
    src = resolve({"name": "x"}, base_dir=tmp_path / "sub")
    assert src.base_dir == str((tmp_path / "sub").resolve())
    assert tomllib.loads(src.text) == {"name": "x"}


def test_missing_file_names_the_file() -> None:
    with pytest.raises(ScenarioNotFound, match="nope.toml"):
        resolve("nope.toml")
    with pytest.raises(FileNotFoundError):
        resolve(Path("also/missing.toml"))


def test_other_types_are_rejected() -> None:
    with pytest.raises(TypeError):
        resolve(42)  # type: ignore[arg-type]


def test_default_scenario_is_shipped() -> None:
    doc = tomllib.loads(default_scenario_path().read_text())
    assert doc["topology"] == {"fat_tree": {"k": 4}}
    assert doc["network"]["queue"] == {"limit_packets": 100, "ecn_k_packets": 20}
    (traffic,) = doc["traffic"]
    assert traffic["transport"] == "dctcp" and traffic["load"] == 0.4
    assert traffic["size"] == {"cdf": "websearch"}
