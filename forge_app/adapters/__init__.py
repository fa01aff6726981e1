"""Adapters: forge-compact's compaction inside pydantic-ai, LangChain and the OpenAI Agents SDK.

Each adapter needs its framework, installed by an extra; importing this package
imports none of them (each name is loaded on first use, and ``import *`` brings
only those whose framework is installed)::

    pip install 'forge-compact[pydantic-ai]'   # ForgeHistoryProcessor
    pip install 'forge-compact[langchain]'     # ForgeCompactionMiddleware
    pip install 'forge-compact[agents]'        # ForgeSession

Every adapter converts the framework's history to a :class:`~forge_domain.Context`,
compacts it with an agent's settings and engine (:class:`HistoryCompactor`) when
a trigger fires, and hands back the framework's own objects: untouched messages
are the originals. The top layer of ``forge_app``, next to the cli.
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec
from typing import TYPE_CHECKING

from forge_app.adapters._compaction import HistoryCompactor
from forge_app.errors import AdapterUnavailable

if TYPE_CHECKING:
    from forge_app.adapters._agents_sdk import ForgeSession
    from forge_app.adapters._langchain import ForgeCompactionMiddleware
    from forge_app.adapters._pydantic_ai import ForgeHistoryProcessor

__all__ = [
    "ForgeCompactionMiddleware",
    "ForgeHistoryProcessor",
    "ForgeSession",
    "HistoryCompactor",
]

_LAZY: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "ForgeHistoryProcessor": ("_pydantic_ai", "pydantic-ai", ("pydantic_ai",), "pydantic-ai"),
    "ForgeCompactionMiddleware": (
        "_langchain",
        "LangChain",
        ("langchain", "langchain_core", "langgraph"),
        "langchain",
    ),
    "ForgeSession": ("_agents_sdk", "the OpenAI Agents SDK", ("agents",), "agents"),
}
"""Lazy name -> (module, framework, its top-level packages, the extra that installs it)."""


def _found(package: str) -> bool:
    """Whether a top-level ``package`` can be imported (found, not imported)."""
    try:
        return find_spec(package) is not None
    except ValueError:  # already in sys.modules, without a spec (a stand-in): there
        return True


def _installed(name: str) -> bool:
    """Whether the framework of ``name`` is installed (True for a name that needs none)."""
    return name not in _LAZY or all(_found(package) for package in _LAZY[name][2])


if not TYPE_CHECKING:  # a star import brings what it can load, without naming a missing extra
    __all__ = [name for name in __all__ if _installed(name)]


def __getattr__(name: str) -> object:
    """Import an adapter's module (and so its framework) on first use.

    A missing framework raises :class:`AdapterUnavailable`, an ``ImportError``, so ``hasattr``
    raises it too: ``from forge_app.adapters import X`` would turn an ``AttributeError`` into
    a bare "cannot import name". ``name in __all__`` tells whether the framework is installed.
    """
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, framework, packages, extra = _LAZY[name]
    try:
        loaded = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] in packages:
            raise AdapterUnavailable(framework, extra) from exc
        raise
    value: object = getattr(loaded, name)
    globals()[name] = value
    return value
