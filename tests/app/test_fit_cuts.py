"""What the ask bound relies on in the fit (:mod:`forge_app.summary._fit_cuts`, the seam).

:func:`~forge_app.summary._ask_bound.bound_asks` applies every cut of
:func:`fit_candidates` (:func:`cuts_applied`) and drops the oldest asks itself, ahead of
:func:`fit_summary`. That is exact only because the fit, when it drops an ask, drops it
from its hardest cut: every candidate applied and the asks cut to ``MIN_TEXT_LIMIT``,
whatever its search (``_least_fact_cut`` included) tried before. Pinned here: a fit that
drops asks gives what the fit of that hardest cut gives.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from benchmarks.replay_scale import chat_session
from forge_app.compaction._compactor import prepared_summary
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._bounded import bounded_summary
from forge_app.summary._budget import MIN_TEXT_LIMIT
from forge_app.summary._fit_cuts import asks_limited, cuts_applied, fit_candidates
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary._frame import SummaryFrame
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import ContextMessage, Role, TextMessage
from forge_domain.summary import ContextSummary, TextItem
from forge_domain.tools import ToolCatalog

_FRAME = SummaryFrame()
_CATALOG = ToolCatalog.default()


def _prepared(messages: list[ContextMessage], max_chars: int) -> ContextSummary:
    built = bounded_summary(messages, _CATALOG, max_chars, 2_000)
    return prepared_summary(built, SummaryTransformer("/repo"))


def _hardest(summary: ContextSummary) -> ContextSummary:
    """Every cut of the fit but the asks' drops: its candidates, the asks cut shortest."""
    return asks_limited(cuts_applied(summary, fit_candidates(summary)), MIN_TEXT_LIMIT)


def _asks_dropped(summary: ContextSummary) -> int:
    return sum(
        count
        for block in summary.blocks
        for item in block.contents
        if isinstance(item, TextItem)
        for kind, count in item.omitted
        if kind == "ask"
    )


def _pinned(summary: ContextSummary, max_chars: int) -> None:
    fitted, text = fit_summary(summary, _FRAME.render, max_chars)
    assert _asks_dropped(fitted) > 0  # the fit reached its last step
    assert fit_summary(_hardest(summary), _FRAME.render, max_chars) == (fitted, text)


@pytest.mark.parametrize("max_chars", [4_000, 8_000, 16_000])
def test_a_chat_s_fit_drops_asks_from_its_hardest_cut(max_chars: int) -> None:
    _pinned(_prepared(list(chat_session(2_000).messages), max_chars), max_chars)


@pytest.mark.parametrize("max_chars", [600, 1_000])
def test_a_tool_session_s_fit_drops_asks_from_its_hardest_cut(max_chars: int) -> None:
    data = json.dumps(generate_session(2_000, seed=3)).encode()
    messages = list(parse_transcript(data, "generated.json").context)[:-20]
    _pinned(_prepared(messages, max_chars), max_chars)


def test_the_hardest_cut_is_the_fit_s_with_room_for_it() -> None:
    """A limit the hardest cut just fits: the fit drops no ask, and gives a frame that
    fits (a fit dropping asks from a cut softer than the hardest would keep fewer)."""
    summary = _prepared(list(chat_session(600).messages), 4_000)
    room = len(_FRAME.render(_hardest(summary)))
    fitted, text = fit_summary(summary, _FRAME.render, room)
    assert len(text) <= room
    assert _asks_dropped(fitted) == 0


_words = st.sampled_from(["fix", "the", "build", "again", "why", "tests", "fail", "ok"])
_texts = st.lists(_words, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    asks=st.lists(_texts, min_size=80, max_size=300),
    answers=st.lists(_texts | st.just(""), min_size=1, max_size=5),
    max_chars=st.integers(min_value=1_000, max_value=4_000),
)
def test_hypothesis_a_fit_that_drops_asks_drops_them_from_its_hardest_cut(
    asks: list[str], answers: list[str], max_chars: int
) -> None:
    messages: list[ContextMessage] = []
    for index, ask in enumerate(asks):  # repeated asks and runs of user texts included
        messages.append(TextMessage(role=Role.USER, content=ask))
        answer = answers[index % len(answers)]
        if answer:
            messages.append(TextMessage(role=Role.ASSISTANT, content=answer))
    summary = _prepared(messages, max_chars)
    fitted, text = fit_summary(summary, _FRAME.render, max_chars)
    if _asks_dropped(fitted):
        assert fit_summary(_hardest(summary), _FRAME.render, max_chars) == (fitted, text)
    else:  # no ask dropped: the hardest cut, had the fit taken it, was not needed
        assert len(text) <= max_chars
