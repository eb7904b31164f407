"""Shared check of the bad-input tests: a scenario is refused with a message naming
its field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def assert_refused(entry: Callable[..., object], toml: str, expect: tuple[str, ...],
                   base_dir: Path, case: str = "") -> None:
    """`entry` (validate or run) refuses `toml` with a ValueError whose message holds
    every part of `expect` (the field's dotted path, what was expected)."""
    with pytest.raises(ValueError) as info:
        entry(toml, base_dir=base_dir)
    message = str(info.value)
    prefix = f"{case}: " if case else ""
    for part in expect:
        assert part in message, f"{prefix}{part!r} not in error: {message}"
