"""Narration the cap is certain to drop is not built: the prepared summary is unchanged.

``bounded_summary`` given a :class:`NarrationBudget` (the compactor's) leaves out the
assistant texts older than the newest one ``drop_oldest_narration`` drops, but the oldest;
``prepared_summary`` of that build must equal ``prepared_summary`` of the build of every
text, whatever the texts, their secrets, the runs of user asks (repeated ones included:
``DedupeRole`` folds runs that emptied blocks would join) and the calls around them.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_app.summary._bounded as bounded
from benchmarks.replay_scale import chat_session
from forge_app.compaction import Compactor
from forge_app.compaction._compactor import SUMMARY_NARRATION_BUDGET, prepared_summary
from forge_app.summary._bounded import NarrationBudget, bounded_summary, plan_span
from forge_app.summary._budget import narration_kept
from forge_app.summary.transformers import SummaryTransformer, redaction_memo
from forge_domain import Compact, Context, ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary
from forge_domain.tools import ToolCatalog
from tests.app.secret_fakes import SECRET_FAKES

_CATALOG = ToolCatalog.default()
_SECRETS = [text for _, text, _ in SECRET_FAKES]


def _prepared(
    messages: list[ContextMessage], budget: int, limit: int, *, left_out: bool
) -> ContextSummary:
    transform = SummaryTransformer("/repo")
    narration = NarrationBudget(transform.assistant_text, budget) if left_out else None
    with redaction_memo():
        built = bounded_summary(messages, _CATALOG, 24_000, limit, narration)
        return _capped(built, transform, limit, budget)


def _capped(
    summary: ContextSummary, transform: SummaryTransformer, limit: int, budget: int
) -> ContextSummary:
    """``prepared_summary`` with the narration cap ``budget`` (the module's constant)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("forge_app.compaction._compactor.SUMMARY_NARRATION_BUDGET", budget)
        return prepared_summary(summary, transform, limit)


def _texts_built(messages: list[ContextMessage], budget: int, limit: int) -> int:
    transform = SummaryTransformer("/repo")
    plan = plan_span(
        messages,
        _CATALOG,
        _CATALOG.classifier(),
        24_000,
        limit,
        NarrationBudget(transform.assistant_text, budget),
    )
    assert plan is not None
    texts = plan.selection.texts
    narrated = _narrated(messages)
    return narrated if texts is None else len(texts)  # type: ignore[arg-type]


def _narrated(messages: list[ContextMessage]) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message, TextMessage) and message.role == Role.ASSISTANT and message.text
    )


def _chat(size: int, every: int = 0) -> list[ContextMessage]:
    messages = list(chat_session(size).messages)
    if every:  # a secret in every ``every``-th text: its redaction changes the lengths
        for index in range(1, len(messages), every):
            message = messages[index]
            assert isinstance(message, TextMessage)
            secret = _SECRETS[index % len(_SECRETS)]
            messages[index] = TextMessage(role=message.role, content=f"{message.text} {secret}")
    return messages


@pytest.mark.parametrize("every", [0, 1, 3])
@pytest.mark.parametrize("limit", [2_000, 200, 40])
def test_the_narration_left_out_leaves_the_prepared_summary_unchanged(
    every: int, limit: int
) -> None:
    messages = _chat(1_500, every)
    budget = SUMMARY_NARRATION_BUDGET
    narrated = _narrated(messages)
    assert _texts_built(messages, budget, limit) < narrated // 2  # the plan left most out
    assert _prepared(messages, budget, limit, left_out=True) == _prepared(
        messages, budget, limit, left_out=False
    )


def test_the_count_kept_is_the_newest_run_within_the_budget() -> None:
    texts = ["a" * 10, "b" * 30, "c" * 20, "d" * 5]  # newest first
    assert narration_kept(texts, str, 2_000, 39) == 1  # 10, then 40 is over
    assert narration_kept(texts, str, 2_000, 40) == 2
    assert narration_kept(texts, str, 2_000, 60) == 3  # 10 + 30 + 20 = 60
    assert narration_kept(texts, str, 2_000, 65) == 4
    long = ["a" * 10, "b" * 300]
    assert narration_kept(long, str, 2_000, 200) == 1
    assert narration_kept(long, str, 100, 200) == 2  # cut to 100 and marked first: 10 + 126
    assert narration_kept(texts, lambda text: text * 2, 2_000, 40) == 1


def test_a_call_older_than_every_text_keeps_the_texts_built() -> None:
    """The plan's note goes first in the first assistant block; the cap's where the oldest
    text was: with a call before it, the two differ, so nothing is left out."""
    call = ToolCall(id="c1", name="read_file", arguments=json.dumps({"path": "/repo/a.py"}))
    messages: list[ContextMessage] = [
        TextMessage(role=Role.USER, content="start"),
        TextMessage(role=Role.ASSISTANT, content=None, tool_calls=(call,)),
        ToolResult(call_id="c1", content="no such file", is_error=True),  # never left out
        *_chat(400)[1:],
    ]
    narrated = _narrated(messages)
    assert _texts_built(messages, 2_000, 2_000) == narrated
    assert _prepared(messages, 2_000, 2_000, left_out=True) == _prepared(
        messages, 2_000, 2_000, left_out=False
    )


def test_without_the_oldest_text_the_note_moves() -> None:
    """The oldest text stays built so that the cap's note goes where it was: left out too,
    the prepared summary differs (the note goes where the first text kept is)."""
    messages = _chat(600)
    original = bounded._narration_built

    def without_oldest(*arguments):  # type: ignore[no-untyped-def]
        built = original(*arguments)
        assert built is not None
        return built - {min(built)}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounded, "_narration_built", without_oldest)
        changed = _prepared(messages, 2_000, 2_000, left_out=True)
    assert changed != _prepared(messages, 2_000, 2_000, left_out=False)


_words = st.sampled_from(["fix", "the", "build", "again", "why", "tests", "fail", "ok"])
_texts = st.lists(_words, min_size=1, max_size=40).map(" ".join)
_turn = st.tuples(
    st.lists(_texts, min_size=0, max_size=2),  # user texts (none: assistant messages join)
    st.lists(_texts | st.sampled_from(_SECRETS[:3]), min_size=0, max_size=3),  # assistant
    st.booleans(),  # a call after the texts
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(_turn, min_size=3, max_size=80),
    budget=st.integers(min_value=20, max_value=2_000),
    limit=st.sampled_from([40, 100, 2_000]),
)
def test_hypothesis_the_narration_left_out_changes_nothing(
    turns: list[tuple[list[str], list[str], bool]], budget: int, limit: int
) -> None:
    messages: list[ContextMessage] = [TextMessage(role=Role.USER, content="the task")]
    for number, (asks, answers, called) in enumerate(turns):
        messages.extend(TextMessage(role=Role.USER, content=ask) for ask in asks)
        messages.extend(TextMessage(role=Role.ASSISTANT, content=text) for text in answers)
        if called:
            call_id = f"call{number}"
            path = f"/repo/f{number % 3}.py"
            arguments = json.dumps({"path": path})
            call = ToolCall(id=call_id, name="read_file", arguments=arguments)
            messages.append(TextMessage(role=Role.ASSISTANT, content=None, tool_calls=(call,)))
            messages.append(ToolResult(call_id=call_id, content="x = 1"))
    assert _prepared(messages, budget, limit, left_out=True) == _prepared(
        messages, budget, limit, left_out=False
    )


@pytest.mark.parametrize("max_tokens", [None, 6_000])
def test_a_compaction_of_a_chat_is_the_same_with_the_texts_built(max_tokens: int | None) -> None:
    """End to end (a budget fitted: several spans, the memo of built items): the same
    compacted context as with every text built."""
    context = Context(_chat(3_000, 5))
    compactor = Compactor(Compact(retention_window=20, max_tokens=max_tokens), cwd="/repo")
    left_out = compactor.compact(context, compactor.forced_strategy())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounded, "_narration_built", lambda *_: None)
        whole = compactor.compact(context, compactor.forced_strategy())
    assert left_out.context == whole.context


def test_the_oldest_block_keeps_its_oldest_text_only() -> None:
    """The block of the oldest text is not emptied (that text stays built): its newest
    text is not built as a placeholder, though the asks around it are the same."""
    messages: list[ContextMessage] = [
        TextMessage(role=Role.USER, content="same"),
        TextMessage(role=Role.ASSISTANT, content="first " * 80),
        TextMessage(role=Role.ASSISTANT, content="second " * 80),
        TextMessage(role=Role.USER, content="same"),
    ]
    for number in range(40):
        messages.append(TextMessage(role=Role.USER, content=f"ask {number}"))
        messages.append(TextMessage(role=Role.ASSISTANT, content=f"answer {number} " * 60))
    newest_first = [
        m.text
        for m in reversed(messages)
        if isinstance(m, TextMessage) and m.role == Role.ASSISTANT
    ]
    kept = narration_kept(newest_first, str, 2_000, 4_000)
    assert kept < 30
    assert _texts_built(messages, 4_000, 2_000) == kept + 2  # and the one that goes, the oldest
    assert _prepared(messages, 4_000, 2_000, left_out=True) == _prepared(
        messages, 4_000, 2_000, left_out=False
    )
