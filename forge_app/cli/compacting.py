"""One offline compaction of a transcript, and the metrics the CLI reports for it.

The engine is the one a live run uses (:func:`resolve_engine` for the agent), and
so are its trigger check (for the built-in engines: the agent's safety threshold,
:meth:`Agent.compaction_threshold`, against the context's usage-anchored token
count, plus the turn, message and turn-end triggers) and its compaction.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from forge_app.errors import NotATranscript
from forge_app.files._transcripts import Transcript
from forge_domain import (
    CHARS_METER,
    Agent,
    BudgetStatus,
    CompactionMode,
    CompactionOutcome,
    Context,
    ContextEngine,
    TokenMeter,
    compaction_outcome,
)
from forge_domain.formats import find_format_violations

if TYPE_CHECKING:
    from forge_app.store import ConversationRecorder

Trigger = Literal["threshold", "forced", "none"]
"""Why a compaction ran: a configured trigger fired, ``--force`` (which takes precedence), or
it did not run."""


class CompactionMetrics(BaseModel):
    """What ``compact`` and ``batch`` report for one transcript (one JSON line each)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: str
    """The transcript read."""
    output: str | None = None
    """Where the compacted transcript was written (None: standard output or not written)."""
    agent: str
    """The id of the agent whose ``compact`` settings were used."""
    trigger: Trigger
    """Why compaction ran (``forced`` whenever ``--force`` was given), or ``none``."""
    token_threshold: int
    """The token count at which compaction fires for this agent."""
    tokens_before: int
    """Token count of the input (provider usage when the transcript carries it, else chars/4)."""
    tokens_after: int
    """Token count of the output, counted the same way."""
    messages_before: int
    """Messages in the input."""
    messages_after: int
    """Messages in the output."""
    token_reduction_percent: float
    """Percent of tokens removed."""
    message_reduction_percent: float
    """Percent of messages removed."""
    compacted_range: tuple[int, int] | None
    """Inclusive 0-based indices of the input the compaction changed, summarised or pruned
    (None: nothing was); the tables show them numbered from 1, like the store's messages."""
    summarised_range: tuple[int, int] | None = None
    """Inclusive 0-based indices of the input a summary replaced (None: no summary)."""
    pruned_range: tuple[int, int] | None = None
    """Inclusive 0-based indices of the input whose outputs were only pruned or texts cut
    (None: none)."""
    budget_status: BudgetStatus
    """Whether ``compact.max_tokens`` was met."""
    engine: str
    """The engine that wrote the summary."""
    seconds: float
    """Wall time of the compaction."""


def ensure_provider_valid(transcript: Transcript, source: str | Path) -> None:
    """Raise :class:`NotATranscript` naming the first message its format's rules reject."""
    violations = find_format_violations(transcript.context, transcript.format)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more; see `forge-compact validate`)"
        raise NotATranscript(source, f"{first}{more if len(violations) > 1 else ''}", first.index)


async def _compress(
    engine: ContextEngine, context: Context, mode: CompactionMode, meter: TokenMeter = CHARS_METER
) -> CompactionOutcome | None:
    """Compact ``context`` as ``mode`` asks, then release the engine.

    None when ``mode`` is ``automatic`` and none of the engine's triggers fires.
    """
    from forge_app.compaction import close_engine, compress_with

    try:
        if mode == "automatic" and not engine.should_compress(context, meter.count(context)):
            return None
        return await compress_with(engine, context, mode=mode)
    finally:
        await close_engine(engine)


def _fires_no_built_in_trigger(
    agent: Agent,
    context: Context,
    mode: CompactionMode,
    recorder: ConversationRecorder | None,
    meter: TokenMeter,
) -> bool:
    """True when ``agent``'s engine is a built-in one and none of its triggers fires on an
    ``automatic`` compaction without a store: nothing to build (start-up time)."""
    from forge_app.compaction._triggers import BUILT_IN_ENGINES, BuiltInTriggers

    if mode != "automatic" or recorder is not None or agent.compact.engine not in BUILT_IN_ENGINES:
        return False
    return not BuiltInTriggers(agent).should_compress(context, meter.count(context))


def compact_transcript(
    transcript: Transcript,
    agent: Agent,
    *,
    source: str,
    mode: CompactionMode = "automatic",
    recorder: ConversationRecorder | None = None,
    meter: TokenMeter = CHARS_METER,
) -> tuple[Transcript, CompactionMetrics]:
    """Compact ``transcript`` with the engine ``agent`` names, as a live run would.

    ``automatic`` compacts only when a trigger fires, and the built-in engines then run
    their tiers (prune, summarise, fall back, cut) down to the agent's target
    (:meth:`Compact.target_tokens`); with no trigger the transcript is left unchanged.
    ``manual`` (``--force``, a person's ``/compact``) compacts whether or not a trigger
    fires, keeping the head, one summary and the retention window.

    Raises:
        NotATranscript: the transcript breaks provider rules.
        UnknownEngine: the agent names no engine that exists.
        EngineUnavailable: the engine cannot be built for the agent.
        CompactionFailed: the compaction could not complete (nothing is written).
        ModelCallFailed: a summarising model refused the call (the ``llm`` engine).
        StoreError: ``recorder``'s store could not write (nothing is written).

    With a ``recorder`` (``--store``) the transcript is stored as a conversation and the
    compaction archived; the output names the refs of what was replaced. ``meter``
    counts for the token trigger and the metrics (``compact.tokenizer``; default chars/4).
    """
    ensure_provider_valid(transcript, source)
    context = transcript.context
    started = time.perf_counter()
    if _fires_no_built_in_trigger(agent, context, mode, recorder, meter):
        outcome: CompactionOutcome | None = None  # the engines are not even imported
        engine_name = agent.compact.engine
    else:
        from forge_app.compaction import resolve_engine  # imported when used: start-up time

        engine: ContextEngine = resolve_engine(agent)
        if recorder is not None:
            from forge_app.store import ArchivingEngine

            recorder.sync(context)
            engine = ArchivingEngine(engine, recorder)
        import anyio

        outcome = anyio.run(_compress, engine, context, mode, meter)
        engine_name = engine.name
    trigger: Trigger = "threshold" if mode == "automatic" else "forced"
    if outcome is None:
        trigger = "none"
        outcome = compaction_outcome(context, context, None, engine=engine_name)
    result = outcome.result
    if meter.count_text is not None:
        result = result.model_copy(
            update={
                "original_tokens": int(meter.count(context)),
                "compacted_tokens": int(meter.count(outcome.context)),
            }
        )
    metrics = CompactionMetrics(
        input=source,
        agent=agent.id,
        trigger=trigger,
        token_threshold=agent.compaction_threshold(),
        tokens_before=result.original_tokens,
        tokens_after=result.compacted_tokens,
        messages_before=result.original_messages,
        messages_after=result.compacted_messages,
        token_reduction_percent=round(result.token_reduction_percentage(), 2),
        message_reduction_percent=round(result.message_reduction_percentage(), 2),
        compacted_range=result.compacted_range,
        summarised_range=result.summarised_range,
        pruned_range=result.pruned_range,
        budget_status=result.budget_status,
        engine=result.engine,
        seconds=round(time.perf_counter() - started, 4),
    )
    return transcript.with_context(outcome.context), metrics
