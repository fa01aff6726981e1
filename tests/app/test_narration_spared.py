"""Narration the budget drops anyway is not redacted: the prepared summary is unchanged.

``prepared_summary`` given a :class:`SummaryTransformer` leaves unredacted the assistant
texts ``drop_oldest_narration`` is certain to drop (:func:`narration_certain_to_go`); the
same transformer wrapped in a plain function takes the path that redacts every text.
Both must give the same summary, and no secret may survive in it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.replay_scale import chat_session
from forge_app.compaction._compactor import SUMMARY_NARRATION_BUDGET, prepared_summary
from forge_app.summary._bounded import bounded_summary
from forge_app.summary._budget import drop_oldest_narration, narration_certain_to_go
from forge_app.summary.transformers import SummaryTransformer, redaction_memo
from forge_domain import ContextMessage, Role, TextMessage
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem
from forge_domain.tools import ToolCatalog
from tests.app.secret_fakes import SECRET_FAKES

_CATALOG = ToolCatalog.default()
_SECRETS = [text for _, text, _ in SECRET_FAKES]


def _built(messages: list[ContextMessage]) -> ContextSummary:
    return bounded_summary(messages, _CATALOG, 24_000, 2_000)


def _both(summary: ContextSummary, transform: SummaryTransformer, limit: int) -> None:
    """The spared path and the redact-everything path give the same summary."""
    with redaction_memo():
        spared = prepared_summary(summary, transform, limit)
    with redaction_memo():
        whole = prepared_summary(summary, lambda s: transform(s), limit)
    assert spared == whole


def _chat_with_secrets(size: int, every: int) -> list[ContextMessage]:
    """The generated chat, a secret put into every ``every``-th text (it changes lengths)."""
    messages = list(chat_session(size).messages)
    for index in range(1, len(messages), every):
        message = messages[index]
        assert isinstance(message, TextMessage)
        secret = _SECRETS[index % len(_SECRETS)]
        messages[index] = TextMessage(role=message.role, content=f"{message.text} {secret}")
    return messages


@pytest.mark.parametrize("every", [1, 3, 7])
@pytest.mark.parametrize("limit", [2_000, 200, 40])
def test_sparing_the_dropped_narration_leaves_the_prepared_summary_unchanged(
    every: int, limit: int
) -> None:
    summary = _built(_chat_with_secrets(1_500, every))
    with redaction_memo():
        going = narration_certain_to_go(
            summary, SummaryTransformer().assistant_text, limit, SUMMARY_NARRATION_BUDGET
        )
    assert going  # most of the chat's narration is certain to go
    _both(summary, SummaryTransformer("/repo"), limit)
    _both(summary, SummaryTransformer(redact_secrets=False), limit)


def test_the_spared_texts_are_the_ones_the_budget_drops() -> None:
    """Every spared text is dropped; the newest one dropped is not spared (it is read)."""
    summary = _built(_chat_with_secrets(600, 2))
    transform = SummaryTransformer()
    with redaction_memo():
        going = narration_certain_to_go(summary, transform.assistant_text, 2_000, 4_000)
        prepared = drop_oldest_narration(transform(summary), 4_000)
    kept = {item.text for block in prepared.blocks for item in block.contents}
    narration = [
        item for block in summary.blocks if block.role == Role.ASSISTANT for item in block.contents
    ]
    assert going == narration[: len(going)]
    assert not any(item.text in kept for item in going)
    assert narration[len(going)].text not in kept  # the newest dropped: read, not spared


@pytest.mark.parametrize("room", [0, 1, 3, 4, 5])
def test_the_newest_dropped_text_is_read_redacted(room: int) -> None:
    """A secret shorter than its redaction: the text holding it fits the budget as it is,
    not redacted (``room`` characters to spare: 4 is the lengthening, 21 → 25). Sparing
    it as well would keep it, unredacted; only its redacted length says it goes."""
    boundary = "export API_KEY=abc123"  # redacted: "export API_KEY=[REDACTED]"
    newest = TextItem(text="x" * 100)
    blocks = [
        SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="old " * 20),)),
        SummaryBlock(role=Role.USER, contents=(TextItem(text="ask"),)),
        SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text=boundary),)),
        SummaryBlock(role=Role.USER, contents=(TextItem(text="ask again"),)),
        SummaryBlock(role=Role.ASSISTANT, contents=(newest,)),
    ]
    summary = ContextSummary(blocks=tuple(blocks))
    budget = len(newest.text) + len(boundary) + room
    transform = SummaryTransformer()
    going = narration_certain_to_go(summary, transform.assistant_text, 2_000, budget)
    assert [item.text for item in going] == (["old " * 20] if room < 4 else [])
    spared = drop_oldest_narration(transform.sparing(going)(summary), budget)
    whole = drop_oldest_narration(transform(summary), budget)
    assert spared == whole
    texts = [item.text for block in whole.blocks for item in block.contents]
    assert ("export API_KEY=[REDACTED]" in texts) == (room >= 4)
    assert "abc123" not in " ".join(texts)


def test_an_item_object_also_kept_elsewhere_is_not_spared() -> None:
    """One TextItem object standing at an old (dropped) and a new (kept) place is redacted."""
    secret = TextItem(text=_SECRETS[0])
    old = [SummaryBlock(role=Role.ASSISTANT, contents=(secret,))]
    filler = [
        block
        for index in range(40)
        for block in (
            SummaryBlock(role=Role.USER, contents=(TextItem(text=f"ask {index}"),)),
            SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="x" * 300),)),
        )
    ]
    again = SummaryBlock(role=Role.USER, contents=(secret,))
    summary = ContextSummary(blocks=(*old, *filler, again))
    going = narration_certain_to_go(summary, SummaryTransformer().assistant_text, 2_000, 1_000)
    assert going  # old filler texts go
    assert all(item is not secret for item in going)
    prepared = prepared_summary(summary, SummaryTransformer(), 2_000)
    assert all(_SECRETS[0] not in item.text for b in prepared.blocks for item in b.contents)


_words = st.sampled_from(["fix", "the", "token", "build", "why", "password", "ok", "key"])
_plain = st.lists(_words, min_size=1, max_size=40).map(" ".join)
_texts = (
    _plain | st.sampled_from(_SECRETS) | st.tuples(_plain, st.sampled_from(_SECRETS)).map(" ".join)
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(st.tuples(_texts, _texts | st.just("")), min_size=1, max_size=120),
    limit=st.sampled_from([40, 120, 2_000]),
)
def test_sparing_matches_redacting_every_text(turns: list[tuple[str, str]], limit: int) -> None:
    messages: list[ContextMessage] = []
    for ask, answer in turns:  # runs of user texts and repeated texts included
        messages.append(TextMessage(role=Role.USER, content=ask))
        if answer:
            messages.append(TextMessage(role=Role.ASSISTANT, content=answer * 3))
    _both(_built(messages), SummaryTransformer(), limit)
