"""Realistic coding sessions for the engine tests (shared by test_engine_* and test_llm_*)."""

from __future__ import annotations

from forge_domain import Agent, Compact, Context, TextMessage, ToolCall, ToolResult

BIG = "line of tool output\n" * 150
"""A 3,000-character tool output."""

SECRET = "sk-abcdefghijklmnopqrstuvwxyz0123456789"
"""An API key that appears in a tool output and must never reach the summariser."""


def coding_session(rounds: int = 4) -> Context:
    """A system prompt, a task, ``rounds`` tool rounds, then a follow-up question."""
    messages: list = [
        TextMessage.system("You are a careful coding agent."),
        TextMessage.user("Fix the failing tests in the parser."),
        TextMessage.assistant("I'll start by reading the parser."),
    ]
    for number in range(1, rounds + 1):
        write = ToolCall(
            id=f"w{number}",
            name="write",
            arguments=f'{{"file_path": "/repo/src/parser_{number}.py", "content": "x = {number}"}}',
        )
        run = ToolCall(id=f"s{number}", name="shell", arguments='{"command": "pytest -x"}')
        messages += [
            TextMessage.assistant(f"Editing parser_{number}.py.", (write,)),
            ToolResult.of(f"w{number}", "written"),
            TextMessage.assistant(None, (run,)),
            ToolResult.failed(f"s{number}", f"env OPENAI_API_KEY={SECRET}\n{BIG}"),
        ]
    messages += [
        TextMessage.assistant("The tests still fail on the tokenizer."),
        TextMessage.user("Now also update the docs for the tokenizer."),
        TextMessage.assistant("Updating the docs."),
    ]
    return Context(messages)


def coding_agent(engine: str = "llm", **compact: object) -> Agent:
    """An agent with a small window (threshold 2,800 tokens) and a cheap summary model."""
    settings: dict[str, object] = {"engine": engine, "model": "cheap-model", "retention_window": 2}
    settings.update(compact)
    return Agent(
        id="coder",
        model="main-model",
        context_length=4_000,
        compact=Compact.model_validate(settings),
    )
