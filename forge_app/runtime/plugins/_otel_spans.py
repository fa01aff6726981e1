"""The OpenTelemetry side of a compaction: its span, its summary call's span, its metrics.

Imported only when telemetry is enabled (:func:`forge_app.enable_telemetry`, an agent's
``telemetry.enabled``, ``--otel``): nothing else in the package imports OpenTelemetry.

Names follow the OpenTelemetry semantic conventions for generative AI where they apply
(the summary call is a ``chat`` span with ``gen_ai.*`` attributes and the
``gen_ai.client.token.usage`` histogram); everything else is ours, under ``forge_compact.``.
Each attribute is named once, in :data:`ATTRIBUTES` (README "OpenTelemetry").
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from forge_app.summary._redaction import redact
from forge_domain import CompactionMode, CompactionResult, Usage, tracing
from forge_domain._trace import Tier, TraceEvent, TraceValue

__all__: list[str] = []  # loaded by forge_app.runtime._telemetry, on demand

SCOPE = "forge_compact"
"""Instrumentation scope (tracer and meter name) and attribute namespace."""
COMPACTION_SPAN = "forge_compact.compaction"
"""Name of the span of one compaction."""
PROVIDER = "openai"
"""``gen_ai.provider.name`` of the summary call (an OpenAI-compatible endpoint)."""

ATTRIBUTES: Mapping[str, str] = {
    "forge_compact.reason": "why it ran: threshold, preflight, window, context_length_exceeded",
    "forge_compact.mode": "how far it could go: automatic, forced or manual",
    "forge_compact.engine": "the engine whose output was kept (frame, llm, prune …)",
    "forge_compact.tier": "the tier that decided: prune, summary, fallback or cut",
    "forge_compact.tokens.before": "tokens of the context before",
    "forge_compact.tokens.after": "tokens after",
    "forge_compact.tokens.saved": "before minus after (0 when it grew)",
    "forge_compact.messages.before": "messages before",
    "forge_compact.messages.after": "messages after",
    "forge_compact.compacted_range": "[first, last] original index changed (absent: nothing)",
    "forge_compact.summarised_range": "[first, last] original index a summary replaced",
    "forge_compact.pruned_range": "[first, last] original index only pruned or cut in place",
    "forge_compact.budget_status": "whether compact.max_tokens was met: met, exceeded, not_set",
    "forge_compact.refs_archived": "refs under which the store archived the originals",
    "forge_compact.coverage": "share of the frame's facts an llm summary covered",
    "forge_compact.duration_s": "seconds the compaction took",
    "forge_compact.threshold": "the agent's threshold for the model's window",
}
"""Our attributes of a compaction span, and what each means."""


def _usage_attributes(usage: Usage | None) -> dict[str, TraceValue]:
    if usage is None:
        return {}
    return {
        "gen_ai.usage.input_tokens": int(usage.prompt_tokens),
        "gen_ai.usage.output_tokens": int(usage.completion_tokens),
    }


def result_attributes(result: CompactionResult) -> dict[str, TraceValue | Sequence[int]]:
    """The attributes a finished compaction's :class:`CompactionResult` sets."""
    attributes: dict[str, TraceValue | Sequence[int]] = {
        "forge_compact.engine": result.engine,
        "forge_compact.tokens.before": result.original_tokens,
        "forge_compact.tokens.after": result.compacted_tokens,
        "forge_compact.tokens.saved": max(0, result.original_tokens - result.compacted_tokens),
        "forge_compact.messages.before": result.original_messages,
        "forge_compact.messages.after": result.compacted_messages,
        "forge_compact.budget_status": result.budget_status,
    }
    if result.compacted_range is not None:
        attributes["forge_compact.compacted_range"] = list(result.compacted_range)
    if result.summarised_range is not None:
        attributes["forge_compact.summarised_range"] = list(result.summarised_range)
    if result.pruned_range is not None:
        attributes["forge_compact.pruned_range"] = list(result.pruned_range)
    if result.coverage is not None:
        attributes["forge_compact.coverage"] = result.coverage
    if result.summary_usage is not None:
        attributes |= _usage_attributes(result.summary_usage)
    return attributes


class Instruments:
    """The tracer and the metric instruments, shared by every conversation."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        *,
        include_prompts: bool = False,
    ) -> None:
        """Use the given providers (None: the global ones, as set by the application)."""
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.include_prompts = include_prompts
        """Whether summary prompts (redacted) are recorded on the summary call's span."""
        self.compactions = meter.create_counter(
            "forge_compact.compactions", "{compaction}", "Compactions, by engine and reason."
        )
        self.tokens_saved = meter.create_counter(
            "forge_compact.tokens_saved", "{token}", "Tokens removed by compactions."
        )
        self.duration = meter.create_histogram(
            "forge_compact.compaction.duration", "s", "How long compactions took."
        )
        self.summary_failures = meter.create_counter(
            "forge_compact.summary_call.failures",
            "{call}",
            "Summary calls that did not deliver (the frame was used instead).",
        )
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", "{token}", "Tokens used by summary calls."
        )

    def compaction(
        self,
        *,
        reason: str,
        mode: CompactionMode,
        engine: str,
        agent: str,
        conversation: str | None,
        threshold: int | None = None,
    ) -> CompactionSpan:
        """Start the span of a compaction, a child of the current span."""
        attributes: dict[str, TraceValue] = {
            "gen_ai.agent.name": agent,
            "forge_compact.reason": reason,
            "forge_compact.mode": mode,
            "forge_compact.engine": engine,
        }
        if conversation is not None:
            attributes["gen_ai.conversation.id"] = conversation
        if threshold is not None:
            attributes["forge_compact.threshold"] = threshold
        span = self.tracer.start_span(COMPACTION_SPAN, attributes=attributes)
        return CompactionSpan(self, span, reason=reason, engine=engine)


@dataclass
class SummaryCallSpan:
    """The span of one summary call (a :class:`forge_domain.SummaryCall`)."""

    instruments: Instruments
    span: Span
    model: str

    def _record_usage(self, usage: Usage | None) -> None:
        self.span.set_attributes(_usage_attributes(usage))
        if usage is None:
            return
        common = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": self.model,
        }
        for kind, value in (("input", usage.prompt_tokens), ("output", usage.completion_tokens)):
            self.instruments.token_usage.record(int(value), common | {"gen_ai.token.type": kind})

    def succeeded(self, usage: Usage | None) -> None:
        """The summary was usable."""
        self.span.set_attribute("forge_compact.summary.outcome", "ok")
        self._record_usage(usage)

    def failed(self, reason: str, usage: Usage | None = None) -> None:
        """The summary call did not deliver: error status, counted."""
        self.span.set_attributes(
            {
                "forge_compact.summary.outcome": "failed",
                "forge_compact.summary.failure": reason,
                "error.type": "summary_unavailable",
            }
        )
        self.span.set_status(Status(StatusCode.ERROR, reason))
        self._record_usage(usage)
        self.instruments.summary_failures.add(
            1, {"gen_ai.request.model": self.model, "error.type": "summary_unavailable"}
        )


class SpanTrace:
    """A :class:`forge_domain.CompactionTrace` that marks events on ``span`` (a turn's:
    what happens there outside a compaction, such as a cut to the window)."""

    def __init__(self, instruments: Instruments, span: Span) -> None:
        """Mark on ``span``."""
        self.instruments = instruments
        self.span = span
        self._active = ExitStack()

    def decided(self, tier: Tier) -> None:
        """Only a compaction has a tier."""

    def archived(self, refs: Sequence[str]) -> None:
        """Only a compaction archives."""

    def event(self, name: TraceEvent, attributes: Mapping[str, TraceValue]) -> None:
        """An event ``forge_compact.<name>`` with the attributes under our namespace."""
        self.span.add_event(
            f"forge_compact.{name}", {f"forge_compact.{k}": v for k, v in attributes.items()}
        )

    @contextmanager
    def summary_call(self, model: str, prompt: str) -> Iterator[SummaryCallSpan]:
        """A ``chat {model}`` client span, a child of this span."""
        attributes: dict[str, TraceValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": PROVIDER,
            "gen_ai.request.model": model,
        }
        if self.instruments.include_prompts:
            message = {"role": "user", "parts": [{"type": "text", "content": redact(prompt)}]}
            attributes["gen_ai.input.messages"] = json.dumps([message])
        parent = trace.set_span_in_context(self.span)
        span = self.instruments.tracer.start_span(
            f"chat {model}", context=parent, kind=SpanKind.CLIENT, attributes=attributes
        )
        try:
            yield SummaryCallSpan(self.instruments, span, model)
        finally:
            span.end()

    def activate(self) -> None:
        """Make the span current and this trace the one engines report to, until :meth:`end`."""
        token = otel_context.attach(trace.set_span_in_context(self.span))
        self._active.callback(otel_context.detach, token)
        self._active.enter_context(tracing(self))

    def end(self) -> None:
        """Undo :meth:`activate` and end the span."""
        self._active.close()
        self.span.end()


class CompactionSpan(SpanTrace):
    """The span of one compaction, and its :class:`forge_domain.CompactionTrace`."""

    def __init__(self, instruments: Instruments, span: Span, *, reason: str, engine: str) -> None:
        """Wrap ``span``, started now."""
        super().__init__(instruments, span)
        self._reason = reason
        self._engine = engine
        self._started = time.perf_counter()
        self._refs: list[str] = []

    def decided(self, tier: Tier) -> None:
        """The tier that decided."""
        self.span.set_attribute("forge_compact.tier", tier)

    def archived(self, refs: Sequence[str]) -> None:
        """The refs the store gave the archives."""
        self._refs.extend(refs)
        self.span.set_attribute("forge_compact.refs_archived", list(self._refs))

    def finish(self, result: CompactionResult) -> None:
        """Record ``result`` and the metrics."""
        duration = time.perf_counter() - self._started
        self.span.set_attributes(result_attributes(result))
        self.span.set_attribute("forge_compact.duration_s", duration)
        labels = {"forge_compact.engine": result.engine, "forge_compact.reason": self._reason}
        changed = result.compacted_range is not None
        self.instruments.compactions.add(1, labels | {"forge_compact.changed": changed})
        self.instruments.tokens_saved.add(
            max(0, result.original_tokens - result.compacted_tokens), labels
        )
        self.instruments.duration.record(duration, labels)

    def fail(self, error: BaseException) -> None:
        """Error status, the exception recorded, counted as a failed compaction."""
        duration = time.perf_counter() - self._started
        self.span.record_exception(error)
        self.span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        self.span.set_attribute("forge_compact.duration_s", duration)
        self.span.set_attribute("error.type", type(error).__name__)
        labels = {"forge_compact.engine": self._engine, "forge_compact.reason": self._reason}
        self.instruments.compactions.add(1, labels | {"error.type": type(error).__name__})
        self.instruments.duration.record(duration, labels | {"error.type": type(error).__name__})
