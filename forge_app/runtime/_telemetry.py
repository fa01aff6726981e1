"""Turning OpenTelemetry on: :func:`enable_telemetry`, and which conversations it covers.

Telemetry is off unless enabled, by one call (:func:`enable_telemetry`, for every
agent of the process), by an agent's ``telemetry.enabled`` (YAML), or by ``--otel``
on ``run`` and ``replay``. Until then nothing imports OpenTelemetry: the ``otel``
extra (``opentelemetry-api`` and ``opentelemetry-sdk``) is needed only once it is on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from forge_app.errors import TelemetryUnavailable
from forge_domain import Agent, CompactionMode, CompactionResult, ContextEngine

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from forge_app.runtime.plugins._otel import OpenTelemetryPlugin
    from forge_app.runtime.plugins._otel_spans import Instruments

__all__ = ["disable_telemetry", "enable_telemetry"]  # the rest: for the adapters and the cli

Finish = Callable[[CompactionResult], None]
"""Records a compaction's result on its span (a no-op when telemetry is off)."""

_enabled: Instruments | None = None
"""The instruments every agent uses, once :func:`enable_telemetry` was called."""
_by_agent: dict[bool, Instruments] = {}
"""Instruments on the global providers for agents that enable telemetry themselves,
by their ``include_prompts``."""


def _instruments(
    tracer_provider: TracerProvider | None,
    meter_provider: MeterProvider | None,
    include_prompts: bool,
) -> Instruments:
    try:
        from forge_app.runtime.plugins._otel_spans import Instruments
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "opentelemetry":
            raise TelemetryUnavailable(exc.name) from exc
        raise
    return Instruments(tracer_provider, meter_provider, include_prompts=include_prompts)


def enable_telemetry(
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    *,
    include_prompts: bool = False,
) -> None:
    """Trace every compaction of this process with OpenTelemetry, and record its metrics.

    The providers default to the global ones (``opentelemetry.trace.set_tracer_provider``,
    as Logfire or an OTLP setup leave them). ``include_prompts`` records each summary
    prompt, redacted by the summary secret rules, on the summary call's span.

    Raises:
        TelemetryUnavailable: OpenTelemetry is not installed (the ``otel`` extra).
    """
    global _enabled
    _enabled = _instruments(tracer_provider, meter_provider, include_prompts)


def disable_telemetry() -> None:
    """Undo :func:`enable_telemetry` (agents that enable telemetry themselves still trace)."""
    global _enabled
    _enabled = None


def instruments_for(agent: Agent) -> Instruments | None:
    """The instruments ``agent``'s compactions are traced with; None when telemetry is off.

    Raises:
        TelemetryUnavailable: the agent enables telemetry but OpenTelemetry is not installed.
    """
    if _enabled is not None:
        return _enabled
    settings = agent.telemetry
    if not settings.enabled:
        return None
    found = _by_agent.get(settings.include_prompts)
    if found is None:
        found = _instruments(None, None, settings.include_prompts)
        _by_agent[settings.include_prompts] = found
    return found


def telemetry_plugin(agent: Agent) -> OpenTelemetryPlugin | None:
    """A fresh plugin for one conversation of ``agent``; None when telemetry is off."""
    instruments = instruments_for(agent)
    if instruments is None:
        return None
    from forge_app.runtime.plugins._otel import OpenTelemetryPlugin

    return OpenTelemetryPlugin(instruments)


def _ignore(result: CompactionResult) -> None:
    """Telemetry is off: nothing to record."""


@asynccontextmanager
async def observed_compaction(
    agent: Agent, engine: ContextEngine, *, reason: str, mode: CompactionMode
) -> AsyncIterator[Finish]:
    """A compaction span around the block, for code that compacts without the hooks (the
    adapters): a child of the current span (a framework's agent run), current meanwhile,
    failed when the block raises. The block calls what it gets with the result."""
    instruments = instruments_for(agent)
    if instruments is None:
        yield _ignore
        return
    span = instruments.compaction(
        reason=reason, mode=mode, engine=engine.name, agent=agent.id, conversation=None
    )
    span.activate()
    try:
        yield span.finish
    except BaseException as exc:
        span.fail(exc)
        raise
    finally:
        span.end()
