"""The last error of a summarised span is kept word for word, whatever the budget drops."""

from __future__ import annotations

import json

import pytest

from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_app.files._agents import default_agent
from forge_domain import (
    Compact,
    Context,
    ContextMessage,
    TextMessage,
    ToolCall,
    ToolResult,
)
from tests.sessions import SESSIONS


def _summary_text(context: Context) -> str:
    (summary,) = [m for m in context if isinstance(m, TextMessage) and is_summary_message(m)]
    return summary.text


def _shell(call_id: str, command: str) -> TextMessage:
    arguments = json.dumps({"command": command})
    return TextMessage.assistant(
        "Running it.", tool_calls=(ToolCall(id=call_id, name="execute_bash", arguments=arguments),)
    )


def _session(last_output: str) -> list[ContextMessage]:
    """A task, forty commands with long outputs that report no exit code, and a final one."""
    messages: list[ContextMessage] = [TextMessage.user("Build the project.")]
    for index in range(40):
        messages.append(_shell(f"c{index}", f"ls -la /work/dir{index}"))
        messages.append(ToolResult(call_id=f"c{index}", content=f"file{index}.txt\n" * 200))
    messages.append(_shell("last", "cd /workspace/project && make"))
    messages.append(ToolResult(call_id="last", content=last_output))
    messages.append(TextMessage.assistant("The build failed, let me look."))
    messages.append(TextMessage.user("Go on."))
    return messages


@pytest.mark.parametrize(
    ("output", "error"),
    [
        (
            "Error: could not load cache\nmake: *** [Makefile:192: build] Error 1",
            "Error: could not load cache",
        ),
        (
            "bash: ./project/ponyc: No such file or directory",
            "bash: ./project/ponyc: No such file or directory",
        ),
        ("fatal: not a git repository (or any of the parent directories): .git", "fatal: not a"),
    ],
    ids=["error-prefix", "no-such-file", "fatal"],
)
def test_compactor_keeps_last_error_without_exit_code_verbatim(output: str, error: str) -> None:
    fixture = Context(_session(output))
    compactor = Compactor(Compact(retention_window=2, summary_max_tokens=400))
    actual = _summary_text(compactor.compact(fixture, compactor.forced_strategy()).context)
    assert error in actual


def test_compactor_gives_no_error_to_a_plain_output() -> None:
    fixture = Context(_session("compiled 12 files\nbuild finished"))
    compactor = Compactor(Compact(retention_window=2, summary_max_tokens=400))
    actual = _summary_text(compactor.compact(fixture, compactor.forced_strategy()).context)
    assert "Error:" not in actual


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions are not on this machine")
@pytest.mark.parametrize(
    ("session", "cut", "error"),
    [
        ("openhands-llama4-ponyc-4588", 91, "Error: could not load cache"),
        (
            "openhands-llama4-ponyc-4595",
            46,
            "bash: ./ponylang__ponyc__0.1/ponyc: No such file or directory",
        ),
    ],
)
@pytest.mark.parametrize("window", [8_000, 16_000, 32_000])
def test_compactor_keeps_last_error_of_shared_sessions(
    session: str, cut: int, error: str, window: int
) -> None:
    """Issue 23: the summary paraphrased these errors but lost the error lines."""
    messages = Context.from_openai(json.loads((SESSIONS / f"{session}.json").read_text()))
    fixture = Context(list(messages)[:cut])
    compactor = Compactor(default_agent().with_compaction_threshold(window).compact)
    actual = _summary_text(compactor.compact(fixture, compactor.forced_strategy()).context)
    assert error in actual


def test_compactor_reads_only_the_newest_commands_for_the_last_error() -> None:
    """An error more than ``REACH`` commands back is not the last thing that went wrong."""
    messages = _session("compiled 12 files")
    error = "Error: could not load cache"
    messages[2] = ToolResult(call_id="c0", content=error)  # the first of 40 commands
    compactor = Compactor(Compact(retention_window=2, summary_max_tokens=4_000))
    with_reach = _summary_text(
        compactor.compact(Context(messages), compactor.forced_strategy()).context
    )
    more = (
        messages[:-2]
        + [
            m
            for i in range(30)
            for m in (_shell(f"d{i}", f"ls /d{i}"), ToolResult(call_id=f"d{i}", content="x"))
        ]
        + messages[-2:]
    )
    beyond = _summary_text(compactor.compact(Context(more), compactor.forced_strategy()).context)
    assert (error in with_reach, error in beyond) == (True, False)  # 41 commands, then 71
