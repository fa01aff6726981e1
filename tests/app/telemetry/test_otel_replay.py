"""Spans and metrics of a replayed shared session: one span per compaction, in its turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from forge_app.files import default_agent, read_transcript
from forge_app.runtime import Replay
from forge_app.store import open_store
from forge_domain import CompactionResult

pytestmark = pytest.mark.anyio

SESSION = Path("/work/shared/data/sessions/msa-deepseek-django-13964.json")
"""333 messages; the default agent compacts it five times (prune once, then the frame)."""


def expected_attributes(reason: str, result: CompactionResult) -> dict[str, object]:
    expected: dict[str, object] = {
        "gen_ai.agent.name": "default",
        "forge_compact.threshold": 22_400,
        "forge_compact.reason": reason,
        "forge_compact.mode": "automatic",
        "forge_compact.engine": result.engine,
        "forge_compact.tokens.before": result.original_tokens,
        "forge_compact.tokens.after": result.compacted_tokens,
        "forge_compact.tokens.saved": result.original_tokens - result.compacted_tokens,
        "forge_compact.messages.before": result.original_messages,
        "forge_compact.messages.after": result.compacted_messages,
        "forge_compact.budget_status": result.budget_status,
        "forge_compact.tier": "prune" if result.engine == "prune" else "summary",
    }
    for name in ("compacted_range", "summarised_range", "pruned_range"):
        span = getattr(result, name)
        if span is not None:
            expected[f"forge_compact.{name}"] = span
    return expected


def _ours(span: ReadableSpan) -> dict[str, object]:
    attributes = dict(span.attributes or {})
    for volatile in ("gen_ai.conversation.id", "forge_compact.duration_s"):
        attributes.pop(volatile, None)
    return attributes


async def test_otel_replay_one_span_per_compaction_inside_its_turn(telemetry):
    session = Replay(read_transcript(SESSION).context, default_agent())
    turns = [turn async for turn in session.turns()]
    compacted = [(t.turn, r) for t in turns for r in t.compactions]
    spans = telemetry.spans("forge_compact.compaction")
    turn_spans = {s.context.span_id: s for s in telemetry.spans("forge_compact.turn")}

    parents = [turn_spans[s.parent.span_id].attributes["forge_compact.turn"] for s in spans]
    reasons = [s.attributes["forge_compact.reason"] for s in spans]
    actual = (len(turn_spans), parents, [_ours(s) for s in spans])
    expected = (
        len(turns),
        [number for number, _ in compacted],
        [expected_attributes(reason, r) for reason, (_, r) in zip(reasons, compacted, strict=True)],
    )
    assert actual == expected


async def test_otel_replay_metrics_count_compactions_and_tokens_saved(telemetry):
    session = Replay(read_transcript(SESSION).context, default_agent())
    results = [r for turn in [t async for t in session.turns()] for r in turn.compactions]
    metrics = telemetry.metrics()

    counted = sum(value for _, value in metrics["forge_compact.compactions"])
    saved = sum(value for _, value in metrics["forge_compact.tokens_saved"])
    timed = sum(value for _, value in metrics["forge_compact.compaction.duration"])
    engines = {a["forge_compact.engine"] for a, _ in metrics["forge_compact.compactions"]}
    actual = (counted, saved, timed, engines)
    expected = (
        len(results),
        sum(r.original_tokens - r.compacted_tokens for r in results),
        len(results),
        {r.engine for r in results},
    )
    assert actual == expected


async def test_otel_replay_turns_are_children_of_the_callers_span(telemetry):
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("caller") as caller:
        session = Replay(read_transcript(SESSION).context[:40], default_agent())
        _ = [turn async for turn in session.turns()]

    parents = {s.parent.span_id for s in telemetry.spans("forge_compact.turn")}
    assert parents == {caller.get_span_context().span_id}


async def test_otel_replay_with_a_store_names_the_archived_refs(telemetry, tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        session = Replay(read_transcript(SESSION).context, default_agent(), store=store)
        _ = [turn async for turn in session.turns()]
        stored = store.load(session.conversation.id)
        archived = [a.ref for a in store.archives(session.conversation.id)]
    spans = telemetry.spans("forge_compact.compaction")
    named = [ref for s in spans for ref in s.attributes.get("forge_compact.refs_archived", ())]

    assert (len(stored.messages) > 0, len(named) > 0, named) == (True, True, archived)
