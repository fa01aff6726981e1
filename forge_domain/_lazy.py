"""A package's exported names, imported from their modules on first use (PEP 562).

``import forge_domain`` (or one of its parts) builds none of the package's pydantic models:
a command line that needs a few names, ``forge-compact --help`` first among them, pays only
for those (plans/008-performance.md, round 6b). Each package lists which module defines each
name it exports; the name is imported from there the first time it is read, and kept.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence

__all__: list[str] = []  # internal: the packages of forge_domain use it


class LazyExports:
    """Resolves a package's exported names from the modules that define them."""

    def __init__(self, package: str, modules: Mapping[str, Sequence[str]]) -> None:
        """``modules`` maps a module (absolute) to the names it defines or re-exports."""
        self._package = package
        self._homes = {name: module for module, names in modules.items() for name in names}

    def home(self, name: str) -> str | None:
        """The module ``name`` is imported from, None when the package exports no such name."""
        return self._homes.get(name)

    def load(self, namespace: dict[str, object], name: str) -> object:
        """Import ``name`` from its module, keep it in ``namespace`` and return it.

        Raises:
            AttributeError: the package exports no such name.
        """
        home = self._homes.get(name)
        if home is None:
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        value: object = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value
