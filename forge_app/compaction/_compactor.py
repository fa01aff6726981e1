"""The deterministic compactor: replace a span of a conversation with a structured summary.

Steps of :meth:`Compactor.compact`:

1. validate the input (invalid input raises, it is never repaired silently);
2. choose the span with a :class:`CompactionStrategy`, extended back over earlier
   summaries so they are folded into the new one instead of piling up;
3. build a :class:`ContextSummary` of the span (droppable messages inside it are
   left out), run the :class:`SummaryTransformer`, merge repeated operations into one
   line each (with their counts), bound its texts, and render the frame within the
   summary budget (``Compact.summary_budget``), dropping the oldest detail if needed;
4. splice it in as one user message, carrying the span's last reasoning onto the
   first surviving assistant message and its usage as ``span_usage``;
5. when ``max_tokens`` is set and not met, shrink the retained tail, then the
   summary's texts, until it fits or nothing is left to shrink;
6. validate the whole output, with the input's rules. Any failure raises
   :class:`CompactionFailed` and the input context, being immutable, is exactly as it was.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from itertools import accumulate
from pathlib import Path

import jinja2
from pydantic import ValidationError

from forge_app.errors import CompactionFailed
from forge_app.summary import earlier_summary
from forge_app.summary._ask_bound import asks_certain_to_go, bound_asks
from forge_app.summary._bounded import NarrationBudget, bounded_summary
from forge_app.summary._budget import (
    MIN_TEXT_LIMIT,
    drop_oldest_narration,
    limit_texts,
    longest_text,
    narration_certain_to_go,
)
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary._frame import SummaryFrame, is_summary_text
from forge_app.summary.transformers import SummaryTransformer, redaction_memo
from forge_app.summary.transformers._keep_last_operation import aggregate_operations
from forge_app.summary.transformers._redact_secrets import prefix_kept
from forge_domain import (
    BudgetStatus,
    Compact,
    CompactionOutcome,
    CompactionResult,
    CompactionStrategy,
    Context,
    ContextMessage,
    ForgeDomainError,
    Role,
    TextMessage,
    ToolResult,
)
from forge_domain._compact import SUMMARY_FLOOR
from forge_domain._messages import CHARS_PER_TOKEN
from forge_domain.formats import ensure_valid, find_violations
from forge_domain.summary import ContextSummary, accumulated_usage, carry_reasoning
from forge_domain.summary._summary import built_once
from forge_domain.tools import ToolCatalog

__all__ = ["Compactor", "is_summary_message"]  # ensure_valid_output: internal, for the engines

SUMMARY_TEXT_LIMIT = 2_000
"""Characters kept of any single text in a summary (longer texts are cut, visibly)."""
SUMMARY_NARRATION_BUDGET = 16_000
"""Characters of assistant text a summary keeps; the oldest beyond it are dropped, with a note."""


def prepared_summary(
    summary: ContextSummary,
    transform: Callable[[ContextSummary], ContextSummary],
    text_limit: int = SUMMARY_TEXT_LIMIT,
) -> ContextSummary:
    """Step 3 before rendering, shared by every engine that writes a frame: transform,
    merge repeated operations, bound each text and the narration.

    The narration the bound drops whatever it reads is not redacted (a long chat's
    summary keeps a few of its tens of thousands of assistant texts;
    :func:`narration_certain_to_go`)."""
    return _prepared(summary, transform, text_limit)[0]


def _prepared(
    summary: ContextSummary,
    transform: Callable[[ContextSummary], ContextSummary],
    text_limit: int,
    asks_within: int | None = None,
) -> tuple[ContextSummary, bool]:
    """:func:`prepared_summary`; with ``asks_within`` (the frame's characters, when
    :func:`bound_asks` follows) the user asks it is certain to drop, told apart without
    redacting them (:func:`asks_certain_to_go`), are not redacted either. Also whether
    any ask was left so: the bound must then drop them (else they are redacted after all)."""
    spared_asks = False
    if isinstance(transform, SummaryTransformer):
        going = narration_certain_to_go(
            summary, transform.assistant_text, text_limit, SUMMARY_NARRATION_BUDGET
        )
        if asks_within is not None and transform.redact_secrets:
            summary = transform.unredacted(summary)
            kept = prefix_kept(MIN_TEXT_LIMIT)
            asks = asks_certain_to_go(
                summary, transform.assistant_text, kept, text_limit, asks_within
            )
            spared_asks = bool(asks)
            transformed = transform.sparing([*going, *asks]).redacted(summary)
        else:
            transformed = transform.sparing(going)(summary)
    else:
        transformed = transform(summary)
    merged = aggregate_operations(transformed)
    prepared = drop_oldest_narration(limit_texts(merged, text_limit), SUMMARY_NARRATION_BUDGET)
    return prepared, spared_asks


def is_summary_message(message: ContextMessage) -> bool:
    """Return True for a user message that holds an earlier compaction summary."""
    return (
        isinstance(message, TextMessage)
        and message.role == Role.USER
        and (message.summary_data is not None or is_summary_text(message.text))
    )


def _fold_start(context: Context, start: int) -> int:
    """Move ``start`` back over the user messages before it when they include a summary."""
    folded = start
    index = start - 1
    while index >= 0:
        message = context[index]
        if not isinstance(message, TextMessage) or message.role != Role.USER:
            break
        if is_summary_message(message):
            folded = index
        index -= 1
    return folded


def _kept_tokens(context: Context, span: tuple[int, int]) -> int:
    """The tokens a splice of ``span`` keeps besides its summary: a lower bound of its size."""
    start, end = span
    kept = carry_reasoning(
        [*context[:start], *context[end + 1 :]], context[start : end + 1], after=start
    )
    return Context(kept, usage_floor=len(kept)).token_count_approx()


class _KeptTokens:
    """:func:`_kept_tokens` of many spans of one context, each in O(1) but for the message
    the span's reasoning is carried onto: sums of the messages' estimates before each
    index, and where the reasoning a span may carry is (a 40,000-message span's kept
    tokens were a list of the kept messages, a scan of the span for its reasoning and a
    context of the kept messages: about 40 ms, for each of the fit's 16-odd counts)."""

    def __init__(self, context: Context) -> None:
        self._context = context
        self._before = list(accumulate((message.approx_tokens for message in context), initial=0))
        reasoning = [
            (index, message.reasoning_details)
            for index, message in enumerate(context)
            if isinstance(message, TextMessage) and message.reasoning_details
            if not message.droppable
        ]
        self._reasoning = [index for index, _ in reasoning]
        """The messages whose reasoning a span ending at or after them carries, in order."""
        self._details = [details for _, details in reasoning]
        """Their reasoning."""

    def __call__(self, span: tuple[int, int]) -> int:
        """What :func:`_kept_tokens` gives for ``span``."""
        start, end = span
        before = self._before
        kept = before[start] + before[-1] - before[end + 1]
        newest = bisect_right(self._reasoning, end) - 1
        if newest < 0 or self._reasoning[newest] < start:
            return kept  # no reasoning in the span: nothing is carried
        context = self._context
        for index in range(end + 1, len(context)):  # the first assistant message kept after it
            message = context[index]
            if isinstance(message, TextMessage) and message.role == Role.ASSISTANT:
                if not message.reasoning_details:
                    update = {"reasoning_details": self._details[newest]}
                    kept += message.model_copy(update=update).approx_tokens
                    kept -= message.approx_tokens
                break
        return kept


_PLANNED_TRIES = 4
"""Summaries built at counts planned from sizes before the fit search falls back to bisecting."""


def _largest_within(kept_at: Callable[[int], int | None], low: int, high: int, room: int) -> int:
    """The largest count in ``[low, high]`` whose kept tokens are at most ``room`` (what a
    span keeps grows with the count), else ``low``: the smallest count, to try next."""
    smallest = kept_at(low)
    if smallest is None or smallest > room:
        return low
    while low < high:
        middle = (low + high + 1) // 2
        size = kept_at(middle)
        if size is not None and size <= room:
            low = middle
        else:
            high = middle - 1
    return low


def ensure_valid_output(compacted: Context) -> None:
    """Raise :class:`CompactionFailed` (stage ``validate``) if ``compacted`` breaks a provider rule.

    Every engine checks its whole output, with the rules its input was checked with
    (:func:`find_violations`, one pass, well under a millisecond per 2,000 messages),
    so no argument about what a splice can or cannot break is needed.
    """
    violations = find_violations(compacted, "shared")  # the format's own rules: on reading
    if violations:
        raise CompactionFailed("validate", "; ".join(str(v) for v in violations))


class Compactor:
    """Compacts contexts according to one :class:`Compact` configuration."""

    def __init__(
        self,
        compact: Compact,
        *,
        cwd: str | None = None,
        template_dir: Path | None = None,
        catalog: ToolCatalog | None = None,
        frame: SummaryFrame | None = None,
    ) -> None:
        """Prepare a compactor.

        Args:
            compact: when and how much to compact.
            cwd: working directory stripped from paths in the summary.
            template_dir: a directory holding a custom ``forge-partial-summary-frame.md``.
            catalog: how tool calls are classified (the built-in catalog when None).
            frame: a frame already loaded (``template_dir`` is then ignored): an engine
                building compactors while it compacts passes its own, so that no compaction
                reads the template file (blocking I/O on the event loop).
        """
        self.config = compact
        self.cwd = cwd
        self._frame = frame if frame is not None else SummaryFrame(template_dir)
        self._catalog = catalog if catalog is not None else ToolCatalog.default()
        self._transform = SummaryTransformer(cwd, redact_secrets=compact.redact_secrets)

    def automatic_strategy(self) -> CompactionStrategy:
        """The strategy of automatic compaction: the more conservative of the two windows."""
        evict = CompactionStrategy.evict(self.config.eviction_window)
        return evict.max(CompactionStrategy.retain(self.config.retention_window))

    def forced_strategy(self) -> CompactionStrategy:
        """The strategy of a manual ``/compact``: everything but the retention window."""
        return CompactionStrategy.retain(self.config.retention_window)

    def compact(
        self, context: Context, strategy: CompactionStrategy | None = None
    ) -> CompactionOutcome:
        """Compact ``context`` with ``strategy`` (the automatic one when None).

        Raises:
            InvalidTranscript: the input breaks provider rules (nothing is changed).
            CompactionFailed: a step failed; the input is untouched.
        """
        ensure_valid(context, "shared")
        chosen = strategy if strategy is not None else self.automatic_strategy()
        try:
            # The span may be summarised several times (a budget is fitted by trying spans
            # that share their start): each text redacted once, each message's items built
            # once. With no budget, one summary: nothing kept to build it again.
            fitted = self.config.max_tokens is not None
            with redaction_memo(), built_once() if fitted else nullcontext():
                return self._compact_valid(context, chosen)
        except (ForgeDomainError, ValidationError, jinja2.TemplateError) as exc:
            raise CompactionFailed("summary", str(exc)) from exc

    def summarise_span(self, context: Context, span: tuple[int, int]) -> CompactionOutcome:
        """Replace exactly ``span`` (inclusive) with one summary, however long it comes out.

        For a caller that has decided what to summarise (the LangChain middleware honouring
        ``keep``): no strategy, no protected head, and no check that the summary saves
        tokens (a few short messages give a longer summary). Summaries inside the span are
        folded; user texts are kept as the frame keeps them (whole up to
        ``SUMMARY_TEXT_LIMIT``, cut or dropped only by the summary budget).

        Raises:
            InvalidTranscript: the input breaks provider rules (nothing is changed).
            CompactionFailed: the span separates a tool call from its results, or a step failed.
        """
        ensure_valid(context, "shared")
        try:
            with redaction_memo():
                compacted = self._splice(context, span, SUMMARY_TEXT_LIMIT)
        except (ForgeDomainError, ValidationError, jinja2.TemplateError) as exc:
            raise CompactionFailed("summary", str(exc)) from exc
        ensure_valid_output(compacted)
        return self._outcome(context, compacted, span, "not_set")

    # -- internals -----------------------------------------------------------------------

    def _span(self, context: Context, retained: int) -> tuple[int, int] | None:
        found = CompactionStrategy.retain(retained).eviction_range(context)
        if found is None:
            return None
        start, end = found
        return _fold_start(context, start), end

    def _summary(
        self, span: Sequence[ContextMessage], text_limit: int, budget: int | None = None
    ) -> tuple[ContextSummary, str]:
        """The summary of ``span`` and its frame, within the summary budget when possible.

        ``budget`` (tokens) lowers the configured summary budget (never below
        ``SUMMARY_FLOOR``) when what the context keeps leaves less room than that.
        """
        tokens = self.config.summary_budget()
        if budget is not None:
            tokens = max(SUMMARY_FLOOR, min(tokens, budget))
        max_chars = tokens * CHARS_PER_TOKEN
        # Each step's input is let go when it returns (no list of the built blocks held
        # here): a long chat's built items are mostly dropped by the narration budget and
        # the ask bound, and need not stay alive through the fit.
        return fit_summary(
            self._bounded(self._built(span, max_chars, text_limit), text_limit, max_chars),
            self._frame.render,
            max_chars,
        )

    def _bounded(self, built: ContextSummary, text_limit: int, max_chars: int) -> ContextSummary:
        """``built`` prepared (:func:`prepared_summary`) and its asks bounded
        (:func:`bound_asks`); the asks the bound is certain to drop are not redacted, unless
        the bound keeps them after all: then ``built`` is prepared again, every ask redacted."""
        render = self._frame.render
        prepared, spared_asks = _prepared(built, self._transform, text_limit, max_chars)
        bounded = bound_asks(prepared, render, max_chars)
        if spared_asks and bounded is prepared:
            return bound_asks(
                prepared_summary(built, self._transform, text_limit), render, max_chars
            )
        return bounded

    def _built(
        self, span: Sequence[ContextMessage], max_chars: int, text_limit: int
    ) -> ContextSummary:
        """The summary of ``span`` as built: earlier summaries' blocks, then the bounded
        build of the other messages (droppable ones left out)."""
        earlier: list[TextMessage] = []  # summaries of earlier compactions, to fold
        fresh: list[ContextMessage] = []
        user = Role.USER  # (an enum's member is slow to look up)
        for message in span:
            if type(message) is ToolResult:  # never droppable, never a summary
                fresh.append(message)
                continue
            if message.droppable:
                continue
            if isinstance(message, TextMessage):
                if (
                    message.summary_data is None
                    and message.role == user
                    and is_summary_text(message.text)
                ):  # a frame kept as text only (a file, a framework): its structure read back
                    data = earlier_summary(message.text).model_dump(mode="json")
                    message = message.model_copy(update={"summary_data": data})
                if message.summary_data is not None:  # is_summary_message, read inline
                    earlier.append(message)
                    if message.tool_calls:  # an llm summary merged ahead of a turn: its calls
                        update = {"content": None, "summary_data": None}
                        fresh.append(message.model_copy(update=update))
                    continue
            fresh.append(message)
        blocks = [
            block
            for message in earlier
            for block in ContextSummary.model_validate(message.summary_data).blocks
        ]
        # The narration cap of prepared_summary: what it is certain to drop is not built.
        narration = NarrationBudget(self._transform.assistant_text, SUMMARY_NARRATION_BUDGET)
        fresh_summary = bounded_summary(
            fresh, self._catalog, max_chars, text_limit, narration, joined=True
        )
        blocks.extend(fresh_summary.blocks)
        return ContextSummary.of_blocks(blocks)

    def _splice(
        self,
        context: Context,
        span: tuple[int, int],
        text_limit: int,
        budget: int | None = None,
    ) -> Context:
        start, end = span
        messages = context[start : end + 1]
        summary, frame = self._summary(messages, text_limit, budget)
        summary_message = TextMessage(
            role=Role.USER,
            content=frame,
            span_usage=accumulated_usage(messages),
            summary_data=summary.model_dump(mode="json"),
        )
        new = carry_reasoning(
            [*context[:start], summary_message, *context[end + 1 :]], messages, after=start + 1
        )
        return Context(new, usage_floor=len(new))

    def _compact_valid(self, context: Context, strategy: CompactionStrategy) -> CompactionOutcome:
        max_tokens = self.config.max_tokens
        retained = strategy.retained_count(context)
        span = self._span(context, retained)
        over_budget = max_tokens is not None and context.token_count_approx() > max_tokens
        if span is None and not over_budget:
            # The strategy keeps everything; only a budget that is not met asks for more.
            return self._outcome(context, context, None, self._status(context, max_tokens))
        # Over ``max_tokens`` without its summary, the strategy's span is not built: ``_fit``
        # would only replace it (a compaction over the budget is kept only when no span is).
        over = (
            max_tokens is not None and span is not None and _kept_tokens(context, span) > max_tokens
        )
        compacted = self._splice(context, span, SUMMARY_TEXT_LIMIT) if span and not over else None
        status: BudgetStatus = "not_set"
        if max_tokens is not None:
            compacted, span, status = self._fit(context, compacted, span, retained, max_tokens)
        if (
            compacted is None
            or span is None
            or compacted.token_count_approx() >= context.token_count_approx()
        ):
            return self._outcome(context, context, None, self._status(context, max_tokens))
        ensure_valid_output(compacted)
        return self._outcome(context, compacted, span, status)

    def _fit(
        self,
        context: Context,
        compacted: Context | None,
        span: tuple[int, int] | None,
        retained: int,
        max_tokens: int,
    ) -> tuple[Context | None, tuple[int, int] | None, BudgetStatus]:
        """Shrink the retained tail, then the summary's texts, until ``max_tokens`` is met.

        ``compacted`` is None when the strategy's own span is empty (its retention
        window covers everything); the tail then shrinks from there.
        """
        if compacted is not None and compacted.token_count_approx() <= max_tokens:
            return compacted, span, "met"
        best = self._largest_fitting(context, retained, max_tokens)
        if best is not None:
            return best[0], best[1], "met"
        widest = self._span(context, 0) or span
        if widest is None:
            return compacted, span, "exhausted"
        # What the context keeps verbatim (a long task, the tail) leaves the summary less
        # room than its budget: the summary yields, down to its floor.
        room = max_tokens - _kept_tokens(context, widest)
        widest_summary, _ = self._summary(
            context[widest[0] : widest[1] + 1], SUMMARY_TEXT_LIMIT, room
        )
        limit = min(SUMMARY_TEXT_LIMIT, longest_text(widest_summary))
        candidate = self._splice(context, widest, limit, room)
        while limit > MIN_TEXT_LIMIT and candidate.token_count_approx() > max_tokens:
            limit = max(MIN_TEXT_LIMIT, limit // 2)
            candidate = self._splice(context, widest, limit, room)
        status: BudgetStatus = (
            "met" if candidate.token_count_approx() <= max_tokens else "exhausted"
        )
        return candidate, widest, status

    def _largest_fitting(
        self, context: Context, retained: int, max_tokens: int
    ) -> tuple[Context, tuple[int, int]] | None:
        """The compaction that keeps the most of the ``retained`` tail and fits ``max_tokens``.

        A search over the retained count, as a bisection would run it (a count that fits
        raises the lower end, one that does not lowers the upper end), but each count is
        planned from sizes: what a span keeps besides its summary is known without building
        it (``_kept_tokens``), and every summary of these spans (they share their start) is
        about the size of the last one built, so the next count tried is the largest whose
        kept messages leave room for it. A summary is built only for the count tried, two or
        three in all instead of one per bisection step (each of a whole span: 8 of about
        50,000 messages for a 100,000-message chat, plans/008-performance.md round 6b).
        When the sizes plan badly (``_PLANNED_TRIES`` counts tried), it bisects.
        """
        spans: dict[int, tuple[tuple[int, int], int] | None] = {}
        kept_tokens = _KeptTokens(context)

        def span_at(count: int) -> tuple[tuple[int, int], int] | None:
            """The span of ``count`` and the tokens it keeps; None: the count leaves no span."""
            if count not in spans:
                found = self._span(context, count)
                spans[count] = None if found is None else (found, kept_tokens(found))
            return spans[count]

        def kept_at(count: int) -> int | None:
            planned = span_at(count)
            return None if planned is None else planned[1]

        best: tuple[Context, tuple[int, int]] | None = None
        summary_tokens = self._first_plan(context)
        low, high, tries = 0, retained - 1, 0
        while low <= high:
            if tries < _PLANNED_TRIES:
                count = _largest_within(kept_at, low, high, max_tokens - summary_tokens)
            else:
                count = (low + high) // 2
            planned = span_at(count)
            # A span whose kept messages alone are over cannot fit: no summary is built.
            if planned is None or planned[1] > max_tokens:
                high = count - 1
                continue
            candidate_span, size = planned
            candidate = self._splice(context, candidate_span, SUMMARY_TEXT_LIMIT)
            tries += 1
            candidate_tokens = candidate.token_count_approx()
            summary_tokens = candidate_tokens - size
            if candidate_tokens <= max_tokens:
                best = (candidate, candidate_span)
                low = count + 1
            else:
                high = count - 1
        return best

    def _first_plan(self, context: Context) -> int:
        """The summary size the fit search plans its first count with: that of the earlier
        summary its spans fold (the tiered engine's fallback folds the summary tier's, fitted
        to the same budget), else the summary budget."""
        widest = self._span(context, 0)
        if widest is not None and is_summary_message(context[widest[0]]):
            return context[widest[0]].approx_tokens
        return self.config.summary_budget()

    @staticmethod
    def _status(context: Context, max_tokens: int | None) -> BudgetStatus:
        if max_tokens is None:
            return "not_set"
        return "met" if context.token_count_approx() <= max_tokens else "exhausted"

    @staticmethod
    def _outcome(
        before: Context,
        after: Context,
        span: tuple[int, int] | None,
        status: BudgetStatus,
    ) -> CompactionOutcome:
        result = CompactionResult(
            original_tokens=int(before.token_count()),
            compacted_tokens=int(after.token_count()),
            original_messages=len(before),
            compacted_messages=len(after),
            compacted_range=span,
            summarised_range=span,  # the compactor only summarises: its span is a summary's
            budget_status=status,
            engine="frame",
        )
        return CompactionOutcome(context=after, result=result)
