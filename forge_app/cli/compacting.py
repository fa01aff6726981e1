"""One offline compaction of a transcript, and the metrics the CLI reports for it.

The trigger check is the one a live run makes: the agent's safety threshold
(:meth:`Agent.compaction_threshold`) as ``token_threshold``, compared with the
context's usage-anchored token count, plus the turn, message and turn-end triggers.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

import anyio
from pydantic import BaseModel, ConfigDict

from forge_app.compaction._compactor import Compactor
from forge_app.compaction._frame_engine import FrameEngine
from forge_app.compaction._tiers import TieredEngine
from forge_app.errors import NotATranscript
from forge_app.files._transcripts import Transcript
from forge_domain import Agent, BudgetStatus, CompactionResult, Context
from forge_domain.validation import find_violations

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
    """Inclusive indices of the input that were summarised (None: nothing was)."""
    budget_status: BudgetStatus
    """Whether ``compact.max_tokens`` was met."""
    engine: str
    """The engine that wrote the summary."""
    seconds: float
    """Wall time of the compaction."""


def _unchanged(context: Context, engine: str) -> CompactionResult:
    tokens = int(context.token_count())
    return CompactionResult(
        original_tokens=tokens,
        compacted_tokens=tokens,
        original_messages=len(context),
        compacted_messages=len(context),
        engine=engine,
    )


def ensure_provider_valid(transcript: Transcript, source: str | Path) -> None:
    """Raise :class:`NotATranscript` naming the first invalid message, if any."""
    violations = find_violations(transcript.context)
    if violations:
        first = violations[0]
        more = f" (and {len(violations) - 1} more; see `forge-compact validate`)"
        raise NotATranscript(source, f"{first}{more if len(violations) > 1 else ''}", first.index)


def compact_transcript(
    transcript: Transcript, agent: Agent, *, source: str, force: bool
) -> tuple[Transcript, CompactionMetrics]:
    """Compact ``transcript`` with ``agent``'s settings.

    With ``force`` (a manual ``/compact``) it always uses :meth:`Compactor.forced_strategy`,
    keeping the retention window, whether or not a trigger fires. Otherwise, when a trigger
    fires, it compacts as a live run would: the frame engine in its tiers (prune, summarise,
    fall back, cut), down to the agent's target (:meth:`Compact.target_tokens`), so the
    output is within the agent's threshold; it leaves the transcript unchanged when no
    trigger fires.

    Raises:
        NotATranscript: the transcript breaks provider rules.
        CompactionFailed: the compaction could not complete (nothing is written).
    """
    ensure_provider_valid(transcript, source)
    context = transcript.context
    threshold = agent.compaction_threshold()
    config = agent.with_compaction_threshold().compact
    compactor = Compactor(agent.compact, catalog=agent.tool_catalog())
    started = time.perf_counter()
    trigger: Trigger
    if force:
        trigger = "forced"
        outcome = compactor.compact(context, compactor.forced_strategy())
        compacted, result = outcome.context, outcome.result
    elif config.should_compact(context, context.token_count()):
        trigger = "threshold"
        engine = TieredEngine(FrameEngine(agent), agent)
        outcome = anyio.run(engine.compress, context)
        compacted, result = outcome.context, outcome.result
    else:
        trigger = "none"
        compacted, result = context, _unchanged(context, agent.compact.engine)
    metrics = CompactionMetrics(
        input=source,
        agent=agent.id,
        trigger=trigger,
        token_threshold=threshold,
        tokens_before=result.original_tokens,
        tokens_after=result.compacted_tokens,
        messages_before=result.original_messages,
        messages_after=result.compacted_messages,
        token_reduction_percent=round(result.token_reduction_percentage(), 2),
        message_reduction_percent=round(result.message_reduction_percentage(), 2),
        compacted_range=result.compacted_range,
        budget_status=result.budget_status,
        engine=result.engine,
        seconds=round(time.perf_counter() - started, 4),
    )
    return transcript.with_context(compacted), metrics
