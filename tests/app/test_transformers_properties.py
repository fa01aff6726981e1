"""Properties of the summary transformers, over generated summaries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from forge_app.summary.transformers import (
    DedupeRole,
    DropRole,
    KeepLastOperation,
    StripWorkingDir,
    SummaryTransformer,
    pipe,
    when,
)
from forge_app.summary.transformers._keep_last_operation import aggregate_operations, operation_key
from forge_app.summary.transformers._strip_working_dir import strip_dir
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import (
    FileReadTool,
    FileUpdateTool,
    ShellTool,
    Todo,
    TodoChange,
    TodoWriteTool,
)

CWD = "/home/u/p"
paths = st.sampled_from(["/home/u/p/a.py", "/home/u/p/b.py", "/tmp/c.py", "d.py"])
tools = st.one_of(
    st.builds(FileReadTool, path=paths),
    st.builds(FileUpdateTool, path=paths),
    st.builds(ShellTool, command=st.sampled_from(["make", "pytest"])),
    st.builds(
        TodoWriteTool,
        changes=st.tuples(
            st.builds(
                TodoChange,
                todo=st.builds(
                    Todo, content=st.sampled_from(["A", "B"]), status=st.just("pending")
                ),
                kind=st.just("added"),
            )
        ),
    ),
)
items = st.one_of(
    st.builds(TextItem, text=st.sampled_from(["fix it", "also test", "why?", "done"])),
    st.builds(
        ToolCallItem,
        id=st.none() | st.sampled_from(["c1", "c2"]),
        tool=tools,
        is_success=st.booleans(),
    ),
)
blocks = st.builds(
    SummaryBlock,
    role=st.sampled_from(list(Role)),
    contents=st.lists(items, min_size=1, max_size=5).map(tuple),
)
summaries = st.builds(ContextSummary, blocks=st.lists(blocks, max_size=6).map(tuple))
transformers = st.sampled_from(
    [
        DropRole(Role.SYSTEM),
        DropRole(Role.USER),
        DedupeRole(Role.USER),
        KeepLastOperation(),
        StripWorkingDir(CWD),
        when(lambda s: len(s.blocks) > 2, DropRole(Role.ASSISTANT)),
    ]
)


@given(summaries, st.sampled_from(list(Role)))
def test_drop_role_is_idempotent(summary, role):
    once = DropRole(role)(summary)
    assert DropRole(role)(once) == once


@given(summaries, transformers, transformers, transformers)
def test_pipe_is_associative(summary, a, b, c):
    assert pipe(pipe(a, b), c)(summary) == pipe(a, pipe(b, c))(summary)


@given(summaries)
def test_dedupe_and_keep_last_are_idempotent(summary):
    for transformer in (DedupeRole(Role.USER), KeepLastOperation()):
        once = transformer(summary)
        assert transformer(once) == once


def _user_texts(summary: ContextSummary) -> set[str]:
    return {
        item.text
        for block in summary.blocks
        if block.role == Role.USER
        for item in block.contents
        if isinstance(item, TextItem)
    }


def _updated_paths(summary: ContextSummary, cwd: str | None) -> set[str]:
    return {
        strip_dir(item.tool.path, cwd) if cwd else item.tool.path
        for block in summary.blocks
        if block.role != Role.SYSTEM
        for item in block.contents
        if isinstance(item, ToolCallItem)
        and isinstance(item.tool, FileUpdateTool)
        and item.is_success
    }


def _todo_writes(summary: ContextSummary) -> int:
    return sum(
        1
        for block in summary.blocks
        if block.role == Role.ASSISTANT
        for item in block.contents
        if isinstance(item, ToolCallItem) and isinstance(item.tool, TodoWriteTool)
    )


@given(summaries, st.sampled_from([None, CWD]))
def test_summary_transformer_keeps_every_distinct_user_ask(summary, cwd):
    assert _user_texts(SummaryTransformer(cwd)(summary)) == _user_texts(summary)


@given(summaries, st.sampled_from([None, CWD]))
def test_summary_transformer_keeps_every_successful_update_path(summary, cwd):
    actual = _updated_paths(SummaryTransformer(cwd)(summary), None)
    assert actual == _updated_paths(summary, cwd)


@given(summaries)
def test_summary_transformer_keeps_every_todo_write(summary):
    assert _todo_writes(SummaryTransformer()(summary)) == _todo_writes(summary)


@st.composite
def counted_calls(draw: st.DrawFn) -> ToolCallItem:
    """A tool-call line, possibly standing for calls merged by an earlier compaction."""
    earlier = draw(st.integers(min_value=0, max_value=3))
    return ToolCallItem(
        id=None,
        tool=draw(tools),
        is_success=draw(st.booleans()),
        earlier=earlier,
        earlier_failures=draw(st.integers(min_value=0, max_value=earlier)),
    )


counted_summaries = st.builds(
    ContextSummary,
    blocks=st.lists(
        st.builds(
            SummaryBlock,
            role=st.sampled_from([Role.USER, Role.ASSISTANT]),
            contents=st.lists(items | counted_calls(), min_size=1, max_size=5).map(tuple),
        ),
        max_size=8,
    ).map(tuple),
)


def _tally(summary: ContextSummary) -> dict[object, tuple[int, int]]:
    """Per operation key (todo writes: one key each), the calls and failures the lines stand for."""
    tally: dict[object, tuple[int, int]] = {}
    for index, item in enumerate(summary.tool_calls()):
        key = operation_key(item.tool) or ("todo_write", index)
        calls, failures = tally.get(key, (0, 0))
        tally[key] = (calls + item.calls, failures + item.failures)
    return tally


@given(counted_summaries)
def test_aggregate_operations_keeps_every_call_and_failure_counted(summary):
    actual = _tally(aggregate_operations(summary))
    expected = _tally(summary)
    assert sorted(actual.values()) == sorted(expected.values())


@given(counted_summaries)
def test_aggregate_operations_leaves_one_line_per_operation_and_is_idempotent(summary):
    once = aggregate_operations(summary)
    keys = [operation_key(item.tool) for item in once.tool_calls()]
    merged = [key for key in keys if key is not None]
    assert (len(merged) == len(set(merged)), aggregate_operations(once)) == (True, once)


@given(counted_summaries)
def test_keep_last_operation_keeps_every_call_counted(summary):
    actual = _tally(KeepLastOperation()(summary))
    expected = _tally(summary)
    assert sorted(actual.values()) == sorted(expected.values())
