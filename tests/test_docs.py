"""Every code block of README.md and docs/*.md runs as written, each document's blocks in
order in one temporary directory (with the repository's scenarios/ and sweeps/ there, so
their paths resolve), as a reader following it would:

- ``python``: executed, the blocks of a document in one namespace;
- ``sh``: each line is a ``manypath`` command (``.venv/bin/manypath`` alike), run as a
  process; it must exit 0;
- ``toml``: a scenario runs; a sweep file expands and every combination validates; a block
  marked ``<!-- fragment of scenarios/X.toml -->`` replaces X's top-level keys with its
  own and that scenario runs;
- ``json``: parses (and a documented JSON document has the keys of the real one);
- ``rust``: a quoted test or table row is in the sources (comments and spacing aside);
- ``text``: output or a listing, not code.

A block that cannot run here (a Ray cluster, a GUI, the whole build) says so right above
it: ``<!-- not run: REASON -->``. Every block has a language."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest

import manypath
from manypath import sweeps
from manypath.provenance import record
from manypath.sweeps.execution import SweepSummary

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python", "sh", "toml", "json", "rust", "text"}
_FENCE = re.compile(r"^```(\S*)\n(.*?)^```\n", re.S | re.M)
_MARK = re.compile(r"<!-- (not run|fragment of) ?:? ?(.*?) -->\n*\Z")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    text: str
    not_run: Optional[str] = None  # the reason given
    fragment_of: Optional[str] = None  # a scenario path

    def __str__(self) -> str:
        return f"{self.doc}:{self.line} ({self.lang})"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the marker above each, if any."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()]
        mark = _MARK.search(before[-300:])
        kind, value = (mark.group(1), mark.group(2).strip()) if mark else (None, None)
        found.append(Block(
            doc=str(path.relative_to(ROOT)), line=before.count("\n") + 1, lang=m.group(1), text=m.group(2),
            not_run=value if kind == "not run" else None,
            fragment_of=value if kind == "fragment of" else None,
        ))
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]


def test_every_block_has_a_language_and_every_not_run_a_reason() -> None:
    assert len(ALL) > 20
    assert [str(b) for b in ALL if b.lang not in LANGUAGES] == []
    assert [str(b) for b in ALL if b.not_run is not None and len(b.not_run) < 10] == []


def test_not_run_blocks_are_few() -> None:
    # Only what cannot run here: the whole build, a Ray cluster, Wireshark's window.
    assert [(b.doc, b.text.split()[:2]) for b in ALL if b.not_run] == [
        ("README.md", ["make", "run"]),
        ("docs/toolkit.md", ["manypath", "sweep"]),  # --ray auto
        ("docs/traces.md", ["wireshark", "run/capture.pcapng"]),
    ]


@pytest.fixture
def reader_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory as a reader's checkout: scenarios/ and sweeps/ (copied, so results
    relative to a sweep file land here)."""
    os.symlink(ROOT / "scenarios", tmp_path / "scenarios")
    shutil.copytree(ROOT / "sweeps", tmp_path / "sweeps")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def _run_sh(block: Block, cwd: Path) -> None:
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] in ("manypath", ".venv/bin/manypath"), (
            f"{block}: {line!r} is not a manypath command; mark the block <!-- not run: REASON -->")
        proc = subprocess.run([sys.executable, "-m", "manypath", *words[1:]], cwd=cwd,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{block}: {line}\n{proc.stderr}"


def _run_toml(block: Block, cwd: Path) -> None:
    doc = tomllib.loads(block.text)
    if block.fragment_of is not None:
        base = tomllib.loads((ROOT / block.fragment_of).read_text(encoding="utf-8"))
        res = manypath.run({**base, **doc}, base_dir=ROOT / Path(block.fragment_of).parent)
        assert len(res.flows), block
    elif "grid" in doc or "points" in doc:
        # As if saved in the document's directory, so its relative paths resolve.
        folder = cwd / Path(block.doc).parent
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{doc.get('name', 'sweep')}.toml"
        path.write_text(block.text, encoding="utf-8")
        plan = sweeps.expand(path)
        assert plan.runs, block
        for run in plan.runs:
            manypath.validate(run.text, base_dir=run.base_dir)
    else:
        res = manypath.run(block.text, base_dir=cwd)
        assert len(res.flows), block


def _check_json(block: Block) -> None:
    doc: Any = json.loads(block.text.replace("…", ""))
    if isinstance(doc, dict) and "results_dir" in doc:  # a sweep's --json summary
        assert list(doc) == list(SweepSummary("ecn", Path("results/ecn"), 1).to_dict()), block
    if isinstance(doc, dict) and "manypath_version" in doc:  # a run's provenance
        assert list(doc) == list(record("", 1, threads=1)), block


def _check_rust(block: Block) -> None:
    def bare(code: str) -> str:
        return re.sub(r"\s+", "", re.sub(r"//[^\n]*", "", code))

    quoted = bare(block.text)
    sources = (ROOT / "crates").rglob("*.rs")
    assert any(quoted in bare(p.read_text(encoding="utf-8")) for p in sources), (
        f"{block}: not found in crates/ (comments and spacing aside)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_code_blocks_run(doc: Path, reader_dir: Path) -> None:
    namespace: dict[str, Any] = {}
    for block in blocks(doc):
        if block.not_run is not None or block.lang == "text":
            continue
        if block.lang == "python":
            exec(compile(block.text, str(block), "exec"), namespace)
        elif block.lang == "sh":
            _run_sh(block, reader_dir)
        elif block.lang == "toml":
            _run_toml(block, reader_dir)
        elif block.lang == "json":
            _check_json(block)
        elif block.lang == "rust":
            _check_rust(block)


def test_the_readme_python_example_writes_its_run(reader_dir: Path) -> None:
    for block in blocks(ROOT / "README.md"):
        if block.lang == "python":
            exec(compile(block.text, str(block), "exec"), {})
    assert (reader_dir / "out" / "flows.parquet").is_file()
