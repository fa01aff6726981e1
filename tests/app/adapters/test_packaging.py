"""The adapters are optional: no framework in the base install, none loaded by importing."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]
FRAMEWORKS = {
    "pydantic-ai",
    "pydantic-ai-slim",
    "langchain",
    "langchain-core",
    "langgraph",
    "openai-agents",
}
EXTRAS = {"pydantic-ai": "pydantic-ai-slim", "langchain": "langchain", "agents": "openai-agents"}


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_base_dependencies_name_no_framework():
    names = {Requirement(line).name for line in project()["dependencies"]}

    assert names & FRAMEWORKS == set()


@pytest.mark.parametrize(("extra", "framework"), EXTRAS.items())
def test_each_adapter_extra_installs_its_framework(extra, framework):
    names = {Requirement(line).name for line in project()["optional-dependencies"][extra]}

    assert names == {framework}


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter from the repository root (it must exit 0)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )


def test_importing_forge_app_and_its_adapters_loads_no_framework():
    code = (
        "import sys, forge_app, forge_app.adapters\n"
        "from forge_app.adapters import HistoryCompactor\n"
        "roots = {'pydantic_ai', 'langchain', 'langchain_core', 'langgraph', 'agents'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in roots))\n"
    )

    result = _python(code)

    assert result.stdout.strip() == "[]"


def test_a_missing_framework_names_the_extra_to_install():
    code = (
        "import sys\n"
        "sys.modules['langchain'] = None\n"
        "import forge_app.adapters\n"
        "try:\n"
        "    forge_app.adapters.ForgeCompactionMiddleware\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )

    result = _python(code)

    assert result.stdout.strip() == (
        "AdapterUnavailable the LangChain adapter needs LangChain: "
        "pip install 'forge-compact[langchain]'"
    )


def test_a_from_import_of_a_missing_framework_names_the_extra_and_all_omits_it() -> None:
    # hasattr(forge_app.adapters, name) therefore raises: from-import starts with that very
    # hasattr, and an AttributeError there would become a bare "cannot import name".
    code = (
        "import sys\n"
        "sys.modules['langchain'] = None\n"
        "import forge_app.adapters\n"
        "print('ForgeCompactionMiddleware' in forge_app.adapters.__all__)\n"
        "try:\n"
        "    from forge_app.adapters import ForgeCompactionMiddleware\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )

    result = _python(code)

    assert result.stdout.strip().splitlines() == [
        "False",
        "AdapterUnavailable the LangChain adapter needs LangChain: "
        "pip install 'forge-compact[langchain]'",
    ]


def test_a_star_import_brings_the_adapters_whose_framework_is_installed():
    code = (
        "import sys\n"
        "sys.modules['langchain'] = None\n"
        "from forge_app.adapters import *\n"
        "print(sorted(name for name in dir() if name[0].isupper()))\n"
    )

    result = _python(code)

    assert result.stdout.strip() == "['ForgeHistoryProcessor', 'ForgeSession', 'HistoryCompactor']"
