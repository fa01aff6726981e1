"""The bounded build: what a span's summary keeps is what it kept when every item was built."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generator import MIXES, generate_session
from forge_app.compaction._compactor import prepared_summary
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._bounded import bounded_summary, plan_span
from forge_app.summary._build import build_summary
from forge_app.summary._fit_cuts import fit_candidates
from forge_app.summary._fit_summary import _shrunk, fit_summary
from forge_app.summary._frame import SummaryFrame
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import ToolCatalog, text_turns

_FRAME = SummaryFrame()
_CATALOG = ToolCatalog.default()


def _generated(size: int, seed: int) -> list[ContextMessage]:
    data = json.dumps(generate_session(size, seed=seed)).encode()
    return list(parse_transcript(data, "generated.json").context)[:-20]


def _fitted(
    messages: list[ContextMessage], max_chars: int, *, bounded: bool
) -> tuple[ContextSummary, str]:
    built = (
        bounded_summary(messages, _CATALOG, max_chars, 2_000)
        if bounded
        else build_summary(messages, _CATALOG)
    )
    prepared = prepared_summary(built, SummaryTransformer("/repo"))
    return fit_summary(prepared, _FRAME.render, max_chars)


def _asks(summary: ContextSummary) -> list[str]:
    return [
        item.text
        for block in summary.blocks
        if block.role == Role.USER
        for item in block.contents
        if isinstance(item, TextItem) and not item.is_omission
    ]


def _lines(summary: ContextSummary) -> set[tuple[str, str]]:
    return {(item.tool.kind, repr(item.tool)) for item in summary.tool_calls()}


def _calls_counted(summary: ContextSummary) -> int:
    """Calls on the summary's lines plus those its omission note counts."""
    on_lines = sum(item.calls for item in summary.tool_calls())
    tool_kinds = {"shell", "file_read", "generic", "search", "file_update"}
    in_note = sum(
        count
        for block in summary.blocks
        for item in block.contents
        if isinstance(item, TextItem)
        for kind, count in item.omitted
        if kind in tool_kinds
    )
    return on_lines + in_note


def _read(call_id: str, path: str) -> ToolCall:
    return ToolCall(id=call_id, name="read_file", arguments=json.dumps({"path": path}))


def test_bounded_build_is_exact_when_the_budget_keeps_every_line() -> None:
    """Repeated calls are built once per operation key and counted: the same frame."""
    fixture = _generated(800, seed=3)
    plan = plan_span(fixture, _CATALOG, _CATALOG.classifier(), 10**7, 2_000)
    assert plan is not None
    assert plan.selection.earlier
    actual = _fitted(fixture, 10**7, bounded=True)[1]
    expected = _fitted(fixture, 10**7, bounded=False)[1]
    assert actual == expected


@pytest.mark.parametrize("max_chars", [6_720, 13_440, 40_000], ids=["8K", "16K", "e2e"])
def test_bounded_build_keeps_every_ask_line_and_call_count(max_chars: int) -> None:
    fixture = _generated(2_500, seed=4)
    bounded, bounded_text = _fitted(fixture, max_chars, bounded=True)
    unbounded, _ = _fitted(fixture, max_chars, bounded=False)
    calls = sum(len(m.tool_calls or ()) for m in fixture if isinstance(m, TextMessage))
    actual = (
        len(bounded_text) <= max_chars,
        len(_asks(bounded)) >= len(_asks(unbounded)),
        _lines(unbounded) <= _lines(bounded),
        _calls_counted(bounded),
    )
    assert actual == (True, True, True, calls)


def test_bounded_build_keeps_the_user_blocks_apart() -> None:
    """Every turn asks the same thing; the reads between are left out, but each assistant
    block keeps one item, so ``DedupeRole`` does not fold the asks into one."""
    fixture: list[ContextMessage] = []
    for turn in range(30):
        fixture.append(TextMessage.user("Run the tests again, please."))
        calls = tuple(_read(f"c{turn}_{i}", f"src/pkg/module_{turn}_{i}.py") for i in range(10))
        fixture.append(TextMessage.assistant("", tool_calls=calls))
        fixture += [ToolResult(call_id=call.id, content="x = 1\n" * 50) for call in calls]
    plan = plan_span(fixture, _CATALOG, _CATALOG.classifier(), 4_000, 2_000)
    assert plan is not None
    assert plan.omitted
    actual = _asks(_fitted(fixture, 4_000, bounded=True)[0])
    expected = _asks(_fitted(fixture, 4_000, bounded=False)[0])
    assert (actual, len(actual) > 1) == (expected, True)


def test_bounded_build_finds_the_same_last_error() -> None:
    """An error shown only by its output's last line, 60 commands back: every command of
    the newest 64 is kept, so the last error is found on its line and kept word for word."""
    fixture: list[ContextMessage] = [TextMessage.user("Build the project.")]
    commands = [
        f"ls -la /work/directory_{i}/with/a/much/longer/path/to/fill/the/line" for i in range(200)
    ]
    commands.insert(140, "make all")
    for index, command in enumerate(commands):
        arguments = json.dumps({"command": command})
        call = ToolCall(id=f"s{index}", name="execute_bash", arguments=arguments)
        fixture.append(TextMessage.assistant("", tool_calls=(call,)))
        output = "make: *** [Makefile:3: all] Error 2" if command == "make all" else "a\nb\n"
        fixture.append(ToolResult(call_id=call.id, content=output))
    actual = "make: *** [Makefile:3: all] Error 2" in _fitted(fixture, 1_600, bounded=True)[1]
    expected = "make: *** [Makefile:3: all] Error 2" in _fitted(fixture, 1_600, bounded=False)[1]
    assert (actual, expected) == (True, True)


def test_bounded_build_leaves_text_protocol_spans_whole() -> None:
    fixture: list[ContextMessage] = [
        TextMessage.user("Fix the bug."),
        TextMessage.assistant("Let me look.\n\n```bash\nls\n```"),
        TextMessage.user("<returncode>0</returncode>\n<output>\na.py\n</output>"),
    ]
    assert plan_span(fixture, _CATALOG, _CATALOG.classifier(), 1_600, 2_000) is None


def _asks_summary(count: int) -> ContextSummary:
    """Assistant lines between user asks, every ask said twice (repeated asks go first)."""
    blocks: list[SummaryBlock] = []
    for index in range(count):
        issue = index % (count // 2)
        ask = TextItem(text=f"Please look at issue {issue} " + "again " * (issue % 7))
        read = ToolCallItem(
            id=None, tool=_CATALOG.classify(_read("", f"f{index}.py"))[0], is_success=True
        )
        blocks += [
            SummaryBlock(role=Role.USER, contents=(ask,)),
            SummaryBlock(role=Role.ASSISTANT, contents=(read,)),
        ]
    return ContextSummary(blocks=tuple(blocks))


@pytest.mark.parametrize("max_chars", range(3_400, 3_780, 20))
def test_fit_summary_leaves_out_no_ask_a_render_would_keep(max_chars: int) -> None:
    """Where the cut reaches the asks, the fit takes the fewest candidates that fit: one
    fewer is over (the estimated search alone could stop anywhere in its 5% margin)."""
    summary = _asks_summary(60)
    _, text = fit_summary(summary, _FRAME.render, max_chars)
    candidates = fit_candidates(summary)
    cumulative = list(accumulate(size for _, size, _ in candidates))
    taken = next(
        n
        for n in range(len(candidates) + 1)
        if _FRAME.render(_shrunk(summary, candidates, cumulative[n - 1] if n else 0)[0]) == text
    )
    first_ask = [change for _, _, change in candidates].index("repeated_ask")
    one_fewer = _shrunk(summary, candidates, cumulative[taken - 2] if taken > 1 else 0)[0]
    actual = (taken > first_ask, len(_FRAME.render(one_fewer)) > max_chars)
    assert actual == (True, True)


def test_bounded_build_keeps_blocks_whose_calls_are_counted_later() -> None:
    """Every turn repeats the ask and reads the same file, with no text: only the newest
    read is built (counting the others), yet each block keeps its read, because without it
    the asks would join into one run and ``DedupeRole`` would fold them."""
    fixture: list[ContextMessage] = []
    for turn in range(12):
        fixture.append(TextMessage.user("Run the tests again, please."))
        fixture.append(TextMessage.assistant("", tool_calls=(_read(f"r{turn}", "src/a.py"),)))
        fixture.append(ToolResult(call_id=f"r{turn}", content="x = 1\n"))
    actual = _fitted(fixture, 10**7, bounded=True)[1]
    expected = _fitted(fixture, 10**7, bounded=False)[1]
    assert (actual, actual.count("Run the tests again")) == (expected, 12)


def _mixed_turns() -> list[ContextMessage]:
    """Turns with image-only and empty user messages between assistant blocks, narration,
    repeated asks and repeated reads: runs of one speaker that build nothing."""
    fixture: list[ContextMessage] = []
    for turn in range(40):
        fixture.append(
            TextMessage.user("Run the tests again, please." if turn % 3 else f"Ask {turn}")
        )
        if turn % 4 == 1:
            fixture.append(TextMessage.image(f"https://example.com/{turn}.png"))
        if turn % 5 == 2:
            fixture.append(TextMessage.user(""))
        calls = tuple(_read(f"c{turn}_{i}", f"src/m{(turn + i) % 7}.py") for i in range(4))
        fixture.append(
            TextMessage.assistant(f"Reading {turn}." if turn % 2 else "", tool_calls=calls)
        )
        fixture += [ToolResult(call_id=call.id, content="x = 1\n" * 20) for call in calls]
        if turn % 6 == 0:
            fixture.append(TextMessage.image(f"https://example.com/a{turn}.png"))
        fixture.append(TextMessage.assistant(f"Done with {turn}."))
    return fixture


@pytest.mark.parametrize("max_chars", [800, 2_000, 8_000, 10**7])
@pytest.mark.parametrize("fixture", ["mixed", "generated"])
def test_selected_build_reads_only_what_builds_an_item(fixture: str, max_chars: int) -> None:
    """The plan names the messages to read: those that build an item, and one of each run of
    a speaker; the summary is the one a read of every message gives."""
    messages = _mixed_turns() if fixture == "mixed" else _generated(800, seed=2)
    plan = plan_span(messages, _CATALOG, _CATALOG.classifier(), max_chars, 2_000)
    assert plan is not None
    assert plan.selection.visit is not None
    every = replace(plan.selection, visit=None, results=None)
    actual = ContextSummary.from_messages(messages, _CATALOG, selection=plan.selection)
    expected = ContextSummary.from_messages(messages, _CATALOG, selection=every)
    assert (actual, len(plan.selection.visit) < len(messages)) == (expected, True)


def _failing_turns() -> list[ContextMessage]:
    """Commands that fail, pass, print a traceback and exit 0, or are flagged as errors;
    reads between them: lines with and without an error, newest commands among them."""
    outputs = (
        "collected 3 items\n3 passed\n[Command finished with exit code 0]",
        "E   assert 1 == 2\nFAILED tests/t.py::test_x\n[Command finished with exit code 1]",
        'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: bad',
        "Exit code 2\nmake: *** [all] Error 2",
    )
    fixture: list[ContextMessage] = [TextMessage.user("Make the tests pass.")]
    for turn in range(60):
        command = ToolCall(
            id=f"s{turn}",
            name="execute_bash",
            arguments=json.dumps({"command": f"python -m pytest tests/test_{turn % 7}.py"}),
        )
        read = _read(f"r{turn}", f"src/m{turn % 5}.py")
        fixture.append(TextMessage.assistant(f"Step {turn}.", tool_calls=(command, read)))
        output = outputs[turn % len(outputs)]
        result = ToolResult.failed if turn % 11 == 5 else ToolResult.of
        fixture += [result(command.id, output), ToolResult.of(read.id, "x = 1\n" * 30)]
    return fixture


@pytest.mark.parametrize("max_chars", [1_200, 4_000, 10**7])
@pytest.mark.parametrize("fixture", ["failing", "generated failing"])
def test_selected_build_reads_again_only_outputs_not_known_clean(fixture: str, max_chars: int):
    """A call the plan found answered, unflagged and showing no error is built without its
    output read again (``Selection.clean``); the summary is the one a second reading of
    every output gives, and no line that showed an error is taken as clean."""
    if fixture == "failing":
        messages = _failing_turns()
    else:  # 30% of the commands fail
        data = json.dumps(generate_session(800, seed=5, mix=MIXES["failing"])).encode()
        messages = list(parse_transcript(data, "generated.json").context)[:-20]
    plan = plan_span(messages, _CATALOG, _CATALOG.classifier(), max_chars, 2_000)
    assert plan is not None
    read_again = replace(plan.selection, clean=())
    actual = ContextSummary.from_messages(messages, _CATALOG, selection=plan.selection)
    expected = ContextSummary.from_messages(messages, _CATALOG, selection=read_again)
    errors = [item for item in expected.tool_calls() if not item.is_success or item.evidence]
    assert (actual, bool(plan.selection.clean), bool(errors)) == (expected, True, True)


_ACTION = "I will list the files.\n\n```bash\nls -la\n```"
_TURN_TEXTS = {
    "user": (
        "Fix the bug.",
        "<returncode>0</returncode>\n<output>\na.py\n</output>",
        "diff --git a/x b/x",
        "it passed, now add docs",
    ),
    "assistant": (
        _ACTION,
        "Run:\n```bash\nnpm test\n```\nthen tell me.",
        "```bash\nls\n```\n```bash\npwd\n```",
        "Done.",
    ),
}


@st.composite
def _spans(draw: st.DrawFn) -> list[ContextMessage]:
    """Spans of user, assistant and system messages, some assistant ones with a native
    call (answered right after), texts drawn from text-protocol actions and answers."""
    messages: list[ContextMessage] = []
    for index in range(draw(st.integers(1, 8))):
        role = draw(st.sampled_from(("user", "assistant", "assistant", "system")))
        if role == "system":
            messages.append(TextMessage.system("You are an agent."))
            continue
        text = draw(st.sampled_from(_TURN_TEXTS[role]))
        if role == "user":
            messages.append(TextMessage.user(text))
        elif draw(st.booleans()):
            call = _read(f"call-{index}", "a.py")
            messages += [TextMessage.assistant(text, (call,)), ToolResult.of(call.id, "a")]
        else:
            messages.append(TextMessage.assistant(text))
    return messages


@settings(max_examples=300, deadline=None)
@given(_spans())
def test_bounded_build_finds_the_text_turns_text_turns_finds(span: list[ContextMessage]) -> None:
    """The plan's walk (newest first) leaves a span whole exactly when text_turns finds an
    answered or trailing action, or an answer whose action came before the span."""
    turns = text_turns(span)
    planned = plan_span(span, _CATALOG, _CATALOG.classifier(), 1_600, 2_000)
    assert (planned is None) == bool(turns.answered or turns.orphans)
