"""read_frame: a frame rendered by the default template, read back into its summary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.compaction.llm._prompt import framed, summary_body
from forge_app.summary._budget import truncate_text
from forge_app.summary._frame import SUMMARY_MARKER, SUMMARY_PREAMBLE, SummaryFrame
from forge_app.summary._omission import omission_note
from forge_app.summary._read_frame import (
    EARLIER_SUMMARY_LIMIT,
    EARLIER_SUMMARY_NOTE,
    earlier_summary,
    read_frame,
)
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.tools import (
    TOOL_KIND_TABLE,
    FetchTool,
    FileReadTool,
    FileRemoveTool,
    FileUpdateTool,
    FollowupTool,
    GenericTool,
    McpTool,
    PlanTool,
    SearchTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SkillTool,
    SummaryTool,
    TaskTool,
    Todo,
    TodoChange,
    TodoReadTool,
    TodoWriteTool,
    UndoTool,
)
from tests.profiles import examples

FRAME = SummaryFrame()


def _summary(*items: SummaryItem, role: Role = Role.ASSISTANT) -> ContextSummary:
    return ContextSummary(blocks=(SummaryBlock(role=role, contents=items),))


def _call(tool: SummaryTool, **fields: object) -> ToolCallItem:
    return ToolCallItem.model_validate({"id": None, "tool": tool, "is_success": True, **fields})


def _todo(content: str, status: str, kind: str) -> TodoChange:
    return TodoChange.model_validate(
        {"todo": Todo.model_validate({"content": content, "status": status}), "kind": kind}
    )


TODOS = TodoWriteTool(
    changes=(
        _todo("write the parser", "pending", "added"),
        _todo("drop the old lexer", "pending", "removed"),
        _todo("fix `~~` strikes", "completed", "updated"),
        _todo("port tests", "in_progress", "updated"),
        _todo("reopen docs", "pending", "updated"),
    )
)

# Each row: a summary whose frame says everything about it, so reading gives it back.
EXACT = [
    ("user_text", _summary(TextItem(text="Fix the parser.\n\n```py\nx = 1\n```"), role=Role.USER)),
    ("text_with_fence_runs", _summary(TextItem(text="````\n`````\ninline ``x`` and ` tick"))),
    ("omission_note", _summary(omission_note({"shell": 14, "narration": 1, "ask": 2}))),
    ("read", _summary(_call(FileReadTool(path="src/a b.py")))),
    (
        "update_failed_merged",
        _summary(
            _call(FileUpdateTool(path="a.py"), is_success=False, earlier=2, earlier_failures=1)
        ),
    ),
    ("merged_no_failures", _summary(_call(FileRemoveTool(path="old.py"), earlier=3))),
    ("undo", _summary(_call(UndoTool(path="a.py")))),
    (
        "shell_multiline",
        _summary(
            _call(
                ShellTool(command="cat > f <<EOF\n```\nEOF\npytest -x"),
                is_success=False,
                evidence="exit code 1",
            )
        ),
    ),
    ("search_backticks", _summary(_call(SearchTool(pattern="`x` and ``y``")))),
    ("search_leading_tick", _summary(_call(SearchTool(pattern="`tick")))),
    (
        "sem_search",
        _summary(
            _call(
                SemSearchTool(
                    queries=(
                        SemanticQuery(query="auth: flow", use_case="find the login"),
                        SemanticQuery(query="x", use_case=""),
                    )
                )
            )
        ),
    ),
    ("sem_search_empty", _summary(_call(SemSearchTool(queries=())))),
    ("fetch", _summary(_call(FetchTool(url="https://example.com/a?b=1")))),
    ("followup", _summary(_call(FollowupTool(question="Which branch? (main)")))),
    ("plan", _summary(_call(PlanTool(plan_name="release")))),
    ("skill", _summary(_call(SkillTool(name="pdf")))),
    ("task", _summary(_call(TaskTool(agent_id="reviewer")))),
    ("mcp", _summary(_call(McpTool(name="github.create_issue")))),
    ("todo_write", _summary(_call(TODOS))),
    ("todo_write_empty", _summary(_call(TodoWriteTool(changes=())))),
    ("todo_read", _summary(_call(TodoReadTool(), is_success=False))),
    ("generic", _summary(_call(GenericTool(name="think", arguments='{"t": "**hmm**"}')))),
    ("generic_no_args", _summary(_call(GenericTool(name="ping")))),
    (
        "evidence",
        _summary(
            _call(
                ShellTool(command="pytest"),
                is_success=False,
                evidence="E  assert 1 == 2 | exit code 1",
            )
        ),
    ),
    (
        "evidence_on_success",
        _summary(_call(ShellTool(command="pytest"), evidence="Traceback: boom")),
    ),
    (
        "several_blocks",
        ContextSummary(
            blocks=(
                SummaryBlock(role=Role.USER, contents=(TextItem(text="Fix it."),)),
                SummaryBlock(
                    role=Role.ASSISTANT,
                    contents=(TextItem(text="On it."), _call(FileUpdateTool(path="a.py"))),
                ),
                SummaryBlock(role=Role.USER, contents=(TextItem(text="### 2. User\n\n---"),)),
            )
        ),
    ),
    ("empty", ContextSummary()),
]


@pytest.mark.parametrize(("name", "summary"), EXACT, ids=[row[0] for row in EXACT])
def test_read_frame_reads_back_what_the_frame_shows(name, summary):
    actual = read_frame(FRAME.render(summary))

    assert actual == summary


def test_every_tool_kind_has_a_row_in_the_table():
    kinds = {item.tool.kind for _, summary in EXACT for item in summary.tool_calls()}

    assert kinds == {row.kind for row in TOOL_KIND_TABLE}


# Each row: what the frame does not show, and what reading it gives instead.
LOSSY = [
    (
        "call_id",
        _summary(_call(FileReadTool(path="a.py"), id="c1")),
        _summary(_call(FileReadTool(path="a.py"))),
    ),
    ("empty_path", _summary(_call(FileReadTool(path=""))), _summary(_call(FileReadTool(path=".")))),
    (
        "path_line_break",
        _summary(_call(FileReadTool(path="a\nb.py"))),
        _summary(_call(FileReadTool(path="a b.py"))),
    ),
    ("empty_text", _summary(TextItem(text=""), TextItem(text="x")), _summary(TextItem(text="x"))),
    (
        "added_status",
        _summary(_call(TodoWriteTool(changes=(_todo("a", "completed", "added"),)))),
        _summary(_call(TodoWriteTool(changes=(_todo("a", "pending", "added"),)))),
    ),
    (
        "removed_previous_status",
        _summary(_call(TodoWriteTool(changes=(_todo("a", "in_progress", "removed"),)))),
        _summary(_call(TodoWriteTool(changes=(_todo("a", "pending", "removed"),)))),
    ),
]


@pytest.mark.parametrize(("name", "summary", "expected"), LOSSY, ids=[row[0] for row in LOSSY])
def test_read_frame_gives_what_the_frame_shows_of_what_it_does_not(name, summary, expected):
    text = FRAME.render(summary)

    actual = read_frame(text)

    assert (actual, FRAME.render(expected)) == (expected, text)


def _edited(old: str, new: str) -> str:
    return FRAME.render(EXACT[-2][1]).replace(old, new, 1)


# Each row: text that is not a frame the default template renders.
NOT_FRAMES = [
    ("plain", "Fix the parser."),
    ("llm_summary", framed("## Goal\nFix the parser.\n\n## Progress\n1. Read `a.py`.")),
    ("marker_only", SUMMARY_MARKER),
    ("marker_and_prose", f"{SUMMARY_MARKER}\n{SUMMARY_PREAMBLE}\n\nThe user wants a parser."),
    ("wrong_block_number", _edited("### 2. Assistant", "### 3. Assistant")),
    ("unknown_role", _edited("### 1. User", "### 1. Robot")),
    ("unknown_label", _edited("**Update:**", "**Upgrade:**")),
    ("unclosed_fence", _edited("````\nOn it.\n````", "````\nOn it.")),
    ("extra_space", _edited("**Update:** `a.py`", "**Update:**  `a.py`")),
    ("stray_line", _edited("**Update:** `a.py`", "**Update:** `a.py`\nand more")),
    ("no_footer", _edited("---\n\nPick up the work", "Pick up the work")),
    ("status_once", _edited("**Update:** `a.py`", "**Update:** `a.py` (\u00d71)")),
    ("json", _summary(TextItem(text="x")).model_dump_json()),
    (
        "unknown_noun",
        FRAME.render(_summary(omission_note({"shell": 2}))).replace("commands", "widgets"),
    ),
]


@pytest.mark.parametrize(("name", "text"), NOT_FRAMES, ids=[row[0] for row in NOT_FRAMES])
def test_read_frame_refuses_what_the_template_would_not_write(name, text):
    assert read_frame(text) is None


def test_read_frame_keeps_a_store_ref_line_as_a_user_text_after_the_blocks():
    summary = EXACT[-2][1]
    ref = "[archived: ref c3, 12 original messages — recall_expand shows them]"

    actual = read_frame(f"{FRAME.render(summary)}\n\n{ref}")

    assert actual == ContextSummary.of_blocks(
        (*summary.blocks, SummaryBlock(role=Role.USER, contents=(TextItem(text=ref),)))
    )


def test_read_frame_reads_the_fallback_frame_of_a_model_written_summary():
    summary = EXACT[-2][1]
    body = summary_body(framed(FRAME.render(summary)))

    assert read_frame(body or "") == summary


def test_earlier_summary_is_the_frame_when_it_reads():
    summary = EXACT[-2][1]

    assert earlier_summary(FRAME.render(summary)) == summary


def test_earlier_summary_of_other_text_is_one_bounded_user_text_without_the_preamble():
    prose = "The user wants a parser. " * 400
    text = f"{SUMMARY_MARKER}\n{SUMMARY_PREAMBLE}\n\n{prose}"

    actual = earlier_summary(text)

    kept = truncate_text(prose.strip(), EARLIER_SUMMARY_LIMIT)
    item = TextItem(text=f"{EARLIER_SUMMARY_NOTE}\n{kept}")
    assert actual == ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=(item,)),))


def test_earlier_summary_read_again_is_not_nested():
    once = FRAME.render(earlier_summary(f"{SUMMARY_MARKER}\nnot a frame"))

    actual = FRAME.render(earlier_summary(once))

    assert (actual, actual.count(SUMMARY_MARKER)) == (once, 1)


# -- a property over generated summaries ----------------------------------------------

_ALPHABET = st.sampled_from(
    ["a", "Z", " ", "`", "``", "*", "~~", "[", "]", "\n", "-", ":", "(", ")", "\u00d7", "#", "é"]
)
texts = st.lists(_ALPHABET, max_size=12).map("".join)
lines = texts.map(lambda text: " ".join(text.split()))  # what the frame prints on one line
words = lines.filter(bool)
todo_changes = st.builds(
    _todo,
    lines.filter(lambda text: text.strip() == text and bool(text)),
    st.sampled_from(["pending", "in_progress", "completed"]),
    st.sampled_from(["added", "updated"]),
).filter(lambda change: change.kind == "updated" or change.todo.status == "pending")
tools = st.one_of(
    st.builds(FileReadTool, path=words),
    st.builds(FileUpdateTool, path=words),
    st.builds(FileRemoveTool, path=words),
    st.builds(UndoTool, path=words),
    st.builds(ShellTool, command=texts),
    st.builds(SearchTool, pattern=lines),
    st.builds(
        SemSearchTool,
        queries=st.lists(st.builds(SemanticQuery, query=lines, use_case=lines), max_size=2).map(
            tuple
        ),
    ),
    st.builds(FetchTool, url=lines),
    st.builds(FollowupTool, question=words),
    st.builds(PlanTool, plan_name=words),
    st.builds(SkillTool, name=words),
    st.builds(TaskTool, agent_id=words),
    st.builds(McpTool, name=lines),
    st.builds(TodoWriteTool, changes=st.lists(todo_changes, max_size=3).map(tuple)),
    st.just(TodoReadTool()),
    st.builds(GenericTool, name=lines, arguments=lines),
)


@st.composite
def calls(draw: st.DrawFn) -> ToolCallItem:
    earlier = draw(st.integers(min_value=0, max_value=3))
    return ToolCallItem(
        id=None,
        tool=draw(tools),
        is_success=draw(st.booleans()),
        earlier=earlier,
        earlier_failures=draw(st.integers(min_value=0, max_value=earlier)),
        evidence=draw(st.none() | words),
    )


items = st.one_of(
    st.builds(TextItem, text=texts.filter(bool)),
    calls(),
    st.dictionaries(
        st.sampled_from(["shell", "narration", "ask", "todo_read"]), st.integers(1, 9), min_size=1
    ).map(omission_note),
)
blocks = st.builds(
    SummaryBlock, role=st.sampled_from(list(Role)), contents=st.lists(items, max_size=4).map(tuple)
)
summaries = st.lists(blocks, max_size=4).map(lambda b: ContextSummary(blocks=tuple(b)))


@settings(max_examples=examples(300), deadline=None)
@given(summaries)
def test_read_frame_of_a_rendered_summary_gives_it_back(summary):
    assert read_frame(FRAME.render(summary)) == summary


@settings(max_examples=examples(300), deadline=None)
@given(
    summaries, st.integers(min_value=0), st.sampled_from(["", "x", "`", "\n", "**", "- [", "\n\n"])
)
def test_read_frame_of_an_edited_frame_never_raises_and_reads_its_own_render_back(
    summary, where, insert
):
    text = FRAME.render(summary)
    at = where % (len(text) + 1)
    edited = text[:at] + insert + text[at:]

    read = read_frame(edited)

    assert read is None or read_frame(FRAME.render(read)) == read


def _quoting(inner: str) -> ContextSummary:
    """A summary that quotes ``inner`` as a user text, as compactions before read_frame did."""
    return ContextSummary(
        blocks=(
            SummaryBlock(role=Role.USER, contents=(TextItem(text="Fix it."), TextItem(text=inner))),
            SummaryBlock(role=Role.ASSISTANT, contents=(_call(FileUpdateTool(path="b.py")),)),
        )
    )


def test_earlier_summary_unnests_a_frame_quoted_whole():
    inner = EXACT[-2][1]

    actual = earlier_summary(FRAME.render(_quoting(FRAME.render(inner))))

    outer = _quoting("")
    assert actual == ContextSummary.of_blocks(
        (
            SummaryBlock(role=Role.USER, contents=(TextItem(text="Fix it."),)),
            *inner.blocks,
            *outer.blocks[1:],
        )
    )


def test_earlier_summary_unnests_a_quoted_frame_cut_short_as_one_text_without_marker():
    inner = truncate_text(FRAME.render(EXACT[-2][1]), 300)

    actual = FRAME.render(earlier_summary(FRAME.render(_quoting(inner))))

    assert (actual.count(SUMMARY_MARKER), actual.count(EARLIER_SUMMARY_NOTE)) == (1, 1)
