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
from forge_domain import (
    Compact,
    Context,
    ContextMessage,
    ContextSummary,
    FileUpdateTool,
    Role,
    TextMessage,
    ToolCatalog,
    ToolResult,
)
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


def _asks(messages: Sequence[ContextMessage]) -> set[str]:
    return {m.text for m in messages if isinstance(m, TextMessage) and m.role == Role.USER}


def _edited(messages: Sequence[ContextMessage]) -> set[str]:
    return {
        json.loads(call.arguments)["path"]
        for m in messages
        if isinstance(m, TextMessage)
        for call in m.tool_calls or ()
        if call.name == "edit_file"
    }


def test_compactor_keeps_every_ask_and_changed_path_through_every_fold():
    messages = _generated(2_500, 4)
    compactor = Compactor(Compact(token_threshold=THRESHOLD), catalog=EDITS)
    *_, last = grow(compactor, messages)
    summary = _summary(last)
    data = ContextSummary.model_validate(summary.summary_data)
    live = [m for m in last if m is not summary]
    kept_paths = {i.tool.path for i in data.tool_calls() if isinstance(i.tool, FileUpdateTool)}
    lost_asks = {
        ask
        for ask in _asks(messages) - _asks(live)
        if ask[:MIN_TEXT_LIMIT].rstrip() not in summary.text
    }
    assert (lost_asks, _edited(messages) - _edited(live) - kept_paths) == (set(), set())


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
