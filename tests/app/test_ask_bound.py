"""Asks the fit is certain to drop, left out before it: the fitted summary is unchanged."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_app.summary._ask_bound as ask_bound
from benchmarks.generator import generate_session
from benchmarks.replay_scale import chat_session
from forge_app.compaction._compactor import prepared_summary
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._ask_bound import bound_asks, cut_for
from forge_app.summary._bounded import bounded_summary
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary._frame import SummaryFrame
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import ContextMessage, Role, TextMessage
from forge_domain.summary import ContextSummary
from forge_domain.tools import ToolCatalog

_FRAME = SummaryFrame()
_CATALOG = ToolCatalog.default()


def _prepared(messages: list[ContextMessage], max_chars: int) -> ContextSummary:
    built = bounded_summary(messages, _CATALOG, max_chars, 2_000)
    return prepared_summary(built, SummaryTransformer("/repo"))


def _chat(size: int, seed: int = 0) -> list[ContextMessage]:
    return list(chat_session(size, seed=seed).messages)


@pytest.mark.parametrize("max_chars", [6_000, 12_000, 30_000])
def test_bound_asks_leaves_the_fitted_frame_unchanged(max_chars: int) -> None:
    prepared = _prepared(_chat(3_000), max_chars)
    reduced = bound_asks(prepared, _FRAME.render, max_chars)
    assert reduced is not prepared  # the bound left asks out
    assert len(list(reduced.blocks)) <= len(list(prepared.blocks))
    assert fit_summary(reduced, _FRAME.render, max_chars) == fit_summary(
        prepared, _FRAME.render, max_chars
    )


@pytest.mark.parametrize("max_chars", [8_000, 40_000])
def test_bound_asks_on_tool_sessions_is_exact(max_chars: int) -> None:
    data = json.dumps(generate_session(2_000, seed=3)).encode()
    messages = list(parse_transcript(data, "generated.json").context)[:-20]
    prepared = _prepared(messages, max_chars)
    reduced = bound_asks(prepared, _FRAME.render, max_chars)
    assert fit_summary(reduced, _FRAME.render, max_chars) == fit_summary(
        prepared, _FRAME.render, max_chars
    )


def test_bound_asks_keeps_what_a_budget_leaves_room_for() -> None:
    prepared = _prepared(_chat(200), 400_000)
    assert bound_asks(prepared, _FRAME.render, 400_000) is prepared


def test_bound_asks_refuses_a_bound_too_tight() -> None:
    """With the newest asks kept adding up to less than the limit, the fit keeps an ask
    such a cut drops: the check by render gives the summary back whole."""
    max_chars = 20_000
    prepared = _prepared(_chat(3_000), max_chars)
    tight = cut_for(prepared, 0.3 * max_chars)
    assert tight is not None
    assert fit_summary(tight, _FRAME.render, max_chars) != fit_summary(
        prepared, _FRAME.render, max_chars
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ask_bound, "KEPT_SHARE", 0.3)
        assert bound_asks(prepared, _FRAME.render, max_chars) is prepared


_words = st.sampled_from(["fix", "the", "build", "again", "why", "tests", "fail", "ok"])
_texts = st.lists(_words, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    asks=st.lists(_texts, min_size=50, max_size=400),
    answers=st.lists(_texts | st.just(""), min_size=1, max_size=5),
    max_chars=st.integers(min_value=1_500, max_value=12_000),
)
def test_bound_asks_matches_the_unbounded_fit(
    asks: list[str], answers: list[str], max_chars: int
) -> None:
    messages: list[ContextMessage] = []
    for index, ask in enumerate(asks):  # repeated asks and runs of user texts included
        messages.append(TextMessage(role=Role.USER, content=ask))
        answer = answers[index % len(answers)]
        if answer:
            messages.append(TextMessage(role=Role.ASSISTANT, content=answer))
    prepared = _prepared(messages, max_chars)
    reduced = bound_asks(prepared, _FRAME.render, max_chars)
    assert fit_summary(reduced, _FRAME.render, max_chars) == fit_summary(
        prepared, _FRAME.render, max_chars
    )
