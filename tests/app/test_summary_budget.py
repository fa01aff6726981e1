"""Bounding summaries: cut texts visibly, drop the oldest detail with one note, fit a budget."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.summary._budget import (
    COMMAND_LIMIT,
    MIN_TEXT_LIMIT,
    SHORT_COMMAND,
    drop_oldest_narration,
    limit_texts,
    truncate_text,
)
from forge_app.summary._fit_cuts import SHORT_EVIDENCE, short_command, short_evidence
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary._frame import SummaryFrame
from forge_app.summary._omission import omission_note
from forge_domain import Role
from forge_domain.summary import (
    ContextSummary,
    SummaryBlock,
    SummaryItem,
    TextItem,
    ToolCallItem,
)
from forge_domain.tools import (
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    GenericTool,
    SearchTool,
    ShellTool,
    Todo,
    TodoChange,
    TodoWriteTool,
    UndoTool,
)
from tests.profiles import examples

FRAME = SummaryFrame()

TRUNCATE_CASES = [
    ("short", 10, "short"),
    ("abcdefghij", 10, "abcdefghij"),
    ("abcdefghij" + "k" * 40, 10, "abcdefghij … [truncated 40 chars]"),
    ("abc   defgh" + "i" * 40, 6, "abc … [truncated 45 chars]"),
    # the marker would make these no shorter: they stay as they are
    ("abcdefghijkl", 10, "abcdefghijkl"),
    ("a" * 57, 40, "a" * 57),
]


@pytest.mark.parametrize(("text", "limit", "expected"), TRUNCATE_CASES)
def test_truncate_text_marks_the_cut(text, limit, expected):
    assert truncate_text(text, limit) == expected


@given(st.text(max_size=300), st.integers(min_value=0, max_value=300))
def test_truncate_text_never_makes_a_text_longer(text, limit):
    assert len(truncate_text(text, limit)) <= len(text)


def _shell(command: str) -> ToolCallItem:
    return ToolCallItem(id="c", tool=ShellTool(command=command), is_success=True)


def test_limit_texts_cuts_texts_and_commands():
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="u" * 100),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(_shell("x" * (COMMAND_LIMIT + 10)),)),
        )
    )
    actual = limit_texts(fixture, 45)
    expected = ContextSummary(
        blocks=(
            SummaryBlock(
                role=Role.USER,
                contents=(TextItem(text="u" * 45 + " … [truncated 55 chars]"),),
            ),
            SummaryBlock(
                role=Role.ASSISTANT,
                contents=(
                    _shell(
                        "x" * SHORT_COMMAND
                        + f" … [truncated {COMMAND_LIMIT + 10 - SHORT_COMMAND} chars]"
                    ),
                ),
            ),
        )
    )
    assert actual == expected


def test_limit_texts_never_cuts_below_the_minimum():
    fixture = ContextSummary(
        blocks=(SummaryBlock(role=Role.ASSISTANT, contents=(_shell("grep -rn pattern " * 10),)),)
    )
    actual = limit_texts(fixture, 0)
    expected = limit_texts(fixture, MIN_TEXT_LIMIT)
    assert (actual, expected.blocks[0].contents[0] != fixture.blocks[0].contents[0]) == (
        expected,
        True,
    )


RECUT_CASES = [
    ("x" * 500, 400, "x" * 400 + " … [truncated 100 chars]"),
    ("x" * 400 + " … [truncated 100 chars]", 400, "x" * 400 + " … [truncated 100 chars]"),
    ("x" * 400 + " … [truncated 100 chars]", 100, "x" * 100 + " … [truncated 400 chars]"),
]


@pytest.mark.parametrize(
    ("text", "limit", "expected"), RECUT_CASES, ids=["first-cut", "same-limit", "shorter"]
)
def test_truncate_text_recut_counts_both_cuts_in_one_marker(text, limit, expected):
    assert truncate_text(text, limit) == expected


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


def test_fit_summary_over_with_nothing_left_to_cut_drops_the_oldest_asks():
    update = ToolCallItem(id=None, tool=FileUpdateTool(path="a.py"), is_success=True)
    asks = tuple(TextItem(text=f"ask {number}: " + "please " * 20) for number in range(40))
    fixture = ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=asks),
            SummaryBlock(role=Role.ASSISTANT, contents=(update,)),
        )
    )
    fitted, text = fit_summary(fixture, FRAME.render, 1_500)
    (note, *kept), *_ = (block.contents for block in fitted.blocks)
    user = [item.text for item in fitted.blocks[1].contents]
    dropped = dict(note.omitted)["ask"]
    actual = (
        len(text) <= 1_500,
        user == [truncate_text(ask.text, MIN_TEXT_LIMIT) for ask in asks[dropped:]],
        fitted.blocks[-1].contents,
    )
    assert (actual, kept) == ((True, True, (update,)), [])


def test_fit_summary_keeps_the_last_error_and_cuts_older_evidence_first():
    def failed(command: str, evidence: str) -> ToolCallItem:
        return ToolCallItem(
            id=None, tool=ShellTool(command=command), is_success=False, evidence=evidence
        )

    old = [
        failed(f"pytest tests/test_{n}.py", f"E   assert {n} == 0 | " + "x" * 150) for n in range(6)
    ]
    last = failed("make build " + "y" * 200, "error: missing separator | " + "z" * 150)
    fixture = ContextSummary(blocks=(SummaryBlock(role=Role.ASSISTANT, contents=(*old, last)),))
    full = len(FRAME.render(fixture))
    fitted, text = fit_summary(fixture, FRAME.render, full - 600)
    *older, newest = fitted.tool_calls()
    cut = [item.evidence == f"E   assert {n} == 0" for n, item in enumerate(older)]
    actual = (
        len(text) <= full - 600,
        (newest.tool.command[:64], newest.evidence) == (last.tool.command[:64], last.evidence),
        len(older),
        any(cut) and cut == sorted(cut, reverse=True),  # the oldest evidence is cut first
    )
    assert actual == (True, True, 6, True)


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
evidence = st.none() | st.sampled_from(
    [
        "exit code 1",
        "E   assert 1 == 2 | FAILED t.py::test_a | exit code 1",
        "ValueError: " + "v" * 190,
    ]
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
        evidence=draw(evidence),
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
            for kind, count in item.omitted:
                tally["user" if kind in ("ask", "repeated_ask") else kind] += count
        else:
            tally["user" if role == Role.USER else "narration"] += 1
    return tally


def user_texts(summary: ContextSummary) -> list[str]:
    return [item.text for role, item in _entries(summary) if role == Role.USER]


def _asks(summary: ContextSummary) -> list[str]:
    """The distinct asks (``ask N``), oldest last saying first."""
    last = {text.split(":")[0]: index for index, text in enumerate(user_texts(summary))}
    return sorted(last, key=last.__getitem__)


def _lines(summary: ContextSummary) -> list[ToolCallItem]:
    return [item for _, item in _entries(summary) if isinstance(item, ToolCallItem)]


def _changes(summary: ContextSummary) -> list[ToolCallItem]:
    return [i for i in _lines(summary) if i.tool.kind in {"file_update", "file_remove", "undo"}]


def shows_error(item: ToolCallItem) -> bool:
    return not item.is_success or item.evidence is not None


def _last_errors(summary: ContextSummary) -> list[ToolCallItem]:
    """The last failed line and the last line with evidence: kept whole."""
    failed = [item for item in _lines(summary) if not item.is_success][-1:]
    shown = [item for item in _lines(summary) if item.evidence is not None][-1:]
    return [*failed, *shown]


def _key(item: ToolCallItem) -> tuple[str, str, int, bool]:
    """A line as the budget leaves it recognisable: a command by its start, no evidence."""
    shown = item.tool.command[:40] if isinstance(item.tool, ShellTool) else repr(item.tool)
    return item.tool.kind, shown, item.calls, item.is_success


def _is_exhausted(summary: ContextSummary) -> bool:
    """Nothing left that the budget may drop or cut further."""
    kept = _changes(summary) + _last_errors(summary)
    return not user_texts(summary) and all(
        _is_note(item) or item in kept for _, item in _entries(summary)
    )


budgets = st.integers(min_value=400, max_value=20_000)


@settings(max_examples=examples(80), deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_fits_whenever_possible(summary, max_chars):
    fitted, text = fit_summary(summary, FRAME.render, max_chars)
    actual = (text == FRAME.render(fitted), len(text) <= max_chars or _is_exhausted(fitted))
    assert actual == (True, True)


@settings(max_examples=examples(80), deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_keeps_changes_and_the_last_error_and_counts_what_it_drops(summary, max_chars):
    fitted, _ = fit_summary(summary, FRAME.render, max_chars)
    notes = [item for _, item in _entries(fitted) if _is_note(item)]
    shown = [(_key(item), item.evidence) for item in _lines(fitted)]
    kept = [item for item in _last_errors(summary) if (_key(item), item.evidence) in shown]
    changes = [_key(item) for item in _changes(fitted)]
    actual = (changes, kept, +_tally(fitted), len(notes) <= 1)
    expected = ([_key(i) for i in _changes(summary)], _last_errors(summary), +_tally(summary), True)
    assert actual == expected


@settings(max_examples=examples(80), deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_drops_asks_only_the_oldest_and_only_when_cut_ones_do_not_fit(
    summary, max_chars
):
    fitted, _ = fit_summary(summary, FRAME.render, max_chars)
    asks, kept = _asks(summary), _asks(fitted)
    at_minimum = all(
        len(text) <= len(truncate_text("x" * 10_000, MIN_TEXT_LIMIT)) for text in user_texts(fitted)
    )
    actual = (kept == asks[len(asks) - len(kept) :], kept == asks or at_minimum)
    assert actual == (True, True)


def _narration(summary: ContextSummary) -> list[SummaryItem]:
    return [
        item
        for role, item in _entries(summary)
        if role == Role.ASSISTANT and isinstance(item, TextItem) and not _is_note(item)
    ]


def _details(summary: ContextSummary) -> list[tuple[str, str, int, bool]]:
    """Lines that changed no file and showed no error."""
    changes = _changes(summary)
    return [_key(i) for i in _lines(summary) if i not in changes and not shows_error(i)]


def _old_errors(summary: ContextSummary) -> list[tuple[str, str, int, bool]]:
    """Lines that changed no file and showed an error, but the last errors."""
    skip = _changes(summary) + _last_errors(summary)
    return [_key(i) for i in _lines(summary) if i not in skip and shows_error(i)]


def _is_suffix(kept: list[object], of: list[object]) -> bool:
    return kept == of[len(of) - len(kept) :]


@settings(max_examples=examples(80), deadline=None)
@given(long_summaries(), budgets)
def test_fit_summary_drops_the_oldest_first_narration_then_lines_then_errors_then_cuts_asks(
    summary, max_chars
):
    fitted, _ = fit_summary(summary, FRAME.render, max_chars)
    narration, details = _narration(fitted), _details(fitted)
    errors = [key for key in _old_errors(fitted) if key in _old_errors(summary)]
    cut = any(text.endswith(" chars]") for text in user_texts(fitted))
    actual = (
        _is_suffix(narration, _narration(summary)),
        _is_suffix(details, _details(summary)),
        _is_suffix(errors, _old_errors(summary)),
        not narration or details == _details(summary),
        not details or errors == _old_errors(summary),
        not cut or (not narration and not details and not errors),
    )
    assert actual == (True, True, True, True, True, True)


def _failed(command: str, evidence: str | None) -> ToolCallItem:
    return ToolCallItem(
        id="c", tool=ShellTool(command=command), is_success=False, evidence=evidence
    )


SHORT_EVIDENCE_CASES = [
    ("short_already", "KeyError: 'a'", "KeyError: 'a'"),
    (
        "error_line_of_each_run",
        "E2 | at x.py:3 | exit code 1; earlier: E1 | exit code 2",
        "E2; earlier: E1",
    ),
    ("long_error_line", "x" * 200 + " | exit code 1", "x" * (SHORT_EVIDENCE - 1) + "…"),
]


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [c[1:] for c in SHORT_EVIDENCE_CASES],
    ids=[c[0] for c in SHORT_EVIDENCE_CASES],
)
def test_short_evidence_keeps_the_error_line_of_every_failure(evidence, expected):
    actual = short_evidence(_failed("pytest", evidence)).evidence

    assert actual == expected


def test_short_command_folds_white_space_before_cutting():
    command = "cd /testbed && sed -i '935a\\" + " " * 40 + "# Use pk from related object' x.py"

    actual = short_command(_failed(command, None)).tool.command

    assert actual == " ".join(command.split())[:SHORT_COMMAND].rstrip() + " …"
