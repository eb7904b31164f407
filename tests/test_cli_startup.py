"""The command line starts without the heavy libraries: `manypath --version`, `validate`,
`schema` and the help import no pandas, pyarrow, numpy or matplotlib (they took most of
a second to import); the commands that need them import them when they run. Each case
runs in a fresh interpreter, since this test process has imported them already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "pyarrow", "numpy", "matplotlib")

# Runs the command line in-process with the arguments given, then names what it imported.
PROBE = f"""
import sys
from manypath.cli import app
code = 0
try:
    app(sys.argv[1:], prog_name="manypath")
except SystemExit as e:
    code = e.code
print("imported:", ", ".join(m for m in {HEAVY!r} if m in sys.modules) or "none", file=sys.stderr)
sys.exit(code)
"""


def _imported(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def test_importing_the_cli_imports_no_pandas() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import sys, manypath.cli; print([m for m in {HEAVY!r} if m in sys.modules])"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["--help"],
        ["run", "--help"],
        ["validate", "scenarios/incast-tcp.toml"],
        ["validate", "--json", "scenarios/incast-tcp.toml"],
        ["schema"],
        ["sweep", "sweeps/ecn.toml", "--dry-run", "--out", "/nonexistent/results"],
    ],
    ids=lambda a: " ".join(a),
)
def test_quick_commands_import_no_pandas(args: list[str]) -> None:
    assert _imported(*args) == "imported: none"


def test_a_run_imports_what_it_needs() -> None:
    # The guard above can fail: a command that builds results does import pandas.
    assert "pandas" in _imported("run", "scenarios/incast-tcp.toml", "--quiet", "--set", "duration_ms=1")


def test_import_manypath_then_its_api() -> None:
    # The package's names are imported on first use, and are what they always were.
    code = (
        "import sys, manypath\n"
        "assert 'pandas' not in sys.modules\n"
        "from manypath import Results, SweepResults, load, run\n"
        "assert 'pandas' in sys.modules\n"
        "import manypath.results, manypath.sweeps.loading\n"
        "assert Results is manypath.results.Results and manypath.Results is Results\n"
        "assert SweepResults is manypath.sweeps.loading.SweepResults\n"
        "assert manypath.__version__ and 'validate' in dir(manypath)\n"
        "try:\n"
        "    manypath.no_such_name\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "module 'manypath' has no attribute 'no_such_name'"
