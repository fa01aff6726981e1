"""ContextSummary: built from messages as forge builds it (forge-spec §9)."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.testing import PATTERN_LETTERS, pattern_messages
from forge_domain.tools import (
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    McpTool,
    ShellTool,
    ToolCatalog,
)
from tests.vectors import context_from_forge, vector_params


@pytest.mark.parametrize("entry", vector_params("summary_from_context"))
def test_summary_from_messages_matches_forge_vectors(entry):
    fixture = list(context_from_forge(entry["input"]["messages"]))
    actual = ContextSummary.from_messages(fixture).to_forge_json()
    expected = entry["expected"]
    assert actual == expected


@pytest.mark.parametrize("entry", vector_params("summary_from_context"))
def test_summary_forge_json_round_trips(entry):
    fixture = ContextSummary.from_forge_json(entry["expected"])
    actual = fixture.to_forge_json()
    assert actual == entry["expected"]


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def test_summary_model_dump_round_trips():
    fixture = ContextSummary.from_messages(
        [
            TextMessage.user("go"),
            TextMessage.assistant(
                "",
                (_call("c1", "think", '{"thought":"x"}'), _call("c2", "Bash", '{"command":"ls"}')),
            ),
            ToolResult.of("c2", "<returncode>1</returncode>"),
        ]
    )
    actual = ContextSummary.model_validate(fixture.model_dump(mode="json"))
    assert actual == fixture


def test_summary_generic_tool_serialises_as_forge_mcp():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    ToolCallItem(
                        id="c", tool=GenericTool(name="x", arguments="{}"), is_success=True
                    ),
                ),
            ),
        )
    )
    actual = fixture.to_forge_json()
    expected = [
        {
            "role": "Assistant",
            "contents": [
                {"tool_call": {"id": "c", "tool": {"mcp": {"name": "x"}}, "is_success": True}}
            ],
        }
    ]
    assert actual == expected


def test_summary_infers_failure_from_output_text():
    fixture = [
        TextMessage.user("fix it"),
        TextMessage.assistant("", (_call("c1", "bash", '{"command":"pytest"}'),)),
        ToolResult.of("c1", "<returncode>1</returncode>\n<output>\nFAILED\n</output>"),
        TextMessage.assistant("", (_call("c2", "bash", '{"command":"pytest -x"}'),)),
        ToolResult.of("c2", "<returncode>0</returncode>\n<output>\nok\n</output>"),
    ]
    actual = [item.is_success for item in ContextSummary.from_messages(fixture).tool_calls()]
    assert actual == [False, True]


def test_summary_trusts_only_the_error_flag_without_inference():
    fixture = [
        TextMessage.assistant("", (_call("c1", "bash", '{"command":"pytest"}'),)),
        ToolResult.of("c1", "<returncode>1</returncode>"),
    ]
    catalog = ToolCatalog.default().model_copy(update={"failure_inference": "none"})
    actual = [
        item.is_success for item in ContextSummary.from_messages(fixture, catalog).tool_calls()
    ]
    assert actual == [True]


def test_summary_keeps_the_evidence_of_failed_calls():
    fixture = [
        TextMessage.user("fix it"),
        TextMessage.assistant("", (_call("c1", "bash", '{"command":"pytest"}'),)),
        ToolResult.of("c1", "<returncode>1</returncode>\n<output>\nFAILED t.py::test_a\n</output>"),
        TextMessage.assistant("", (_call("c2", "bash", '{"command":"python s.py"}'),)),
        ToolResult.of(
            "c2", "<returncode>0</returncode>\nTraceback (most recent call last):\nKeyError: 1"
        ),
        TextMessage.assistant("", (_call("c3", "bash", '{"command":"ls"}'),)),
        ToolResult.of("c3", "<returncode>0</returncode>\na.py"),
    ]
    actual = [
        (item.is_success, item.evidence)
        for item in ContextSummary.from_messages(fixture).tool_calls()
    ]
    assert actual == [
        (False, "FAILED t.py::test_a | exit code 1"),
        (True, "KeyError: 1"),
        (True, None),
    ]


def test_summary_files_a_shell_command_writes_carry_no_status_of_their_own():
    command = "cat > t.py <<'EOF'\nassert False\nEOF\npython t.py"
    fixture = [
        TextMessage.assistant("", (_call("c1", "bash", _json({"command": command})),)),
        ToolResult.of("c1", "<returncode>1</returncode>\nAssertionError"),
    ]
    actual = list(ContextSummary.from_messages(fixture).tool_calls())
    expected = [
        ToolCallItem(
            id="c1",
            tool=ShellTool(command=command),
            is_success=False,
            evidence="AssertionError | exit code 1",
        ),
        ToolCallItem(id="c1", tool=FileUpdateTool(path="t.py"), is_success=True),
    ]
    assert actual == expected


def test_summary_one_patch_call_yields_one_item_per_file():
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n"
        "*** Add File: src/b.py\n+z\n*** Delete File: src/c.py\n*** End Patch"
    )
    fixture = [
        TextMessage.assistant("", (_call("p1", "apply_patch", _json({"input": patch})),)),
        ToolResult.of("p1", "Done!"),
    ]
    actual = ContextSummary.from_messages(fixture).blocks
    expected = (
        SummaryBlock(
            role=Role.ASSISTANT,
            contents=(
                ToolCallItem(id="p1", tool=FileUpdateTool(path="src/a.py"), is_success=True),
                ToolCallItem(id="p1", tool=FileUpdateTool(path="src/b.py"), is_success=True),
                ToolCallItem(id="p1", tool=FileRemoveTool(path="src/c.py"), is_success=True),
            ),
        ),
    )
    assert actual == expected


def test_summary_ignores_image_only_messages_between_same_role_messages():
    fixture = [
        TextMessage.assistant("look"),
        TextMessage.image("data:image/png;base64,AAAA"),
        TextMessage.assistant("done"),
    ]
    actual = ContextSummary.from_messages(fixture).blocks
    expected = (
        SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="look"), TextItem(text="done"))),
    )
    assert actual == expected


def test_summary_mcp_like_unknown_tool_stays_mcp_and_others_become_generic():
    fixture = [
        TextMessage.assistant(
            "",
            (
                _call("c1", "mcp__github__create_issue", '{"title":"bug"}'),
                _call("c2", "frobnicate", '{"level":3}'),
                _call("c3", "read", "not json"),
            ),
        )
    ]
    actual = [item.tool for item in ContextSummary.from_messages(fixture).tool_calls()]
    expected = [
        McpTool(name="mcp__github__create_issue"),
        GenericTool(name="frobnicate", arguments='{"level":3}'),
        GenericTool(name="read", arguments="not json"),
    ]
    assert actual == expected


def test_summary_calls_without_result_are_not_successful():
    fixture = [TextMessage.assistant("", (_call("c1", "read", '{"file_path":"/a"}'),))]
    actual = list(ContextSummary.from_messages(fixture).tool_calls())
    expected = [ToolCallItem(id="c1", tool=FileReadTool(path="/a"), is_success=False)]
    assert actual == expected


def test_summary_tool_calls_iterates_in_order():
    fixture = ContextSummary.from_messages(
        [
            TextMessage.assistant("", (_call("c1", "shell", '{"command":"a"}'),)),
            TextMessage.user("u"),
            TextMessage.assistant("", (_call("c2", "shell", '{"command":"b"}'),)),
        ]
    )
    actual = [item.tool for item in fixture.tool_calls()]
    assert actual == [ShellTool(command="a"), ShellTool(command="b")]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param([{"role": "Robot", "contents": []}], id="unknown-role"),
        pytest.param([{"role": "User"}], id="no-contents"),
        pytest.param([{"role": "User", "contents": [{"image": 1}]}], id="unknown-item"),
        pytest.param(
            [{"role": "User", "contents": [{"tool_call": {"id": None, "tool": 3}}]}], id="bad-tool"
        ),
        pytest.param(
            [{"role": "User", "contents": [{"tool_call": {"id": None, "tool": {"read": 3}}}]}],
            id="bad-tool-fields",
        ),
    ],
)
def test_summary_from_forge_json_rejects_malformed_data(raw):
    with pytest.raises(ValueError, match=r"forge summary|role"):
        ContextSummary.from_forge_json(raw)


def _json(value: object) -> str:
    return json.dumps(value)


@given(st.text(alphabet=PATTERN_LETTERS, max_size=30))
def test_summary_blocks_alternate_roles_and_keep_every_call(letters):
    messages = pattern_messages(letters)
    summary = ContextSummary.from_messages(messages)
    roles = [block.role for block in summary.blocks]
    calls = sum(
        len(m.tool_calls or ())
        for m in messages
        if isinstance(m, TextMessage) and m.role != Role.SYSTEM
    )
    assert all(block.contents for block in summary.blocks)
    assert Role.SYSTEM not in roles
    assert all(a != b for a, b in itertools.pairwise(roles))
    assert len(list(summary.tool_calls())) == calls


def _read(
    success: bool, earlier: int = 0, earlier_failures: int = 0, evidence: str | None = None
) -> ToolCallItem:
    return ToolCallItem(
        id=None,
        tool=FileReadTool(path="a.py"),
        is_success=success,
        earlier=earlier,
        earlier_failures=earlier_failures,
        evidence=evidence,
    )


WITH_EARLIER_CASES = [
    (_read(True), _read(True), _read(True, 1, 0)),
    (_read(True), _read(False, evidence="E1"), _read(True, 1, 1, "E1")),
    (
        _read(False, evidence="E2"),
        _read(False, evidence="E1"),
        _read(False, 1, 1, "E2; earlier: E1"),
    ),
    (_read(False), _read(True), _read(False, 1, 0)),
    (_read(True, 2, 1), _read(False, 3, 2), _read(True, 6, 4)),
]


@pytest.mark.parametrize(
    ("last", "previous", "expected"),
    WITH_EARLIER_CASES,
    ids=[
        "two-successes",
        "failure-then-success-keeps-its-evidence",
        "two-failures-keep-both-errors-newest-first",
        "success-then-failure",
        "folded-lines",
    ],
)
def test_tool_call_item_with_earlier_counts_calls_and_failures(last, previous, expected):
    actual = last.with_earlier(previous)
    assert (actual, actual.calls, actual.failures) == (
        expected,
        last.calls + previous.calls,
        last.failures + previous.failures,
    )


def test_tool_call_item_rejects_more_earlier_failures_than_earlier_calls():
    with pytest.raises(ValueError, match=r"earlier_failures must be at most earlier \(1\), got 2"):
        _read(True, 1, 2)


def test_summary_data_stored_before_counts_and_notes_still_validates():
    fixture = {
        "blocks": [
            {"role": "user", "contents": [{"kind": "text", "text": "go"}]},
            {
                "role": "assistant",
                "contents": [
                    {
                        "kind": "tool_call",
                        "id": "c1",
                        "tool": {"kind": "file_read", "path": "a.py"},
                        "is_success": True,
                    }
                ],
            },
        ]
    }
    actual = ContextSummary.model_validate(fixture)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="go"),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(ToolCallItem(id="c1", tool=FileReadTool(path="a.py"), is_success=True),),
            ),
        )
    )
    assert actual == expected


def _block(role: Role, *texts: str) -> SummaryBlock:
    return SummaryBlock(role=role, contents=tuple(TextItem(text=text) for text in texts))


OF_BLOCKS_CASES = [
    ([_block(Role.USER, "a"), _block(Role.ASSISTANT)], [_block(Role.USER, "a")]),
    (
        [_block(Role.USER, "a"), _block(Role.ASSISTANT), _block(Role.USER, "b")],
        [_block(Role.USER, "a", "b")],
    ),
    (
        [_block(Role.ASSISTANT, "a"), _block(Role.ASSISTANT, "b", "a")],
        [_block(Role.ASSISTANT, "a", "b", "a")],
    ),
    (
        [_block(Role.USER, "a"), _block(Role.ASSISTANT, "b"), _block(Role.USER, "c")],
        [_block(Role.USER, "a"), _block(Role.ASSISTANT, "b"), _block(Role.USER, "c")],
    ),
    ([_block(Role.ASSISTANT), _block(Role.USER, "a")], [_block(Role.USER, "a")]),
]


@pytest.mark.parametrize(
    ("blocks", "expected"),
    OF_BLOCKS_CASES,
    ids=["empty-dropped", "joined-across-a-gap", "run-joined", "alternating-kept", "empty-lead"],
)
def test_summary_of_blocks_drops_empty_blocks_and_joins_runs(blocks, expected):
    actual = ContextSummary.of_blocks(blocks)
    assert actual == ContextSummary(blocks=tuple(expected))
