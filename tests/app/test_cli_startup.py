"""The command line starts without importing what the command does not use.

Each case runs in a fresh interpreter and lists which heavy modules it imported: the
model client (openai, httpx), the framework adapters, the PostgreSQL driver, tiktoken,
the agent loop, the session store and the evaluation layer. ``benchmarks/STARTUP.md``
has the CPU time this saves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO_SESSION = REPO / "forge_app" / "demo" / "session.json"
NEVER_AT_START = [
    "agents",
    "forge_app.evaluation",
    "forge_app.runtime._orchestrator",
    "forge_app.store",
    "httpx",
    "langchain",
    "langchain_core",
    "openai",
    "psycopg",
    "pydantic_ai",
    "sqlite3",
    "tiktoken",
]
NOT_FOR_HELP = ["forge_app.compaction", "forge_app.summary", "jinja2", "pluggy", "tenacity"]
_PROBE = """
import json, sys
from forge_app.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)), file=sys.stderr)
"""


def _imported(watched: list[str], *args: str | Path) -> list[str]:
    """Which of ``watched`` a fresh ``forge-compact ARGS...`` imported."""
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(watched), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: list[str] = json.loads(run.stderr.strip().splitlines()[-1])
    return found


def test_help_imports_none_of_the_heavy_modules():
    assert _imported([*NEVER_AT_START, *NOT_FOR_HELP], "--help") == []


@pytest.mark.parametrize("command", ["compact", "replay", "run", "eval", "batch", "history"])
def test_help_of_a_command_imports_none_of_the_heavy_modules(command):
    assert _imported([*NEVER_AT_START, *NOT_FOR_HELP], command, "--help") == []


def test_compact_that_fires_no_trigger_imports_none_of_the_heavy_modules(tmp_path):
    assert _imported(NEVER_AT_START, "compact", DEMO_SESSION, "-o", tmp_path / "out.json") == []


def test_the_public_names_still_import_on_first_use():
    """``forge_app.X`` of every exported name resolves (PEP 562), in a fresh interpreter."""
    code = (
        "import forge_app, forge_app.runtime\n"
        "for package in (forge_app, forge_app.runtime):\n"
        "    for name in package.__all__:\n"
        "        getattr(package, name)\n"
        "from forge_app import Orchestrator, replay\n"
        "from forge_app.runtime import RetryPolicy\n"
        "print(Orchestrator.__module__, replay.__module__, RetryPolicy().deadline)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert run.stdout.split() == [
        "forge_app.runtime._orchestrator",
        "forge_app.runtime._replay",
        "600.0",
    ]
