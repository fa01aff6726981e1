"""``forge_domain`` exports its names on first use: importing it builds no model."""

from __future__ import annotations

import subprocess
import sys

import forge_domain


def test_every_export_has_one_home_and_every_home_is_exported():
    homes = sorted(forge_domain._HOME_OF)

    assert homes == sorted(forge_domain.__all__)


def test_importing_the_package_imports_none_of_its_modules():
    code = (
        "import sys, forge_domain\n"
        "print(sorted(m for m in sys.modules if m.startswith('forge_domain.')))\n"
        "forge_domain.Context\n"
        "print('forge_domain.context' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert run.stdout.split("\n")[:2] == ["[]", "True"]
