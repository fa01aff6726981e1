"""The prune tier: old tool outputs become one-line placeholders; pairs stay valid."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction._boundaries import head_end, tail_start
from forge_app.compaction._pruning import PRUNED_MARKER, placeholder, prune_tool_outputs
from forge_domain import Context, TextMessage, ToolCall, ToolResult
from forge_domain.formats import find_violations
from forge_domain.summary import ContextSummary
from forge_domain.testing import pattern, pattern_of
from forge_domain.tools import ToolCatalog, output_outcome

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


FAILED_OUTPUT = (
    "<returncode>1</returncode>\n<output>\n"
    + "collected 3 items\n" * 250
    + "E   assert 1 == 2\nFAILED tests/t.py::test_a - assert 1 == 2\n</output>"
)
PLACEHOLDERS = [
    (
        "failed_command",
        ("bash", '{"command": "pytest -x"}', FAILED_OUTPUT, False),
        "[tool output pruned: bash `pytest -x` -> failed: E assert 1 == 2 | FAILED "
        "tests/t.py::test_a - assert 1 == 2 | exit code 1, 4,605 chars]",
    ),
    (
        "error_flag",
        ("bash", '{"command": "pytest -x"}', BIG, True),
        "[tool output pruned: bash `pytest -x` -> failed: " + "x" * 159 + "…, 4,812 chars]",
    ),
    (
        "ok_command",
        ("bash", '{"command": "ls -R"}', "<returncode>0</returncode>\n" + BIG, False),
        "[tool output pruned: bash `ls -R` -> ok, 4,839 chars]",
    ),
    (
        "error_shown",
        (
            "bash",
            '{"command": "python t.py"}',
            "<returncode>0</returncode>\n" + BIG + "\nTraceback (most recent call last):\n"
            '  File "t.py", line 3, in <module>\nKeyError: 3',
            False,
        ),
        "[tool output pruned: bash `python t.py` -> ok (error shown: KeyError: 3 | at t.py:3 "
        "in <module>), 4,921 chars]",
    ),
    (
        "read_path",
        ("read", '{"file_path": "/repo/src/app.py"}', BIG, False),
        "[tool output pruned: read `/repo/src/app.py`, 4,812 chars]",
    ),
    (
        "secret_in_command",
        ("shell", '{"command": "TOKEN=abc123secret ./deploy"}', BIG, False),
        "[tool output pruned: shell `TOKEN=[REDACTED] ./deploy`, 4,812 chars]",
    ),
    (
        "invalid_arguments",
        ("mcp_tool", "{not json", BIG, False),
        "[tool output pruned: mcp_tool, 4,812 chars]",
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

    assert actual == "[tool output pruned: read `a.py` (same output as call call_1), 4,812 chars]"


def test_prune_keeps_the_failure_of_a_repeated_output():
    failed = "<returncode>1</returncode>\n<output>\n" + "x\n" * 300 + "KeyError: 'a'\n</output>"
    fixture = _session(
        ("bash", '{"command": "python t.py"}', failed, False),
        ("bash", '{"command": "python t.py"}', failed, False),
    )

    pruned = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).context
    actual = [pruned[index].text for index in (3, 5)]

    assert actual == [
        "[tool output pruned: bash `python t.py` -> failed: KeyError: 'a' | exit code 1, "
        "659 chars]",
        "[tool output pruned: bash `python t.py` (same output as call call_1) -> failed: "
        "KeyError: 'a' | exit code 1, 659 chars]",
    ]


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
    ("system_and_task", "suaua", 2),
    ("answer_with_calls_not_in_head", "sutrua", 2),
    ("demonstration_and_task", "suuaua", 3),
    ("no_system", "uaua", 1),
    ("no_task", "saua", 1),
    ("no_assistant_yet", "suu", 3),
]


@pytest.mark.parametrize(("letters", "expected"), [c[1:] for c in HEADS], ids=[c[0] for c in HEADS])
def test_head_end(letters, expected):
    actual = head_end(list(pattern(letters)))

    assert actual == expected


def test_head_end_stops_at_an_earlier_summary():
    fixture = [TextMessage.system("s"), TextMessage.user("task"), TextMessage.user("SUMMARY")]

    actual = head_end(fixture, is_summary=lambda message: message.text == "SUMMARY")

    assert actual == 2


FAILURE_FORMS = st.sampled_from(
    [
        "<returncode>0</returncode>\n",
        "<returncode>1</returncode>\n",
        "<returncode>2</returncode>\n",
        "[Command finished with exit code 0]",
        "[Command finished with exit code 1]",
        "[The command completed with exit code 3.]",
        "Exit code 1\n",
        "ERROR: no replacement\n",
        "Ran into [Errno 2] No such file\n",
        "Invalid `path` parameter\n",
        "Your proposed edit has introduced new syntax error(s).\n",
        "Your command ran successfully and did not produce any output.\n",
        "Traceback (most recent call last):\n",
        '  File "x.py", line 1, in <module>\n',
        "ValueError: boom\n",
        "FAILED tests/t.py::test_a - assert 1 == 2\n",
        "ok\n",
        "y" * 150 + "\n",
    ]
)


@given(st.lists(FAILURE_FORMS, min_size=1, max_size=8).map("".join), st.booleans())
def test_pruned_output_says_what_the_catalog_reads_never_ok_for_a_failure(output, flagged):
    catalog = ToolCatalog.default()
    call = ToolCall(id="c", name="bash", arguments='{"command": "make"}')
    result = ToolResult(call_id="c", content=output + "z" * 300, is_error=flagged)
    outcome = catalog.outcome(result)

    text = placeholder(call, result)

    actual = (
        " -> ok" in text,
        " -> failed" in text,
        output_outcome(text),
        catalog.has_failed(result) and " -> ok" in text,
    )
    assert actual == (outcome == "ok", outcome == "failed", outcome, False)


def test_prune_keeps_an_output_shorter_than_its_placeholder():
    short_failure = "<returncode>1</returncode>\n" + "ValueError: " + "v" * 190
    fixture = _session(
        ("bash", '{"command": "python -c ' + "'x'" * 20 + '"}', short_failure, False)
    )

    actual = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).indices

    assert actual == ()


def test_a_summary_of_pruned_outputs_keeps_their_outcome_and_evidence():
    fixture = _session(
        ("bash", '{"command": "pytest -x"}', FAILED_OUTPUT, False),
        ("bash", '{"command": "ls"}', "<returncode>0</returncode>\n" + BIG, False),
        ("read", '{"path": "a.py"}', BIG, False),
    )
    pruned = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).context

    def lines(context: Context) -> list[tuple[bool, str | None]]:
        summary = ContextSummary.from_messages(list(context))
        return [(item.is_success, item.evidence) for item in summary.tool_calls()]

    assert (
        lines(pruned)
        == [
            (False, "E assert 1 == 2 | FAILED tests/t.py::test_a - assert 1 == 2 | exit code 1"),
            (True, None),
            (True, None),
        ]
        == [
            (success, evidence and " ".join(evidence.split()))
            for success, evidence in lines(fixture)
        ]
    )


def test_a_pruned_failure_keeps_its_evidence_word_for_word_backticks_included():
    output = (
        "<returncode>1</returncode>\n"
        + "checking\n" * 600
        + "lib/a.ex:3 Use `mix credo explain lib/a.ex:3` for details\n"
    )
    fixture = _session(("bash", '{"command": "mix credo `--strict`"}', output, False))
    pruned = prune_tool_outputs(fixture, protect_from=len(fixture) - 2).context

    def lines(context: Context) -> list[tuple[bool, str | None]]:
        summary = ContextSummary.from_messages(list(context))
        return [(item.is_success, item.evidence) for item in summary.tool_calls()]

    placeholders = [m.text for m in pruned if m.text.startswith(PRUNED_MARKER)]
    assert (placeholders, lines(pruned)) == (
        [
            "[tool output pruned: bash `mix credo '--strict'` -> failed: lib/a.ex:3 Use "
            "`mix credo explain lib/a.ex:3` for details | exit code 1, 5,485 chars]"
        ],
        lines(fixture),
    )
