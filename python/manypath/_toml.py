"""A minimal TOML writer for scenario dicts.

Scenarios built in Python (experiments, notebooks) are plain nested dicts; the simulator
only reads TOML, so they need serialising. The subset here covers what scenarios use:
tables, arrays of tables, arrays, strings, integers, floats and booleans.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dumps(doc: Mapping[str, Any]) -> str:
    """Serialise a nested mapping to TOML text.

    Keys whose value is ``None`` are left out, so builders can pass optional settings
    through without branching.
    """
    lines: list[str] = []
    _table(doc, (), lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(
    table: Mapping[str, Any], path: tuple[str, ...], out: list[str], in_array: bool = False
) -> None:
    # Plain key/value pairs must come before any sub-table header, or they would land
    # in that sub-table.
    subtables: list[tuple[str, Mapping[str, Any]]] = []
    arrays_of_tables: list[tuple[str, Sequence[Mapping[str, Any]]]] = []
    for key, value in table.items():
        if not isinstance(key, str):
            raise TypeError(f"TOML keys must be strings, got {key!r}")
        if value is None:
            continue
        if isinstance(value, Mapping) and not (in_array and _is_flat(value)):
            subtables.append((key, value))
        elif _is_array_of_tables(value):
            arrays_of_tables.append((key, value))
        else:
            out.append(f"{_key(key)} = {_value(value)}")
    for key, sub in subtables:
        sub_path = (*path, key)
        # A table holding only sub-tables needs no header of its own; an empty one does,
        # or it would vanish.
        present = [v for v in sub.values() if v is not None]
        if not present or any(
            not (isinstance(v, Mapping) or _is_array_of_tables(v)) for v in present
        ):
            out.append("")
            out.append(f"[{_dotted(sub_path)}]")
        _table(sub, sub_path, out)
    for key, items in arrays_of_tables:
        sub_path = (*path, key)
        for item in items:
            out.append("")
            out.append(f"[[{_dotted(sub_path)}]]")
            _table(item, sub_path, out, in_array=True)


def _is_flat(table: Mapping[str, Any]) -> bool:
    # Inside an array-of-tables entry, small option tables such as
    # `size = { fixed = 131072 }` read better inline than as `[traffic.size]` headers.
    return not any(isinstance(v, Mapping) or _is_array_of_tables(v) for v in table.values())


def _is_array_of_tables(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(_key(k) for k in path)


def _string(s: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes, except that TOML
    # also forbids a raw DEL character.
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    # numpy scalars come through from computed parameters; unwrap them to Python ones.
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        parts = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(parts) + " }" if parts else "{}"
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        if any(v is None for v in value):
            raise TypeError("TOML arrays cannot hold None")
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML: {value!r}")
