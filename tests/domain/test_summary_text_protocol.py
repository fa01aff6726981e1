"""Summaries of text-protocol sessions: an action and its observation become a tool line."""

from __future__ import annotations

from forge_domain import Role, TextMessage
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.summary._summary import EARLIER_ACTION
from forge_domain.tools import FileReadTool, FileUpdateTool, GenericTool, ShellTool


def _line(tool, success: bool = True, evidence: str | None = None) -> ToolCallItem:
    return ToolCallItem(id=None, tool=tool, is_success=success, evidence=evidence)


def test_mini_swe_agent_turns_become_command_lines_with_outcomes():
    fixture = [
        TextMessage.system("one bash block per answer"),
        TextMessage.user("fix the bug"),
        TextMessage.assistant("THOUGHT: reproduce.\n\n```bash\npython r.py\n```"),
        TextMessage.user(
            "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
            '  File "r.py", line 2, in <module>\nKeyError: 3\n</output>'
        ),
        TextMessage.assistant("THOUGHT: patch it.\n\n```bash\nsed -i 's/3/4/' r.py\n```"),
        TextMessage.user("<returncode>0</returncode>\n<output>\n</output>"),
        TextMessage.user("also add a test"),
    ]
    actual = ContextSummary.from_messages(fixture).blocks
    expected = (
        SummaryBlock(role=Role.USER, contents=(TextItem(text="fix the bug"),)),
        SummaryBlock(
            role=Role.ASSISTANT,
            contents=(
                TextItem(text="THOUGHT: reproduce."),
                _line(
                    ShellTool(command="python r.py"),
                    False,
                    "KeyError: 3 | at r.py:2 in <module> | exit code 1",
                ),
                TextItem(text="THOUGHT: patch it."),
                _line(ShellTool(command="sed -i 's/3/4/' r.py")),
                _line(FileUpdateTool(path="r.py")),
            ),
        ),
        SummaryBlock(role=Role.USER, contents=(TextItem(text="also add a test"),)),
    )
    assert actual == expected


def test_swe_agent_commands_are_classified_by_name_and_edits_by_their_output():
    fixture = [
        TextMessage.user("ISSUE: x"),
        TextMessage.assistant("Open it.\n```\nopen src/a.py\n```"),
        TextMessage.user(
            "[File: /r/src/a.py (9 lines total)]\n1:x\n(Current directory: /r)\nbash-$"
        ),
        TextMessage.assistant("Fix it.\n```\nedit 1:1\ny\nend_of_edit\n```"),
        TextMessage.user(
            "[File: /r/src/a.py (9 lines total)]\n1:y\n(Current directory: /r)\nbash-$"
        ),
    ]
    actual = list(ContextSummary.from_messages(fixture).tool_calls())
    expected = [_line(FileReadTool(path="src/a.py")), _line(FileUpdateTool(path="/r/src/a.py"))]
    assert actual == expected


def test_an_unmarked_answer_without_outcome_is_also_kept_as_a_user_text():
    fixture = [
        TextMessage.user("task"),
        TextMessage.assistant("Submit.\n```bash\ngit diff\n```"),
        TextMessage.user("diff --git a/x.py b/x.py"),
    ]
    actual = ContextSummary.from_messages(fixture).blocks
    expected = (
        SummaryBlock(role=Role.USER, contents=(TextItem(text="task"),)),
        SummaryBlock(
            role=Role.ASSISTANT,
            contents=(TextItem(text="Submit."), _line(ShellTool(command="git diff"))),
        ),
        SummaryBlock(role=Role.USER, contents=(TextItem(text="diff --git a/x.py b/x.py"),)),
    )
    assert actual == expected


def test_a_span_cut_between_an_action_and_its_answer_loses_neither():
    failed = "<returncode>2</returncode>\n<output>\nmake: *** No rule\n</output>"
    before = [
        TextMessage.user("task"),
        TextMessage.assistant("Build.\n```bash\nmake\n```"),
    ]
    after = [
        TextMessage.user(failed),
        TextMessage.assistant("Look.\n```bash\nls\n```"),
        TextMessage.user("<returncode>0</returncode>\n<output>\nMakefile\n</output>"),
        TextMessage.user("<returncode>0</returncode>\n<output>\nok\n</output>"),
    ]
    actual = (
        list(ContextSummary.from_messages(before).tool_calls()),
        list(ContextSummary.from_messages(after).tool_calls()),
    )
    expected = (
        [_line(ShellTool(command="make"))],  # answered later: no status yet
        [
            _line(GenericTool(name=EARLIER_ACTION), False, "make: *** No rule | exit code 2"),
            _line(ShellTool(command="ls")),
        ],
    )
    assert actual == expected


def test_openhands_function_calls_in_text_are_classified_by_the_catalog():
    fixture = [
        TextMessage.user("create hello.py"),
        TextMessage.assistant(
            "Create it.\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n"
            "<parameter=path>/w/hello.py</parameter>\n<parameter=file_text>print(1)</parameter>\n"
            "</function>"
        ),
        TextMessage.user("EXECUTION RESULT of [str_replace_editor]:\nFile created successfully"),
    ]
    actual = list(ContextSummary.from_messages(fixture).tool_calls())
    assert actual == [_line(FileUpdateTool(path="/w/hello.py"))]
