"""What a compaction tells whoever observes it: the seam telemetry plugs into.

An engine never knows whether anyone watches. It asks :func:`current_trace` and
tells the trace it gets, if any: which tier decided, that it fell back or cut,
and it runs its summary call inside :meth:`CompactionTrace.summary_call`. An
observer (the OpenTelemetry plugin) installs a trace for the duration of one
compaction with :func:`tracing`; without one every call here is a no-op, so
nothing is imported and nothing is measured.

Pure: a :class:`~contextvars.ContextVar` and protocols; no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Literal, Protocol, TypeAlias

from forge_domain._usage import Usage

__all__ = [
    "CompactionTrace",
    "SummaryCall",
    "current_trace",
    "note_archived",
    "note_event",
    "note_tier",
    "observe_summary_call",
    "tracing",
]

Tier = Literal["prune", "summary", "fallback", "cut"]
"""The tier whose output a tiered compaction returned (the last one that ran)."""
TraceEvent = Literal["fallback", "cut", "suspended"]
"""Something that happened during a compaction and is worth a mark in a trace."""
TraceValue: TypeAlias = str | int | float | bool
"""An attribute value a trace accepts."""


class SummaryCall(Protocol):
    """One call to a summary model, as observed."""

    def succeeded(self, usage: Usage | None) -> None:
        """The model delivered a usable summary; ``usage`` as it reported it."""

    def failed(self, reason: str, usage: Usage | None = None) -> None:
        """The model did not deliver (``reason``: timed out, HTTP 503, malformed …)."""


class CompactionTrace(Protocol):
    """The observer of one compaction."""

    def decided(self, tier: Tier) -> None:
        """``tier`` produced the compaction's output."""

    def event(self, name: TraceEvent, attributes: Mapping[str, TraceValue]) -> None:
        """Mark ``name`` with ``attributes`` (e.g. ``fallback`` with its reason)."""

    def archived(self, refs: Sequence[str]) -> None:
        """What the compaction replaced was archived under ``refs`` (``c3``, ``t7`` …)."""

    def summary_call(self, model: str, prompt: str) -> AbstractContextManager[SummaryCall]:
        """Observe the summary call to ``model`` with ``prompt`` that runs inside the block."""


_TRACE: ContextVar[CompactionTrace | None] = ContextVar("forge_compaction_trace", default=None)


def current_trace() -> CompactionTrace | None:
    """The trace of the compaction running in this context, if anyone observes it."""
    return _TRACE.get()


@contextmanager
def tracing(trace: CompactionTrace | None) -> Iterator[None]:
    """Make ``trace`` the current trace inside the block (None: nobody observes)."""
    token = _TRACE.set(trace)
    try:
        yield
    finally:
        _TRACE.reset(token)


class _Unobserved:
    """The summary call nobody observes."""

    def succeeded(self, usage: Usage | None) -> None:
        """Nothing to record."""

    def failed(self, reason: str, usage: Usage | None = None) -> None:
        """Nothing to record."""


def note_tier(tier: Tier) -> None:
    """Tell the current trace, if any, that ``tier`` decided."""
    trace = _TRACE.get()
    if trace is not None:
        trace.decided(tier)


def note_event(name: TraceEvent, attributes: Mapping[str, TraceValue]) -> None:
    """Tell the current trace, if any, that ``name`` happened."""
    trace = _TRACE.get()
    if trace is not None:
        trace.event(name, attributes)


def note_archived(refs: Sequence[str]) -> None:
    """Tell the current trace, if any, the refs a compaction's archives got."""
    trace = _TRACE.get()
    if trace is not None:
        trace.archived(refs)


def observe_summary_call(model: str, prompt: str) -> AbstractContextManager[SummaryCall]:
    """The current trace's observation of a summary call, or one that records nothing."""
    trace = _TRACE.get()
    if trace is None:
        return nullcontext(_Unobserved())
    return trace.summary_call(model, prompt)
