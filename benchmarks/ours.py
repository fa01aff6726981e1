"""Our side of the benchmark: the trigger check, the codec and the deterministic compactor."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.generator import Message
from forge_domain import (
    Agent,
    Compact,
    CompactionOutcome,
    CompactionStrategy,
    Context,
    ContextMessage,
    Role,
    TextMessage,
    Usage,
)


@dataclass(frozen=True)
class DefaultConfig:
    """The compaction config the agent runs with, and where it came from."""

    compact: Compact
    source: str


def default_config() -> DefaultConfig:
    """The default agent's Compact with its safety threshold filled in.

    Uses ``forge_app.files._agents.default_agent()`` when it exists, else a bare ``Agent``
    (same defaults: 128,000-token window, threshold at 70%).
    """
    try:
        agents = importlib.import_module("forge_app.files._agents")
        agent: Agent = agents.default_agent()
        source = "forge_app.files._agents.default_agent()"
    except (ImportError, AttributeError):
        agent = Agent(id="bench")
        source = "Agent(id='bench') (forge_app.files._agents.default_agent() not available)"
    agent = agent.with_compaction_threshold()
    return DefaultConfig(
        agent.compact, f"{source}, token_threshold={agent.compact.token_threshold}"
    )


def with_usage(messages: Sequence[ContextMessage], start_tokens: int) -> list[ContextMessage]:
    """Give every assistant message the usage a provider would report for it.

    ``prompt_tokens`` is the running size of the conversation before the message,
    so the context's token count is anchored on the newest response (as in an agent).
    """
    out: list[ContextMessage] = []
    running = start_tokens
    for message in messages:
        if isinstance(message, TextMessage) and message.role == Role.ASSISTANT:
            usage = Usage.reported(prompt_tokens=running, completion_tokens=message.approx_tokens)
            message = message.model_copy(update={"usage": usage})
        running += message.approx_tokens
        out.append(message)
    return out


@dataclass(frozen=True)
class TriggerSamples:
    """Per-call durations (seconds) measured while a session grows."""

    check: list[float]
    """``context.token_count()`` + ``compact.should_compact(context, count)``."""
    append: list[float]
    """``context.append(response)``."""
    context: Context
    """The session after the last append."""


def trigger_samples(
    base: Context, continuation: Sequence[ContextMessage], compact: Compact
) -> TriggerSamples:
    """Append each message of ``continuation`` in turn, then run the trigger check.

    This is how an agent calls it: after every new response, on the grown session.
    """
    clock = time.perf_counter_ns
    check: list[float] = []
    append: list[float] = []
    context = base
    fired = False
    for message in continuation:
        t0 = clock()
        context = context.append(message)
        t1 = clock()
        count = context.token_count()
        fired = compact.should_compact(context, count) or fired
        t2 = clock()
        append.append((t1 - t0) / 1e9)
        check.append((t2 - t1) / 1e9)
    return TriggerSamples(check, append, context)


Compact_ = Callable[[Context], CompactionOutcome]


def compactor(compact: Compact, *, forced: bool = False) -> Compact_ | None:
    """``Compactor(compact).compact`` (automatic or ``/compact`` strategy); None if absent."""
    try:
        module = importlib.import_module("forge_app.compaction._compactor")
    except ImportError:
        return None
    instance = module.Compactor(compact, cwd="/repo")
    strategy: CompactionStrategy | None = instance.forced_strategy() if forced else None

    def run(context: Context) -> CompactionOutcome:
        outcome: CompactionOutcome = instance.compact(context, strategy)
        return outcome

    return run


def round_trip(session: list[Message]) -> list[Message]:
    """``Context.from_openai`` then ``to_openai``."""
    return Context.from_openai(session).to_openai()  # type: ignore[return-value]
