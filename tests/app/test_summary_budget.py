"""Bounding summaries: cut texts visibly, drop the oldest detail with one note, fit a budget."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.summary._budget import (
    COMMAND_LIMIT,
    MIN_TEXT_LIMIT,
    drop_oldest_narration,
    fit_summary,
    limit_texts,
    omission_note,
    truncate_text,
)
from forge_app.summary._frame import SummaryFrame
from forge_domain import Role, Todo, TodoChange
from forge_domain.summary import (
    ContextSummary,
    SummaryBlock,
    SummaryItem,
    TextItem,
    ToolCallItem,
)
from forge_domain.summary_tools import (
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    SearchTool,
    ShellTool,
    TodoWriteTool,
    UndoTool,
)

FRAME = SummaryFrame()

TRUNCATE_CASES = [
    ("short", 10, "short"),
    ("abcdefghij", 10, "abcdefghij"),
    ("abcdefghijkl", 10, "abcdefghij … [truncated 2 chars]"),
    ("abc   defgh", 6, "abc … [truncated 5 chars]"),
]


@pytest.mark.parametrize(("text", "limit", "expected"), TRUNCATE_CASES)
def test_truncate_text_marks_the_cut(text, limit, expected):
    assert truncate_text(text, limit) == expected


def _shell(command: str) -> ToolCallItem:
    return ToolCallItem(id="c", tool=ShellTool(command=command), is_success=True)


def test_limit_texts_cuts_texts_and_commands():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="u" * 50),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(_shell("x" * (COMMAND_LIMIT + 10)),)),
        )
    )
    actual = limit_texts(fixture, 20)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text=truncate_text("u" * 50, 20)),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(_shell(truncate_text("x" * (COMMAND_LIMIT + 10), 20)),),
            ),
        )
    )
    assert actual == expected


def test_drop_oldest_narration_keeps_asks_and_calls_with_a_note():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="ask " * 20),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(TextItem(text="a" * 60), _shell("ls"), TextItem(text="b" * 60)),
            ),
            SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="c" * 60),)),
        )
    )
    actual = drop_oldest_narration(fixture, 70)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="ask " * 20),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    TextItem(
                        text="[omitted to keep this summary bounded: 2 assistant notes "
                        "from earlier in the session]",
                        omitted=(("narration", 2),),
                    ),
                    _shell("ls"),
                    TextItem(text="c" * 60),  # the run of assistant blocks is joined
                ),
            ),
        )
    )
    assert actual == expected


def test_drop_oldest_narration_under_budget_is_identity():
    fixture = ContextSummary(
        blocks=(SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="a" * 10),)),)
    )
    assert drop_oldest_narration(fixture, 10) is fixture


def _note(*omitted: tuple[str, int]) -> TextItem:
    return omission_note(dict(omitted))


def test_drop_oldest_narration_merges_earlier_notes_into_one():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(_note(("shell", 3), ("narration", 1)), TextItem(text="a" * 60)),
            ),
            SummaryBlock(role=Role.USER, contents=(TextItem(text="go on"),)),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(_note(("file_read", 2)), TextItem(text="b" * 60), _shell("ls")),
            ),
        )
    )
    actual = drop_oldest_narration(fixture, 60)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    TextItem(
                        text="[omitted to keep this summary bounded: 3 commands, 2 reads, "
                        "2 assistant notes from earlier in the session]",
                        omitted=(("shell", 3), ("file_read", 2), ("narration", 2)),
                    ),
                ),
            ),
            SummaryBlock(role=Role.USER, contents=(TextItem(text="go on"),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="b" * 60), _shell("ls"))),
        )
    )
    assert actual == expected


NOTE_CASES = [
    ({"shell": 1}, "1 command"),
    ({"narration": 3, "shell": 14, "file_read": 6}, "14 commands, 6 reads, 3 assistant notes"),
    ({"repeated_ask": 2, "generic": 1}, "1 tool call, 2 repeated user asks"),
]


@pytest.mark.parametrize(("counts", "what"), NOTE_CASES, ids=["one", "ordered", "asks"])
def test_omission_note_counts_what_was_left_out(counts, what):
    actual = omission_note(counts).text
    assert actual == f"[omitted to keep this summary bounded: {what} from earlier in the session]"


def test_limit_texts_leaves_omission_notes_whole():
    note = _note(("shell", 1234), ("file_read", 56))
    fixture = ContextSummary(blocks=(SummaryBlock(role=Role.ASSISTANT, contents=(note,)),))
    assert limit_texts(fixture, 20) == fixture


def test_fit_summary_under_the_limit_is_identity():
    fixture = ContextSummary(
        blocks=(SummaryBlock(role=Role.USER, contents=(TextItem(text="fix it"),)),)
    )
    actual = fit_summary(fixture, FRAME.render, 10_000)
    assert actual == (fixture, FRAME.render(fixture))


def test_fit_summary_notes_repeated_asks_in_an_assistant_block():
    update = ToolCallItem(id=None, tool=FileUpdateTool(path="a.py"), is_success=True)
    ask = TextItem(text="please go on " * 40)
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(ask,)),
            SummaryBlock(role=Role.ASSISTANT, contents=(update,)),
            SummaryBlock(role=Role.USER, contents=(ask,)),
        )
    )
    fitted, _ = fit_summary(fixture, FRAME.render, len(FRAME.render(fixture)) - 1)
    actual = [
        (block.role, [getattr(item, "omitted", None) or item for item in block.contents])
        for block in fitted.blocks
    ]
    expected = [
        (Role.ASSISTANT, [(("repeated_ask", 1),), update]),
        (Role.USER, [ask]),
    ]
    assert actual == expected


def test_fit_summary_over_with_nothing_left_to_drop_keeps_asks_and_changes():
    update = ToolCallItem(id=None, tool=FileUpdateTool(path="a.py"), is_success=True)
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="fix " * 100),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(update,)),
        )
    )
    actual, _ = fit_summary(fixture, FRAME.render, 100)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.USER, contents=(TextItem(text=truncate_text("fix " * 100, 40)),)
            ),
            SummaryBlock(role=Role.ASSISTANT, contents=(update,)),
        )
    )
    assert actual == expected


# -- fit_summary properties, over generated summaries ------------------------------------

ASK_IDS = st.integers(min_value=0, max_value=9)
paths = st.sampled_from(["a.py", "b.py", "src/c.py", "docs/d.md"])
kept_tools = st.one_of(
    st.builds(FileUpdateTool, path=paths),
    st.builds(FileRemoveTool, path=paths),
    st.builds(UndoTool, path=paths),
)
detail_tools = st.one_of(
    st.builds(FileReadTool, path=paths),
    st.builds(ShellTool, command=st.sampled_from(["pytest -x", "make lint", "ls " + "x" * 300])),
    st.builds(SearchTool, pattern=st.sampled_from(["def f", "TODO"])),
    st.builds(GenericTool, name=st.just("think"), arguments=st.just('{"t": "hmm"}')),
    st.builds(
        TodoWriteTool,
        changes=st.just((TodoChange(todo=Todo(content="step", status="pending"), kind="added"),)),
    ),
)


@st.composite
def calls(draw: st.DrawFn) -> ToolCallItem:
    earlier = draw(st.integers(min_value=0, max_value=3))
    return ToolCallItem(
        id=None,
        tool=draw(kept_tools | detail_tools),
        is_success=draw(st.booleans()),
        earlier=earlier,
        earlier_failures=draw(st.integers(min_value=0, max_value=earlier)),
    )


def _ask(number: int, length: int) -> TextItem:
    return TextItem(text=f"ask {number}: " + "please " * length)


user_blocks = st.builds(
    lambda asks: SummaryBlock(role=Role.USER, contents=tuple(asks)),
    st.lists(
        st.builds(_ask, ASK_IDS, st.integers(min_value=0, max_value=120)), min_size=1, max_size=2
    ),
)
narration = st.builds(TextItem, text=st.integers(min_value=1, max_value=900).map(lambda n: "n" * n))
assistant_blocks = st.builds(
    lambda contents: SummaryBlock(role=Role.ASSISTANT, contents=tuple(contents)),
    st.lists(narration | calls(), min_size=1, max_size=6),
)


@st.composite
def long_summaries(draw: st.DrawFn) -> ContextSummary:
    """Alternating user and assistant blocks, some asks repeated, no notes yet."""
    count = draw(st.integers(min_value=1, max_value=30))
    blocks = [draw(user_blocks if index % 2 == 0 else assistant_blocks) for index in range(count)]
    return ContextSummary(blocks=tuple(blocks))


def _entries(summary: ContextSummary) -> list[tuple[Role, SummaryItem]]:
    return [(block.role, item) for block in summary.blocks for item in block.contents]


def _is_note(item: SummaryItem) -> bool:
    return isinstance(item, TextItem) and item.is_omission


def _tally(summary: ContextSummary) -> Counter[str]:
    """What the summary shows or its note counts: calls per kind, narration, user texts."""
    tally: Counter[str] = Counter()
    for role, item in _entries(summary):
        if isinstance(item, ToolCallItem):
            tally[item.tool.kind] += item.calls
        elif item.is_omission:
            tally.update(dict(item.omitted))
        else:
            tally["repeated_ask" if role == Role.USER else "narration"] += 1
    return tally


def _asks(summary: ContextSummary) -> set[str]:
    return {
        item.text.split(":")[0]
        for role, item in _entries(summary)
        if role == Role.USER and isinstance(item, TextItem)
    }


def _changes(summary: ContextSummary) -> list[ToolCallItem]:
    return [
        item
        for _, item in _entries(summary)
        if isinstance(item, ToolCallItem)
        and item.tool.kind in {"file_update", "file_remove", "undo"}
    ]


def _is_exhausted(summary: ContextSummary) -> bool:
    """Nothing left that the budget may drop or cut further."""
    asks = [item.text for role, item in _entries(summary) if role == Role.USER]
    return (
        len(asks) == len(set(asks))
        and all(
            ask.endswith(" chars]") or len(truncate_text(ask, MIN_TEXT_LIMIT)) >= len(ask)
            for ask in asks
        )
        and all(
            _is_note(item) or (isinstance(item, ToolCallItem) and item in _changes(summary))
            for role, item in _entries(summary)
            if role == Role.ASSISTANT
        )
    )


budgets = st.integers(min_value=400, max_value=20_000)


@settings(max_examples=80, deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_fits_whenever_possible(summary, max_chars):
    fitted, text = fit_summary(summary, FRAME.render, max_chars)
    actual = (text == FRAME.render(fitted), len(text) <= max_chars or _is_exhausted(fitted))
    assert actual == (True, True)


@settings(max_examples=80, deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_keeps_every_ask_and_change_and_counts_what_it_drops(summary, max_chars):
    fitted, _ = fit_summary(summary, FRAME.render, max_chars)
    notes = [item for _, item in _entries(fitted) if _is_note(item)]
    actual = (_asks(fitted), _changes(fitted), +_tally(fitted), len(notes) <= 1)
    expected = (_asks(summary), _changes(summary), +_tally(summary), True)
    assert actual == expected


def _narration(summary: ContextSummary) -> list[SummaryItem]:
    return [
        item
        for role, item in _entries(summary)
        if role == Role.ASSISTANT and isinstance(item, TextItem) and not _is_note(item)
    ]


def _details(summary: ContextSummary) -> list[SummaryItem]:
    changes = _changes(summary)
    return [
        item
        for _, item in _entries(summary)
        if isinstance(item, ToolCallItem) and item not in changes
    ]


def _is_suffix(kept: list[SummaryItem], of: list[SummaryItem]) -> bool:
    return kept == of[len(of) - len(kept) :]


@settings(max_examples=80, deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_drops_the_oldest_first_narration_then_lines_then_cuts_asks(summary, max_chars):
    fitted, _ = fit_summary(summary, FRAME.render, max_chars)
    narration, details = _narration(fitted), _details(fitted)
    asks = [item.text for role, item in _entries(fitted) if role == Role.USER]
    cut = any(ask.endswith(" chars]") for ask in asks)
    actual = (
        _is_suffix(narration, _narration(summary)),
        _is_suffix(details, _details(summary)),
        not narration or details == _details(summary),
        not cut or (not narration and not details and len(asks) == len(set(asks))),
    )
    assert actual == (True, True, True, True)
