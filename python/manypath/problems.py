"""An invalid scenario's problems in the user's terms when overrides rewrote its text:
the simulator reads the scenario re-serialised, whose line numbers the user never saw.
A problem with a field an override set names the override instead of a line; a problem
in the file itself gets its line in the file as written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from .scenario import Prepared

#: "(line 12)" after a parse error, and "of the table at line 12" after a missing field.
_LINE = re.compile(r" \(line (\d+)\)| of the table at line (\d+)")


def _dotted(path: str) -> str:
    """``traffic[1].size`` as an override writes it: ``traffic.1.size``."""
    return re.sub(r"\[(\d+)\]", r".\1", path)


def _related(field: str, override: str) -> bool:
    # The override set this field, a field inside it, or a table holding it.
    return field == override or field.startswith(override + ".") or override.startswith(field + ".")


def override_name(path: str, value: Any) -> str:
    """How a problem names an override given from Python."""
    return f"override {path}={value!r}"


def explain(message: str, ready: Prepared, names: Optional[Mapping[str, str]] = None) -> str:
    """``message`` (one problem per line, ``PATH: what``) with each problem that an
    override caused naming it (``names[path]``, e.g. ``--set duration_ms=x``, or
    ``override PATH=VALUE``) where a line of the re-serialised text was, and each line
    number of another problem the line in the text as given. Unchanged when the text was
    not re-serialised."""
    if ready.source_text is None:
        return message
    from . import _core

    out = []
    for problem in message.splitlines():
        field, sep, what = problem.partition(": ")
        if not sep or " " in field:
            out.append(problem)
            continue
        cause = next((p for p, _ in reversed(ready.overrides) if _related(_dotted(field), p)), None)
        if cause is not None:
            value = dict(ready.overrides)[cause]
            name = (names or {}).get(cause) or override_name(cause, value)
            what, n = _LINE.subn(
                lambda m: f" (set by {name})" if m.group(1) else f"; the table set by {name}",
                what, count=1)
            if not n:
                what = f"{what} (set by {name})"
        else:
            line = _core.line_of(ready.source_text, field)

            def real(m: re.Match[str]) -> str:
                if line is None:
                    return ""
                return f" (line {line})" if m.group(1) else f" of the table at line {line}"

            what = _LINE.sub(real, what, count=1)
        out.append(f"{field}{sep}{what}")
    return "\n".join(out)
