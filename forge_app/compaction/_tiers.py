"""Compaction in tiers: prune, then summarise, then fall back — each only when needed.

1. **Prune** (no model): old tool outputs outside the protected tail become
   one-line placeholders, identical outputs become pointers.
2. **Summarise**: the wrapped engine (``frame`` or ``llm``) replaces a span.
   It reads the unpruned context, so a summariser sees real outputs rather
   than placeholders; its result is pruned again afterwards.
3. **Fall back**: the deterministic compactor with the budget as ``max_tokens``
   (the automatic strategy; the manual one when forced), which shrinks the
   retained tail and then the summary's texts until the context fits.
4. **Cut**: the largest texts left (tool outputs and assistant texts, then
   other user texts) are cut to a common length with a visible marker; the
   task (the last user message before the first assistant one) only to meet
   the window, by the handler
   (:func:`~forge_app.compaction._fit.cut_to_fit`).

The budget is the target of :meth:`Compact.target_tokens`: ``(1 - headroom)``
of the threshold (70% by default), or ``max_tokens`` when that is smaller, so
the next compaction is many turns away. The retention and eviction windows
choose the span as in forge; when honouring them would leave the context over
the budget, the budget wins. A tier runs only when the tiers before it left the
context over budget; when the context was within budget to begin with (another
trigger fired) the summary tier always runs.

The :data:`~forge_domain.CompactionMode` decides how far it goes: ``automatic``
may stop after pruning; ``forced`` always summarises, keeps only the retention
window, and falls back with the manual strategy; ``manual`` (a person's
``/compact``) is the summary tier alone: head, summary and retention window.
"""

from __future__ import annotations

from pathlib import Path

from forge_app.compaction._boundaries import tail_start
from forge_app.compaction._compactor import Compactor
from forge_app.compaction._fit import cut_to_fit
from forge_app.compaction._pruning import Pruned, prune_tool_outputs
from forge_app.summary import SummaryFrame
from forge_app.summary.transformers import redaction_memo
from forge_domain import (
    Agent,
    BaseContextEngine,
    CompactionMode,
    CompactionOutcome,
    CompactionResult,
    Context,
    ContextEngine,
    JsonObject,
    Usage,
    close_engine,
    compaction_outcome,
    note_event,
    note_tier,
)
from forge_domain.tools import ToolCatalog

__all__ = ["TieredEngine"]


def _hull(ranges: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The smallest inclusive range holding every one of ``ranges`` (None for none)."""
    return (min(s for s, _ in ranges), max(e for _, e in ranges)) if ranges else None


def _to_original(
    span: tuple[int, int], summarised: tuple[int, int] | None, shift: int
) -> tuple[int, int]:
    """A range of the context after the summary tier, in original indices.

    Messages before the summary kept their index; the summary (or the message
    it was merged into) and everything after it moved by ``shift``, the number
    of messages the summary tier removed.
    """
    start, end = span
    if summarised is None:
        return start, end
    first = summarised[0]
    return (
        start if start <= first else start + shift,
        end if end < first else end + shift,
    )


class TieredEngine(BaseContextEngine):
    """Wraps a summarising engine in the prune tier and the fallback tier.

    Its triggers are the defaults of :class:`BaseContextEngine` (the agent's, against
    its safety threshold); the wrapped engine is told the window and the session
    events, and writes the summaries.
    """

    def __init__(
        self,
        summary: ContextEngine,
        agent: Agent,
        *,
        context_length: int | None = None,
        cwd: str | None = None,
        template_dir: Path | None = None,
        catalog: ToolCatalog | None = None,
        tail_ratio: float = 0.2,
    ) -> None:
        """Wrap ``summary`` (whose name this engine takes) for ``agent``."""
        self.summary = summary
        self.name = summary.name
        self._cwd = cwd
        self._frame = SummaryFrame(template_dir)  # the fallback's, read once: not in compress
        self._catalog = catalog if catalog is not None else agent.tool_catalog()
        self._tail_ratio = tail_ratio
        super().__init__(agent, context_length=context_length)

    @property
    def budget(self) -> int:
        """The most tokens a compacted context may hold (:meth:`Compact.target_tokens`)."""
        return self.compact.target_tokens(self.threshold)

    def _fits(self, context: Context) -> bool:
        return int(context.token_count()) <= self.budget

    # -- told to the wrapped engine -------------------------------------------------------

    def update_model(self, context_length: int | None) -> None:
        """Recompute the threshold here and in the wrapped engine."""
        super().update_model(context_length)
        self.summary.update_model(context_length)

    def update_from_response(self, usage: Usage) -> None:
        """Forwarded to the wrapped engine."""
        self.summary.update_from_response(usage)

    def on_session_start(self, session_id: str) -> None:
        """Forwarded to the wrapped engine."""
        self.summary.on_session_start(session_id)

    def on_session_end(self, session_id: str) -> None:
        """Forwarded to the wrapped engine."""
        self.summary.on_session_end(session_id)

    def on_session_reset(self) -> None:
        """Forwarded to the wrapped engine (the llm engine forgets its cooldown)."""
        self.summary.on_session_reset()

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """The wrapped engine's tools."""
        return self.summary.tool_schemas()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """Forwarded to the wrapped engine."""
        return await self.summary.handle_tool_call(name, arguments)

    async def aclose(self) -> None:
        """Release what the wrapped engine holds (the llm engine's HTTP client)."""
        await close_engine(self.summary)

    # -- the tiers ----------------------------------------------------------------------

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Prune, summarise and fall back, stopping as soon as the context fits the budget.

        The summary tier reads the unpruned context (a summariser should see the
        real outputs, not placeholders); its result is pruned again afterwards.
        Only ``automatic`` may stop after pruning; a ``manual`` compaction is the
        summary tier alone (head, summary and retention window, as asked).
        """
        with redaction_memo():  # the fallback summarises the summary tier's span again
            return await self._compress(context, focus, mode)

    async def _compress(
        self, context: Context, focus: str | None, mode: CompactionMode
    ) -> CompactionOutcome:
        if mode == "manual":
            note_tier("summary")
            return await self.summary.compress(context, focus=focus, mode=mode)
        pruned = self._prune(context)
        if (
            pruned.indices
            and mode == "automatic"
            and not self._fits(context)
            and self._fits(pruned.context)
        ):
            span = (pruned.indices[0], pruned.indices[-1])
            note_tier("prune")
            return self._outcome(context, pruned.context, [], [span], "prune", None)
        note_tier("summary")
        outcome = await self.summary.compress(context, focus=focus, mode=mode)
        summarised = outcome.result.compacted_range if outcome.changed() else None
        engine = outcome.result.engine if summarised is not None else "prune"
        ranges = [summarised] if summarised is not None else []
        trimmed: list[tuple[int, int]] = []  # pruned or cut: the messages stay
        shift = len(context) - len(outcome.context)
        repruned = self._prune(outcome.context)
        if repruned.indices:
            span = (repruned.indices[0], repruned.indices[-1])
            trimmed.append(_to_original(span, summarised, shift))
        current = repruned.context
        if not self._fits(current):
            config = self.compact.model_copy(update={"max_tokens": self.budget})
            compactor = Compactor(config, cwd=self._cwd, catalog=self._catalog, frame=self._frame)
            strategy = compactor.forced_strategy() if mode == "forced" else None
            fallback = compactor.compact(current, strategy)
            if fallback.result.compacted_range is not None:
                ranges.append(_to_original(fallback.result.compacted_range, summarised, shift))
                current, engine = fallback.context, fallback.result.engine
                note_tier("fallback")
                note_event("fallback", {"tier": "fallback", "reason": "over budget after summary"})
        if not self._fits(current):
            cut = cut_to_fit(current, self.budget)
            if cut.indices:
                trimmed.append(_to_original((cut.indices[0], cut.indices[-1]), summarised, shift))
                current = cut.context
                note_tier("cut")
                note_event("cut", {"tier": "cut", "messages": len(cut.indices)})
        return self._outcome(context, current, ranges, trimmed, engine, outcome.result)

    def _prune(self, context: Context) -> Pruned:
        protect = tail_start(
            list(context),
            lower=0,
            min_messages=self.compact.retention_window,
            token_budget=int(self.threshold * self._tail_ratio),
        )
        return prune_tool_outputs(context, protect, self._catalog)

    def _outcome(
        self,
        before: Context,
        after: Context,
        summarised: list[tuple[int, int]],
        trimmed: list[tuple[int, int]],
        engine: str,
        summary_result: CompactionResult | None,
    ) -> CompactionOutcome:
        span = _hull([*summarised, *trimmed])
        return compaction_outcome(
            before,
            after,
            span,
            engine=engine if span is not None else self.name,
            max_tokens=self.compact.max_tokens,
            summary_usage=summary_result.summary_usage if summary_result else None,
            coverage=summary_result.coverage if summary_result else None,
            summarised=_hull(summarised),
            pruned=_hull(trimmed),
        )
