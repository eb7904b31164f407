"""Package attributes imported on first use (PEP 562).

``manypath`` and ``manypath.sweeps`` name their public API here instead of importing it,
so that importing them (the command line does at every start) does not import pandas,
pyarrow or matplotlib until something uses a name that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any, Callable


def exports(
    package: str, namespace: dict[str, Any], names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``names``: each public name and the
    module (relative to ``package``) that defines it. A name is imported when first used
    and then kept in ``namespace``, the package's globals."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
