"""The README's Python example runs as written (from the repository's root, so its
scenario paths resolve; its output directory in a temporary one)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "scenarios", tmp_path / "scenarios")
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "out" / "flows.parquet").is_file()
