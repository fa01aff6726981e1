"""Real tool calls from the shared sessions (mini-swe-agent, OpenHands, SWE-agent), classified.

Each row names a session, a call id in it, what the call must become and whether
its result counts as a success (read from the output text, since OpenAI-format
transcripts carry no error flag).
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from forge_domain import Context, Role, TextMessage, ToolResult
from forge_domain.summary import ContextSummary
from forge_domain.tools import (
    FileReadTool,
    FileUpdateTool,
    GenericTool,
    SearchTool,
    ShellTool,
    SummaryTool,
    ToolCatalog,
)
from tests.sessions import SESSIONS, session_paths

pytestmark = pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions not available")

PONY = "/workspace/ponylang__ponyc__0.1"

ROWS: list[tuple[str, str, SummaryTool, bool]] = [
    (
        "msa-deepseek-astroid-1333",
        "call_00_Me5GgGuSHcPSZSfxNGJuF9LD",
        ShellTool(command='find . -type f -name "*.py" | head -30'),
        True,
    ),
    (
        "msa-deepseek-django-13964",
        "call_00_rtBOgxD0EOY8ugp9zAnnqJlt",
        ShellTool(command="python reproduce_issue.py"),
        False,
    ),
    (
        "msa-deepseek-django-15400",
        "call_00_coMRj1SuARnVLj9qlCS4JXxk",
        ShellTool(command='grep -r "ObjectProxy" --include="*.py" .'),
        False,
    ),
    (
        "msa-deepseek-reasoner-sqlfluff-1763",
        "call_00_28FVmXDrscgTgqqNHzcp65wD",
        ShellTool(command="pwd && ls -la"),
        True,
    ),
    (
        "msa-deepseek-sqlfluff-1733",
        "call_00_pGiiu5G4fY6kq7EyaXmJD5iH",
        ShellTool(command="python -m sqlfluff fix test_with_indent.sql --dialect ansi"),
        False,
    ),
    ("openhands-llama4-ponyc-4588", "toolu_01", ShellTool(command=f"cd {PONY} && ls -l"), True),
    (
        "openhands-llama4-ponyc-4588",
        "toolu_05",
        FileReadTool(path=f"{PONY}/src/libponyc/expr/match.c"),
        True,
    ),
    (
        "openhands-llama4-ponyc-4588",
        "toolu_10",
        FileUpdateTool(path=f"{PONY}/src/libponyc/expr/match.c"),
        False,
    ),
    (
        "openhands-llama4-ponyc-4588",
        "toolu_13",
        FileUpdateTool(path=f"{PONY}/src/libponyc/expr/match.c"),
        True,
    ),
    (
        "openhands-llama4-ponyc-4593",
        "toolu_14",
        FileReadTool(path=f"{PONY}/packages/cli/cli.pony"),
        False,
    ),
    (
        "openhands-llama4-ponyc-4593",
        "toolu_30",
        FileUpdateTool(path=f"{PONY}/packages/cli/command_parser.pony"),
        True,
    ),
    (
        "openhands-llama4-ponyc-4595",
        "toolu_12",
        FileUpdateTool(path=f"{PONY}/src/libponyc/ast/parser.c"),
        False,
    ),
    (
        "openhands-sdk-sonnet4-hello",
        "toolu_01AaHKJphyeTw3GFp4Xgiekv",
        FileUpdateTool(path="/workspace/hello.py"),
        False,
    ),
    (
        "openhands-sdk-sonnet4-hello",
        "toolu_01MgS75uyxLSueHHFj1DXiRZ",
        ShellTool(command="pwd && ls -la"),
        True,
    ),
    (
        "openhands-sdk-sonnet4-hello",
        "toolu_01A9Q4pzPLU8FwqfpZ8VJMBY",
        FileReadTool(path="hello.py"),
        False,
    ),
    (
        "sweagent-gpt4o-testrepo",
        "call_fJuazlMUN5fQDQ73G6XSpYpx",
        SearchTool(pattern="missing_colon.py"),
        True,
    ),
    (
        "sweagent-gpt4o-testrepo",
        "call_OhmPHGZp0XJ6JRnNkQaYcBMs",
        FileReadTool(path="/SWE-agent__test-repo/tests/missing_colon.py"),
        True,
    ),
    (
        "sweagent-gpt4o-testrepo",
        "call_DVnbJcFrvwPsrPt3KfIMf7OH",
        FileUpdateTool(path="/SWE-agent__test-repo/tests/missing_colon.py"),
        True,
    ),
    (
        "sweagent-marshmallow-1867-fc",
        "call_cyI71DYnRdoLHWwtZgIaW2wr",
        FileUpdateTool(path="reproduce.py"),
        True,
    ),
    (
        "sweagent-marshmallow-1867-fc",
        "call_q3VsBszvsntfyPkxeHq4i5N1",
        FileUpdateTool(path="/testbed/reproduce.py"),
        True,
    ),
    (
        "sweagent-marshmallow-1867-fc",
        "call_ahToD2vM0aQWJPkRmy5cumru",
        SearchTool(pattern="fields.py"),
        True,
    ),
    (
        "sweagent-marshmallow-1867-fc",
        "call_w3V11DzvRdoLHWwtZgIaW2wr",
        FileUpdateTool(path="/testbed/src/marshmallow/fields.py"),
        True,
    ),
    ("sweagent-marshmallow-1867-fc", "call_submit", GenericTool(name="submit"), True),
]


@cache
def _summary(session: str) -> ContextSummary:
    messages = json.loads((SESSIONS / f"{session}.json").read_text(encoding="utf-8"))
    return ContextSummary.from_messages(list(Context.from_openai(messages)))


@pytest.mark.parametrize(
    ("session", "call_id", "tool", "is_success"),
    ROWS,
    ids=[f"{row[0]}:{row[1]}" for row in ROWS],
)
def test_tool_catalog_classifies_real_session_calls(session, call_id, tool, is_success):
    actual = [
        (item.tool, item.is_success)
        for item in _summary(session).tool_calls()
        if item.id == call_id
    ]
    assert actual == [(tool, is_success)]


@pytest.mark.parametrize("session", sorted(p.stem for p in SESSIONS.glob("*.json")))
def test_tool_catalog_real_sessions_have_only_expected_generic_tools(session):
    actual = {
        item.tool.name
        for item in _summary(session).tool_calls()
        if isinstance(item.tool, GenericTool)
    }
    assert actual <= {"think", "submit"}


def _items_one_by_one(context: Context) -> list[tuple[str | None, SummaryTool, bool]]:
    """Every call of ``context`` classified on its own with the catalog's public methods."""
    catalog = ToolCatalog.default()
    results = {m.call_id: m for m in context if isinstance(m, ToolResult)}
    items: list[tuple[str | None, SummaryTool, bool]] = []
    for message in context:
        if isinstance(message, TextMessage) and message.role != Role.SYSTEM:
            for call in message.tool_calls or ():
                result = results.get(call.id)
                output = None if result is None else result.text
                success = result is not None and not catalog.has_failed(result)
                tools = catalog.classify(call, output=output)
                # files a shell command was read to write: the command's status is not theirs
                from_command = isinstance(tools[0], ShellTool)
                items.extend(
                    (call.id, tool, success or (from_command and position > 0))
                    for position, tool in enumerate(tools)
                )
    return items


@pytest.mark.parametrize("path", session_paths(), ids=lambda path: path.stem)
def test_summary_items_are_the_catalog_s_one_by_one_answers(path):
    context = Context.from_openai(json.loads(path.read_text(encoding="utf-8")))
    summary = ContextSummary.from_messages(list(context))
    actual = [(item.id, item.tool, item.is_success) for item in summary.tool_calls()]
    assert actual == _items_one_by_one(context)
