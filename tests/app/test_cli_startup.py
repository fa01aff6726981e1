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
    "anyio",
    "forge_app.compaction._compactor",
    "forge_app.compaction._registry",
    "forge_app.evaluation",
    "forge_app.runtime._orchestrator",
    "forge_app.store",
    "forge_app.summary",
    "forge_domain.formats._anthropic",
    "forge_domain.formats._responses",
    "forge_domain.summary",
    "forge_domain.tools._catalog",
    "httpx",
    "jinja2",
    "langchain",
    "langchain_core",
    "multiprocessing",
    "openai",
    "psycopg",
    "pydantic_ai",
    "sqlite3",
    "structlog",
    "tiktoken",
]
"""Imported by no command that does not use them: a compact that fires no trigger builds no
engine (``compaction._triggers``), logs nothing (structlog is configured when imported)."""
NOT_FOR_HELP = [
    "forge_app.compaction",
    "forge_app.files._agents",
    "forge_app.files._transcripts",
    "forge_domain._agent",
    "forge_domain._messages",
    "pluggy",
    "tenacity",
    "yaml",
]
"""``--help`` builds no model: the options read ``Literal`` names from modules that import
nothing (``forge_domain._choices``, ``files._file_format``, ``runtime._defaults``)."""
NOT_FOR_TOP_HELP = ["importlib.metadata", "pydantic"]
"""Not even pydantic for ``forge-compact --help``; a command's own ``--help`` imports it
(typer's parameter adapters do)."""
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
    assert _imported([*NEVER_AT_START, *NOT_FOR_HELP, *NOT_FOR_TOP_HELP], "--help") == []


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


def test_a_compact_without_trigger_says_so_as_the_engine_would(tmp_path):
    """The no-trigger path (no engine built) reports what the engine's path reported."""
    metrics = tmp_path / "metrics.json"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from forge_app.cli import main; main()",
            "compact",
            str(DEMO_SESSION),
            "-o",
            str(tmp_path / "out.json"),
            "--json-metrics",
            str(metrics),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    reported = json.loads(metrics.read_text())

    assert (reported["trigger"], reported["engine"], "no trigger fired" in run.stderr) == (
        "none",
        "frame",
        True,
    )
    assert json.loads((tmp_path / "out.json").read_text()) == json.loads(DEMO_SESSION.read_text())


def test_logging_asked_for_before_structlog_is_imported_applies_once_it_is():
    code = (
        "import sys\n"
        "from forge_app.runtime._logging import configure_logging_on_import\n"
        "configure_logging_on_import('json', level='info')\n"
        "assert 'structlog' not in sys.modules\n"
        "import structlog\n"
        "structlog.get_logger().info('hello', n=1)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    line = json.loads(run.stderr.strip().splitlines()[-1])

    assert (line["event"], line["n"], line["level"], run.stdout) == ("hello", 1, "info", "")
