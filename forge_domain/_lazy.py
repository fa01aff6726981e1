"""A package's exported names, imported from their modules on first use (PEP 562).

``import forge_domain`` (or one of its parts, or a package of ``forge_app``) builds none of
the models and imports none of the libraries behind its names: ``forge-compact --help`` and a
``compact`` that fires no trigger pay only for what they use (plans/008-performance.md,
round 6b). Each package lists which module defines each name it exports; the name is imported
from there the first time it is read, and kept. The one definition for both packages: the
application may import the domain, not the other way round.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence

__all__: list[str] = []  # internal: the packages of forge_domain and forge_app use it


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
