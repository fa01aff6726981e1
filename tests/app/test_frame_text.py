"""The bundled template's layout in Python (``_frame_text``) gives Jinja's render, byte for
byte, and stands in for it only while the template is the one it was written for."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from forge_app.compaction import Compactor
from forge_app.summary._frame import (
    SUMMARY_MARKER,
    SUMMARY_PREAMBLE,
    TEMPLATE_NAME,
    SummaryFrame,
    default_template_dir,
)
from forge_app.summary._frame_text import TEMPLATE_SHA256
from forge_domain import Compact, Context, Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import TOOL_KIND_TABLE, SemanticQuery, SemSearchTool, TodoWriteTool
from forge_domain.tools._todo import TODO_STATUSES, Todo, TodoChange

FRAME = SummaryFrame()

texts = st.text(alphabet=st.sampled_from(list("ab `\n\r\t\x0b\u2028 *#{}%"))) | st.text(max_size=8)


def _jinja(frame: SummaryFrame, summary: ContextSummary) -> str:
    """What the template renders (the layout bypassed)."""
    return frame._template.render(marker=SUMMARY_MARKER, preamble=SUMMARY_PREAMBLE, summary=summary)


@st.composite
def tools(draw: st.DrawFn) -> object:
    """A tool of any kind of the table, its fields drawn."""
    row = draw(st.sampled_from(TOOL_KIND_TABLE))
    if row.model is SemSearchTool:
        queries = st.builds(SemanticQuery, query=texts, use_case=texts)
        return SemSearchTool(queries=tuple(draw(st.lists(queries, max_size=3))))
    if row.model is TodoWriteTool:
        todo = st.builds(Todo, content=texts, status=st.sampled_from(TODO_STATUSES))
        kind = st.sampled_from(["added", "updated", "removed"])
        changes = st.lists(st.builds(TodoChange, todo=todo, kind=kind), max_size=4)
        return TodoWriteTool(changes=tuple(draw(changes)))
    fields = row.model.model_fields
    values = {name: draw(texts) for name, info in fields.items() if info.annotation is str}
    return row.model.model_validate(values)


@st.composite
def items(draw: st.DrawFn) -> object:
    """A text, an omission note or a tool line (failed, merged, with evidence or not)."""
    choice = draw(st.sampled_from(["text", "note", "tool"]))
    if choice == "text":
        return TextItem(text=draw(texts))
    if choice == "note":
        return TextItem(text=draw(texts), omitted=(("narration", draw(st.integers(1, 9))),))
    earlier = draw(st.integers(0, 3))
    return ToolCallItem(
        id=None,
        tool=draw(tools()),
        is_success=draw(st.booleans()),
        earlier=earlier,
        earlier_failures=draw(st.integers(0, earlier)),
        evidence=draw(st.none() | texts),
    )


summaries = st.lists(
    st.builds(
        SummaryBlock,
        role=st.sampled_from([Role.USER, Role.ASSISTANT]),
        contents=st.lists(items(), min_size=1, max_size=4).map(tuple),
    ),
    max_size=12,
).map(lambda blocks: ContextSummary(blocks=tuple(blocks)))


def test_frame_text_is_written_for_the_bundled_template():
    source = (default_template_dir() / TEMPLATE_NAME).read_bytes()
    actual = (hashlib.sha256(source).hexdigest(), FRAME._text is not None)
    expected = (TEMPLATE_SHA256, True)
    assert actual == expected


@settings(max_examples=300)
@given(summaries)
def test_frame_text_is_the_templates_render(summary):
    actual = FRAME.render(summary)
    expected = _jinja(FRAME, summary)
    assert actual == expected


@given(summaries, summaries)
def test_frame_text_after_another_frame_sharing_items_is_the_same(first, second):
    """Lines remembered from the last frame are the lines of the same item objects."""
    frame = SummaryFrame()
    shared = ContextSummary(blocks=(*first.blocks, *second.blocks))
    frame.render(first)
    actual = (frame.render(shared), frame.render(second))
    expected = (_jinja(frame, shared), _jinja(frame, second))
    assert actual == expected


@pytest.mark.parametrize("budget", [None, 800])
def test_frames_of_a_generated_compaction_are_the_templates(budget):
    """Every frame a fit renders, with the layout and with Jinja."""
    frame = SummaryFrame()
    rendered: list[tuple[str, str]] = []

    class Both(SummaryFrame):
        def __init__(self) -> None:
            self.__dict__.update(frame.__dict__)

        def render(self, summary: ContextSummary) -> str:
            rendered.append((frame.render(summary), _jinja(frame, summary)))
            return rendered[-1][0]

    compact = Compact(retention_window=20, eviction_window=1.0, summary_max_tokens=budget)
    compactor = Compactor(compact, cwd="/repo", frame=Both())
    compactor.compact(Context.from_openai(generate_session(600, seed=3)))
    assert rendered
    assert all(ours == jinja for ours, jinja in rendered)


@pytest.mark.parametrize(("edit", "laid_out"), [(b"", True), (b"\n", False)])
def test_frame_text_stands_in_only_for_the_same_template(tmp_path: Path, edit, laid_out):
    """A copy of the bundled template is laid out in Python; an edited one is rendered."""
    shutil.copy(default_template_dir() / TEMPLATE_NAME, tmp_path / TEMPLATE_NAME)
    with (tmp_path / TEMPLATE_NAME).open("ab") as file:
        file.write(edit)
    frame = SummaryFrame(tmp_path)
    summary = ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=(TextItem(text="x"),)),))
    actual = (frame._text is not None, frame.render(summary))
    expected = (laid_out, _jinja(frame, summary))
    assert actual == expected
