"""Each package's ``__all__`` is sorted, importable and complete (httpx's check, stricter).

Packages: ``forge_domain`` (the core model) with its parts (``formats``, ``tools``,
``summary``) and ``forge_app`` with its layer packages (``summary``, ``compaction``,
``runtime``, ``files`` ...), whose implementation modules are private (``_frame.py``).

The rule for "complete": every module's public surface is re-exported by the package
that holds it. A module's public surface is its own ``__all__`` when it declares one
(that is how a module keeps a helper importable by sibling modules but out of the API);
otherwise it is every class and function the module defines whose name does not start
with ``_``. Constants and type aliases are exported by choice, not required.

``forge_app`` itself re-exports a curated subset of its layers (what most users need),
kept small on purpose; the namespaces in ``SEPARATE_NAMESPACES`` are imported by their
own dotted name and are not re-exported (test helpers, the console script).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOTS = ("forge_domain", "forge_app")
SEPARATE_NAMESPACES = frozenset(
    {
        "forge_domain.testing",  # pattern() helpers for tests: `from forge_domain.testing import`
        "forge_app.cli",  # the `forge-compact` console script; its commands are not a library API
    }
)
CURATED_API_LIMIT = 45
"""Most names ``forge_app`` may export at its top level."""
TOP_LEVEL_LIMIT = 120
"""Most names ``forge_domain`` and ``forge_app`` may export at their top levels together."""
CORE_PACKAGE = "forge_domain"
"""A root whose private modules are its implementation (the core model), not helpers."""


def _in_separate_namespace(name: str) -> bool:
    return any(name == ns or name.startswith(ns + ".") for ns in SEPARATE_NAMESPACES)


def _walk(package: ModuleType) -> list[ModuleType]:
    found = []
    for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
        if not _in_separate_namespace(info.name):
            found.append(importlib.import_module(info.name))
    return found


def _packages() -> list[str]:
    """The roots and every public package below them."""
    names = list(ROOTS)
    for root in ROOTS:
        for module in _walk(importlib.import_module(root)):
            is_package = hasattr(module, "__path__")
            last = module.__name__.rsplit(".", 1)[-1]
            if is_package and not last.startswith("_"):
                names.append(module.__name__)
    return names


def _holder(module: ModuleType) -> str:
    """The package that must re-export ``module``'s surface: its parent package."""
    return module.__name__.rsplit(".", 1)[0]


def _public_surface(module: ModuleType) -> set[str]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return set(declared)
    return {
        name
        for name, value in vars(module).items()
        if name.isidentifier()
        and not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and getattr(value, "__module__", None) == module.__name__
    }


def _ruff_isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


@pytest.mark.parametrize("package_name", _packages())
def test_public_api_all_is_sorted_without_duplicates(package_name):
    exported = importlib.import_module(package_name).__all__
    actual = list(exported)
    assert actual == sorted(set(exported), key=_ruff_isort_key)


@pytest.mark.parametrize("package_name", _packages())
def test_public_api_all_names_exist(package_name):
    package = importlib.import_module(package_name)
    actual = [name for name in package.__all__ if not hasattr(package, name)]
    assert actual == []


def _module_params() -> list[object]:
    params = []
    for root in ROOTS:
        for module in _walk(importlib.import_module(root)):
            holder = _holder(module)
            private = module.__name__.rsplit(".", 1)[-1].startswith("_")
            if (
                hasattr(module, "__path__")
                or holder == "forge_app"
                or (private and holder in ROOTS and holder != CORE_PACKAGE)
            ):
                # Packages are checked above; forge_app.errors is its own namespace; a private
                # module of forge_app is an internal helper (forge_domain's hold the core model).
                continue
            params.append(pytest.param(module.__name__, id=module.__name__))
    return params


@pytest.mark.parametrize("module_name", _module_params())
def test_public_api_all_is_complete(module_name):
    module = importlib.import_module(module_name)
    exported = set(importlib.import_module(_holder(module)).__all__)
    actual = sorted(_public_surface(module) - exported)
    # Fix a failure by exporting the name from the package __init__, renaming it with a
    # leading underscore, or declaring the module's public surface in its own __all__.
    assert actual == []


def test_forge_app_top_level_is_a_small_curated_subset_of_its_layers():
    top = importlib.import_module("forge_app").__all__
    layers = set(importlib.import_module("forge_app.errors").__dict__)
    for name in _packages():
        if name.startswith("forge_app."):
            layers |= set(importlib.import_module(name).__all__)
    actual = (len(top) <= CURATED_API_LIMIT, sorted(set(top) - layers))
    assert actual == (True, [])


def test_both_top_levels_together_export_at_most_the_limit():
    sizes = [len(importlib.import_module(root).__all__) for root in ROOTS]
    assert sum(sizes) <= TOP_LEVEL_LIMIT, sizes


def _documented_domain_names() -> set[str]:
    """Names the README, plans, examples and templates import or name from ``forge_domain``."""
    root = Path(__file__).resolve().parents[1]
    files = [root / "README.md", *root.glob("plans/*.md"), *root.glob("templates/*")]
    files += root.glob("examples/**/*.py")
    names: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"from forge_domain import \(([^)]*)\)", text):
            names |= set(re.findall(r"\b(\w+)\b", block))
        for line in re.findall(r"from forge_domain import ([\w, ]+)", text):
            names |= {name.strip() for name in line.split(",") if name.strip()}
        names |= set(re.findall(r"\bforge_domain\.([A-Za-z]\w*)\b(?!\.)", text))
    return names - {"formats", "tools", "summary", "testing"}


def test_documented_names_still_import_from_forge_domain():
    import forge_domain

    names = _documented_domain_names()
    missing = sorted(name for name in names if not hasattr(forge_domain, name))
    assert (missing, len(names) > 15) == ([], True)


@pytest.mark.parametrize(
    "part", ["forge_domain.formats", "forge_domain.tools", "forge_domain.summary"]
)
def test_names_forge_domain_exported_before_its_parts_resolve_to_the_parts_objects(part):
    import forge_domain

    package = importlib.import_module(part)
    moved = set(forge_domain._MOVED[part])
    actual = (
        sorted(moved - set(package.__all__)),
        sorted(moved & set(forge_domain.__all__)),
        [n for n in sorted(moved) if getattr(forge_domain, n) is not getattr(package, n)],
    )
    assert actual == ([], [], [])
