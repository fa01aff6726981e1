"""The prune tier: old tool outputs become one-line placeholders; pairs stay valid."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction._boundaries import head_end, tail_start
from forge_app.compaction._pruning import PRUNED_MARKER, prune_tool_outputs
from forge_domain import Context, TextMessage, ToolCall, ToolResult
from forge_domain.testing import pattern, pattern_of
from forge_domain.validation import find_violations

BIG = "x" * 4_812


def _session(*turns: tuple[str, str, str, bool]) -> Context:
    """One user message, then per turn an assistant call and its result."""
    messages: list = [TextMessage.system("sys"), TextMessage.user("fix the tests")]
    for number, (name, arguments, output, failed) in enumerate(turns, start=1):
        call = ToolCall(id=f"call_{number}", name=name, arguments=arguments)
        messages.append(TextMessage.assistant(None, (call,)))
        result = ToolResult.failed if failed else ToolResult.of
        messages.append(result(f"call_{number}", output, name=name))
    messages += [TextMessage.assistant("done"), TextMessage.user("thanks")]
    return Context(messages)


PLACEHOLDERS = [
    (
        "failed_command",
        ("bash", '{"command": "pytest -x"}', BIG, True),
        "[tool output pruned: bash `pytest -x` -> failed, 4,812 chars]",
    ),
    (
        "read_path",
        ("read", '{"file_path": "/repo/src/app.py"}', BIG, False),
        "[tool output pruned: read `/repo/src/app.py` -> ok, 4,812 chars]",
    ),
    (
        "secret_in_command",
        ("shell", '{"command": "TOKEN=abc123secret ./deploy"}', BIG, False),
        "[tool output pruned: shell `TOKEN=[REDACTED] ./deploy` -> ok, 4,812 chars]",
    ),
    (
        "invalid_arguments",
        ("mcp_tool", "{not json", BIG, False),
        "[tool output pruned: mcp_tool -> ok, 4,812 chars]",
    ),
]


@pytest.mark.parametrize(
    ("turn", "expected"), [c[1:] for c in PLACEHOLDERS], ids=[c[0] for c in PLACEHOLDERS]
)
def test_prune_describes_the_call(turn, expected):
    fixture = _session(turn)

    actual = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).context[3].text

    assert actual == expected


def test_prune_points_a_repeated_output_at_the_first_call():
    fixture = _session(
        ("read", '{"path": "a.py"}', BIG, False), ("read", '{"path": "a.py"}', BIG, False)
    )

    actual = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).context[5].text

    assert actual == "[tool output pruned: read `a.py` -> same output as call call_1, 4,812 chars]"


def test_prune_keeps_short_outputs_user_messages_and_the_tail():
    fixture = _session(
        ("read", '{"path": "a.py"}', "short", False),
        ("read", '{"path": "b.py"}', BIG, False),
        ("read", '{"path": "c.py"}', BIG, False),
    )

    pruned = prune_tool_outputs(fixture, protect_from=6)
    actual = [message.text.startswith(PRUNED_MARKER) for message in pruned.context]

    assert actual == [False, False, False, False, False, True, False, False, False, False]


def test_prune_is_idempotent():
    fixture = _session(("bash", '{"command": "make"}', BIG, False))
    once = prune_tool_outputs(fixture, protect_from=len(fixture)).context

    actual = prune_tool_outputs(once, protect_from=len(once))

    assert actual.indices == ()


@given(st.text(alphabet="utTrea", max_size=30), st.integers(min_value=0, max_value=30))
def test_prune_never_changes_shape_or_validity(letters, protect_from):
    fixture = pattern("su" + letters)
    big = Context(
        [
            ToolResult.of(m.call_id, BIG, name=m.name) if isinstance(m, ToolResult) else m
            for m in fixture
        ]
    )

    actual = prune_tool_outputs(big, protect_from)

    assert (pattern_of(actual.context), find_violations(actual.context)) == (
        pattern_of(big),
        find_violations(big),
    )


TAILS = [
    ("everything_fits", "sutrua", 2, 1_000, 2),
    ("min_messages_dominate", "sutruaua", 3, 0, 5),
    ("never_starts_with_a_result", "sutrtrua", 3, 0, 4),
    ("parallel_results_move_to_the_call", "suTrrua", 3, 0, 2),
    ("lower_bound", "sutr", 10, 0, 2),
]


@pytest.mark.parametrize(
    ("letters", "min_messages", "budget", "expected"),
    [c[1:] for c in TAILS],
    ids=[c[0] for c in TAILS],
)
def test_tail_start_aligns_to_calls(letters, min_messages, budget, expected):
    fixture = pattern(letters)

    actual = tail_start(list(fixture), lower=2, min_messages=min_messages, token_budget=budget)

    assert actual == expected


HEADS = [
    ("system_and_exchange", "suaua", True, 3),
    ("answer_with_calls_not_in_head", "sutrua", True, 2),
    ("later_compactions_keep_only_system", "suaua", False, 1),
    ("no_system", "uaua", True, 2),
]


@pytest.mark.parametrize(
    ("letters", "first_exchange", "expected"), [c[1:] for c in HEADS], ids=[c[0] for c in HEADS]
)
def test_head_end(letters, first_exchange, expected):
    actual = head_end(list(pattern(letters)), first_exchange=first_exchange)

    assert actual == expected
