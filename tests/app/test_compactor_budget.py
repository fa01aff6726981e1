"""The Compactor's summary budget: every frame fits, at every fold, keeping asks and changes."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_app.summary._budget import MIN_TEXT_LIMIT
from forge_domain import Compact, Context, ContextMessage, Role, TextMessage, ToolResult
from forge_domain.summary import ContextSummary, TextItem
from forge_domain.tools import FILE_CHANGING_KINDS, FileTool, FileUpdateTool, ToolCatalog
from tests.sessions import SESSIONS, session_paths

THRESHOLD = 5_600
EDITS = ToolCatalog.default().extended({"edit_file": {"kind": "file_update", "path_arg": "path"}})
"""The generator's ``edit_file`` as a file change (the built-in catalog does not know it)."""


def grow(compactor: Compactor, messages: Sequence[ContextMessage]) -> Iterator[Context]:
    """Feed ``messages`` one by one as a live run would, compacting whenever a trigger fires
    between turns; yield the context after each compaction."""
    current: list[ContextMessage] = []
    for index, message in enumerate(messages):
        current.append(message)
        following = messages[index + 1] if index + 1 < len(messages) else None
        if message.has_tool_call() or isinstance(following, ToolResult):
            continue  # a call's results are still to come
        context = Context(current)
        if not compactor.config.should_compact(context, context.token_count_approx()):
            continue
        outcome = compactor.compact(context)
        if outcome.result.compacted_range is not None:
            current = list(outcome.context)
            yield outcome.context


def _summary(context: Context) -> TextMessage:
    (summary,) = [m for m in context if isinstance(m, TextMessage) and is_summary_message(m)]
    return summary


def _generated(size: int, seed: int) -> list[ContextMessage]:
    return list(Context.from_openai(generate_session(size, seed=seed)))


def _session(name: str) -> list[ContextMessage]:
    return list(Context.from_openai(json.loads((SESSIONS / name).read_text(encoding="utf-8"))))


def test_compactor_summary_fits_the_budget_at_every_fold_of_a_long_session():
    compactor = Compactor(Compact(token_threshold=THRESHOLD), catalog=EDITS)
    budget = compactor.config.summary_budget()
    sizes = [_summary(context).approx_tokens for context in grow(compactor, _generated(2_500, 3))]
    assert (len(sizes) > 100, max(sizes) <= budget) == (True, True)


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions are not on this machine")
@pytest.mark.parametrize("path", session_paths(), ids=lambda path: path.stem)
def test_compactor_summary_fits_the_budget_at_every_fold_of_real_sessions(path):
    compactor = Compactor(Compact(token_threshold=THRESHOLD))
    budget = compactor.config.summary_budget()
    sizes = [_summary(context).approx_tokens for context in grow(compactor, _session(path.name))]
    assert [size for size in sizes if size > budget] == []


def _user_messages(messages: Sequence[ContextMessage]) -> list[TextMessage]:
    return [m for m in messages if isinstance(m, TextMessage) and m.role == Role.USER]


def _asks(messages: Sequence[ContextMessage]) -> set[str]:
    return {m.text for m in _user_messages(messages)}


def _edited(messages: Sequence[ContextMessage]) -> set[str]:
    return {
        json.loads(call.arguments)["path"]
        for m in messages
        if isinstance(m, TextMessage)
        for call in m.tool_calls or ()
        if call.name == "edit_file"
    }


def test_compactor_keeps_every_changed_path_and_counts_the_oldest_asks_it_drops():
    messages = _generated(2_500, 4)
    compactor = Compactor(Compact(token_threshold=THRESHOLD), catalog=EDITS)
    *_, last = grow(compactor, messages)
    summary = _summary(last)
    data = ContextSummary.model_validate(summary.summary_data)
    live = [m for m in last if m is not summary]
    kept_paths = {i.tool.path for i in data.tool_calls() if isinstance(i.tool, FileUpdateTool)}
    notes = [i for b in data.blocks for i in b.contents if isinstance(i, TextItem) and i.omitted]
    dropped = sum(dict(note.omitted).get("ask", 0) for note in notes)
    seen = messages[: next(i for i, m in enumerate(messages) if m is last[-1]) + 1]
    said = {
        m.text: index
        for index, m in enumerate(seen)
        if isinstance(m, TextMessage) and m.role == Role.USER
    }
    lost = {
        ask
        for ask in _asks(seen) - _asks(live)
        if ask[:MIN_TEXT_LIMIT].rstrip() not in summary.text
    }
    kept = _asks(seen) - _asks(live) - lost  # in the summary
    actual = (
        len(lost) <= dropped,  # every ask that is gone is counted in the note
        max((said[ask] for ask in lost), default=-1) < min(said[ask] for ask in kept),  # oldest
        _edited(seen) - _edited(live) - kept_paths,
    )
    assert actual == (True, True, set())


@settings(max_examples=12, deadline=None)
@given(
    st.integers(min_value=300, max_value=1_500),
    st.integers(min_value=0, max_value=1_000),
    st.integers(min_value=400, max_value=4_000),
)
def test_compactor_summary_fits_any_budget(size, seed, budget):
    compactor = Compactor(Compact(summary_max_tokens=budget))
    outcome = compactor.compact(Context(_generated(size, seed)), compactor.forced_strategy())
    assert _summary(outcome.context).approx_tokens <= budget


def _changed_paths(messages: Sequence[ContextMessage]) -> set[str]:
    summary = ContextSummary.from_messages(list(messages))
    return {
        item.tool.path
        for item in summary.tool_calls()
        if isinstance(item.tool, FileTool) and item.tool.kind in FILE_CHANGING_KINDS
    }


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions are not on this machine")
def test_compactor_keeps_every_path_a_shell_command_changed_and_the_last_error():
    messages = _session("msa-deepseek-sqlfluff-1733.json")
    compactor = Compactor(Compact(token_threshold=THRESHOLD))
    *_, last = grow(compactor, messages)
    summary = _summary(last)
    data = ContextSummary.model_validate(summary.summary_data)
    live = [m for m in last if m is not summary]
    kept = {i.tool.path for i in data.tool_calls() if i.tool.kind in FILE_CHANGING_KINDS}
    after = list(last)[list(last).index(summary) + 1 :]
    summarised = messages[: len(messages) - len(after)]
    errors = [i for i in ContextSummary.from_messages(summarised).tool_calls() if i.evidence]
    actual = (
        _changed_paths(messages) - kept - _changed_paths(live),
        " ".join(errors[-1].evidence.split()) in " ".join(summary.text.split()),
    )
    assert actual == (set(), True)
