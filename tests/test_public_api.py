"""Each package's ``__all__`` is sorted, importable and complete (httpx's check, stricter).

Packages: ``forge_domain`` (flat, public modules) and ``forge_app`` with its layer
packages (``summary``, ``compaction``, ``runtime``, ``files``), whose implementation
modules are private (``_frame.py``).

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
                or (private and holder in ROOTS)
            ):
                # Packages are checked above; forge_app.errors is its own namespace; a private
                # module of a root is an internal helper.
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
