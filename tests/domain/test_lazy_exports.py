"""``forge_domain`` exports its names on first use: importing it builds no model."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = ["forge_domain", "forge_domain.formats", "forge_domain.tools", "forge_domain.summary"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_has_a_home_that_defines_it(package: str):
    module = importlib.import_module(package)

    for name in module.__all__:
        home = module._EXPORTS.home(name)
        assert home is not None, name
        assert getattr(importlib.import_module(home), name) is getattr(module, name)


def test_importing_the_package_imports_none_of_its_modules():
    """None but the resolver itself (``forge_domain._lazy``, which imports only importlib)."""
    code = (
        "import sys, forge_domain\n"
        "print(sorted(m for m in sys.modules if m.startswith('forge_domain.')"
        " and m != 'forge_domain._lazy'))\n"
        "forge_domain.Context\n"
        "print('forge_domain._context' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert run.stdout.split("\n")[:2] == ["[]", "True"]
