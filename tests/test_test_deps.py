"""`make test-deps` installs Chromium and tshark as root with apt-get; anywhere else it
says which tests will be skipped and succeeds, so `make test` goes on to run the rest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")


@pytest.mark.skipif(MAKE is None, reason="needs make")
@pytest.mark.parametrize("uid", ["1000", "0"], ids=["not root", "root without apt-get"])
def test_test_deps_skips_what_it_cannot_install(uid: str, tmp_path: Path) -> None:
    # A PATH with neither chromium, tshark nor apt-get, and an `id` that answers uid.
    (tmp_path / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (tmp_path / "id").chmod(0o755)
    assert MAKE is not None
    proc = subprocess.run(
        [MAKE, "-s", "-C", str(ROOT), "test-deps"],
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "test-deps: chromium is missing and installing it needs root and apt-get: the report "
        "test will be skipped (needs chromium)",
        "test-deps: tshark is missing and installing it needs root and apt-get: the capture "
        "tests will be skipped (needs tshark)",
    ]
