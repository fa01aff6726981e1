"""The contract every context engine fulfils (Hermes Agent's ``ContextEngine``, our shape).

An engine decides when a conversation must shrink and shrinks it. The default
engine ``frame`` is deterministic; ``llm`` asks a model for the summary; third
parties register more through the ``forge.engines`` entry-point group. Engines
may keep state per session (cooldowns, the previous summary); they never
mutate a :class:`Context` in place.

Two ways to write one:

- subclass :class:`BaseContextEngine`: set ``name`` and implement
  :meth:`~BaseContextEngine.compress`; every other member has a default (the
  agent's triggers against its safety threshold, no tools, nothing to do per
  session), so override only what the engine changes;
- or implement the whole :class:`ContextEngine` protocol on any class: the
  handler and the registry accept any object that has its members.

An engine that adds to another (archives its compactions, adapts an old
signature) subclasses :class:`DelegatingEngine`, which forwards every member
to the engine it wraps, and overrides what it adds.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

from forge_domain._agent import Agent
from forge_domain._choices import CompactionMode as _CompactionMode
from forge_domain._compact import Compact
from forge_domain._context import Context
from forge_domain._json import JsonObject
from forge_domain._result import BudgetStatus, CompactionOutcome, CompactionResult
from forge_domain._usage import TokenCount, Usage

CompactionMode = _CompactionMode
"""Why a compaction runs, and so how much it should do.

- ``automatic``: a trigger fired (the threshold, turns, messages); do what is
  enough, honouring cooldowns (the built-in engines may only prune);
- ``forced``: the context must shrink: it is over the model's window, the
  provider rejected it, or an automatic compaction just left it over the
  threshold; do more (the built-in engines keep only the retention window,
  ignore cooldowns, then shrink to the target);
- ``manual``: a person asked (``/compact``, ``forge-compact compact --force``):
  compact whatever the triggers say, keeping the head, one summary and the
  retention window, and nothing more.
"""


@runtime_checkable
class ContextEngine(Protocol):
    """Decides when to compact and performs the compaction."""

    name: str
    """The name agents use to select the engine (``compact.engine``)."""

    def update_model(self, context_length: int | None) -> None:
        """The model (and so its context window) changed; recompute thresholds."""

    def update_from_response(self, usage: Usage) -> None:
        """Record the usage a provider reported for the latest response."""

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        """Return True when ``context`` (of ``token_count`` tokens) must be compacted now."""

    def should_compress_preflight(self, context: Context) -> bool:
        """Cheap check before a request is sent: is the context already over the threshold?"""

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Compact ``context`` as ``mode`` asks; ``focus`` is a topic the summary should keep.

        Must either return a complete, provider-valid context or raise, leaving
        the input untouched.
        """

    def on_session_start(self, session_id: str) -> None:
        """A conversation begins."""

    def on_session_end(self, session_id: str) -> None:
        """A conversation ends."""

    def on_session_reset(self) -> None:
        """Forget per-session state (cooldowns, previous summaries)."""

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """OpenAI tool schemas the engine offers the model (empty for most engines)."""

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """Answer a call to one of :meth:`tool_schemas`."""


class BaseContextEngine(ABC):
    """A :class:`ContextEngine` with defaults: set ``name``, implement :meth:`compress`.

    Built for one agent (``factory(agent, **options)`` is how the registry calls
    an engine class). It keeps the agent's safety threshold for the current
    window (:meth:`Agent.compaction_threshold`) and, by default, compacts when
    any of the agent's triggers fires against it; it offers no tools, and the
    session hooks do nothing. A subclass that overrides :meth:`update_model`
    calls ``super().update_model(context_length)`` and sets the fields it reads
    before calling ``super().__init__`` (which calls it).
    """

    name: str
    """The name agents use to select the engine (``compact.engine``); set it on the class."""

    def __init__(self, agent: Agent, *, context_length: int | None = None) -> None:
        """Prepare the engine for ``agent``; ``context_length`` is the model's window if known."""
        self.agent = agent
        """The agent whose conversations are compacted."""
        self.update_model(context_length)

    def update_model(self, context_length: int | None) -> None:
        """Recompute :attr:`threshold` and :attr:`compact` for a model with this window."""
        self.threshold = self.agent.compaction_threshold(context_length)
        """The token count at which automatic compaction fires."""
        self.compact: Compact = self.agent.compact.model_copy(
            update={"token_threshold": self.threshold}
        )
        """The agent's ``compact`` settings with :attr:`threshold` as ``token_threshold``."""

    def update_from_response(self, usage: Usage) -> None:  # noqa: B027 (optional hook)
        """Nothing to record: the context carries the usage."""

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        """Any of the agent's triggers fires (tokens against :attr:`threshold`)."""
        return self.compact.should_compact(context, token_count)

    def should_compress_preflight(self, context: Context) -> bool:
        """The context is at or over :attr:`threshold` before a request."""
        return int(context.token_count()) >= self.threshold

    @abstractmethod
    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Compact ``context`` as ``mode`` asks (see :data:`CompactionMode`).

        Return :func:`compaction_outcome` of the input and the new context, or
        raise and leave the input untouched.
        """

    def on_session_start(self, session_id: str) -> None:  # noqa: B027 (optional hook)
        """Nothing to prepare."""

    def on_session_end(self, session_id: str) -> None:  # noqa: B027 (optional hook)
        """Nothing to release."""

    def on_session_reset(self) -> None:  # noqa: B027 (optional hook)
        """No per-session state to forget."""

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """No tools."""
        return ()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """No tools, so every call is refused."""
        raise NotImplementedError(f"the {self.name} engine has no tool {name!r}")


class DelegatingEngine:
    """A :class:`ContextEngine` that wraps another and forwards every member to it.

    Subclass it and override what the wrapper adds; :attr:`name` is the wrapped
    engine's, as the metrics report the engine that compacted.
    """

    def __init__(self, inner: ContextEngine) -> None:
        """Wrap ``inner``."""
        self.inner = inner
        """The wrapped engine."""
        self.name = inner.name

    def update_model(self, context_length: int | None) -> None:
        """Forwarded."""
        self.inner.update_model(context_length)

    def update_from_response(self, usage: Usage) -> None:
        """Forwarded."""
        self.inner.update_from_response(usage)

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        """Forwarded."""
        return self.inner.should_compress(context, token_count)

    def should_compress_preflight(self, context: Context) -> bool:
        """Forwarded."""
        return self.inner.should_compress_preflight(context)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Forwarded."""
        return await self.inner.compress(context, focus=focus, mode=mode)

    def on_session_start(self, session_id: str) -> None:
        """Forwarded."""
        self.inner.on_session_start(session_id)

    def on_session_end(self, session_id: str) -> None:
        """Forwarded."""
        self.inner.on_session_end(session_id)

    def on_session_reset(self) -> None:
        """Forwarded."""
        self.inner.on_session_reset()

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """Forwarded."""
        return self.inner.tool_schemas()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """Forwarded."""
        return await self.inner.handle_tool_call(name, arguments)

    async def aclose(self) -> None:
        """Release what the wrapped engine holds (see :func:`close_engine`)."""
        await close_engine(self.inner)


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


async def close_engine(engine: ContextEngine) -> None:
    """Release what ``engine`` holds (an HTTP client), when it has an ``aclose()``."""
    if isinstance(engine, _Closable):
        await engine.aclose()


def compaction_outcome(
    before: Context,
    after: Context,
    span: tuple[int, int] | None,
    *,
    engine: str,
    max_tokens: int | None = None,
    summary_usage: Usage | None = None,
    coverage: float | None = None,
    summarised: tuple[int, int] | None = None,
    pruned: tuple[int, int] | None = None,
) -> CompactionOutcome:
    """The outcome of compacting ``before`` into ``after`` by replacing ``span``.

    ``span`` is the inclusive range of ``before`` that was changed; when it is
    None nothing was, and the outcome holds ``before`` whatever ``after`` is.
    ``summarised`` and ``pruned`` split it (what a summary replaced, what was only
    pruned or cut); without either, the whole span was summarised.
    ``budget_status`` says whether the resulting context is within ``max_tokens``
    (``not_set`` without it). Sizes are :meth:`Context.token_count`.
    """
    kept = after if span is not None else before
    tokens = int(kept.token_count())
    status: BudgetStatus = "not_set"
    if max_tokens is not None:
        status = "met" if tokens <= max_tokens else "exhausted"
    result = CompactionResult(
        original_tokens=int(before.token_count()),
        compacted_tokens=tokens,
        original_messages=len(before),
        compacted_messages=len(kept),
        compacted_range=span,
        summarised_range=span if summarised is None and pruned is None else summarised,
        pruned_range=pruned,
        budget_status=status,
        engine=engine,
        summary_usage=summary_usage,
        coverage=coverage,
    )
    return CompactionOutcome(context=kept, result=result)
