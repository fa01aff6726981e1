"""A package's exported names, imported from their modules on first use (PEP 562).

``forge-compact --help`` and a ``compact`` that fires no trigger must not pay for the
agent loop, the session store or the model client they never use; a package whose
``__init__`` imported all of them eagerly made every command start slowly. A package
lists which module defines each name; ``import forge_app.runtime`` then costs nothing,
and ``forge_app.runtime.Orchestrator`` imports its module the first time it is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence


class LazyExports:
    """Resolves a package's exported names from the modules that define them."""

    def __init__(self, package: str, modules: Mapping[str, Sequence[str]]) -> None:
        """``modules`` maps a module (absolute, or relative to ``package``) to its names."""
        self._package = package
        self._homes = {
            name: module if not module.startswith(".") else package + module
            for module, names in modules.items()
            for name in names
        }

    @property
    def names(self) -> list[str]:
        """Every exported name, sorted (the package's ``__all__``)."""
        return sorted(self._homes)

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
