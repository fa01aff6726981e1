"""Choosing a context engine by name: built-ins and the ``forge.engines`` entry points.

An agent names its engine in ``compact.engine``. ``frame`` (deterministic, the
default) and ``llm`` are built in; any installed distribution can add more by
declaring an entry point in the ``forge.engines`` group whose object is a
factory (usually the engine class) called as ``factory(agent, **options)``::

    [project.entry-points."forge.engines"]
    dag = "my_package.engine:DagEngine"

Options a factory does not accept are not passed to it (so one set of options,
``cwd=…, client=…``, serves every engine). Built-ins cannot be replaced by a
plugin of the same name. Built-in engines run inside :class:`TieredEngine`
(prune first, fall back last); plugin engines are returned as they are, except
that one whose ``compress`` still takes ``force: bool`` (the protocol before
:data:`~forge_domain.CompactionMode`) is adapted to ``mode``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from importlib.metadata import EntryPoint, entry_points
from typing import cast

import structlog

from forge_app.compaction._frame_engine import FrameEngine
from forge_app.compaction._tiers import TieredEngine
from forge_app.compaction._triggers import BUILT_IN_ENGINES
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.errors import EngineFailed, EngineUnavailable, ForgeAppError, UnknownEngine
from forge_domain import (
    Agent,
    CompactionMode,
    CompactionOutcome,
    Context,
    ContextEngine,
    DelegatingEngine,
    ForgeDomainError,
)

__all__ = ["ENTRY_POINT_GROUP", "available_engines", "compress_with", "resolve_engine"]

ENTRY_POINT_GROUP = "forge.engines"
"""The entry-point group third-party engines register in."""

EngineFactory = Callable[..., ContextEngine]
"""Builds an engine: ``factory(agent, **options)``."""

_log = structlog.get_logger()


def _tiered(inner: EngineFactory) -> EngineFactory:
    def build(agent: Agent, **options: object) -> ContextEngine:
        return _call(partial(TieredEngine, _call(inner, agent, options)), agent, options)

    return build


_BUILT_IN_CLASSES: Mapping[str, type[ContextEngine]] = {
    engine.name: engine for engine in (FrameEngine, LLMEngine)
}
BUILT_IN: Mapping[str, EngineFactory] = {
    name: _tiered(_BUILT_IN_CLASSES[name]) for name in BUILT_IN_ENGINES
}
"""The engines that ship with forge-compact, by the names of ``BUILT_IN_ENGINES`` (which the
CLI reads without importing the engines), each the engine class of that ``name``."""


def _accepted(factory: EngineFactory, options: Mapping[str, object]) -> dict[str, object]:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: pass everything
        return dict(options)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return dict(options)
    names = {p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    return {key: value for key, value in options.items() if key in names}


def _call(factory: EngineFactory, agent: Agent, options: Mapping[str, object]) -> ContextEngine:
    return factory(agent, **_accepted(factory, options))


def _plugins() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry_point.name, entry_point)
    return found


def available_engines() -> tuple[str, ...]:
    """Every engine name that can be selected, sorted."""
    return tuple(sorted({*BUILT_IN, *_plugins()}))


def resolve_engine(agent: Agent, **options: object) -> ContextEngine:
    """Build the engine ``agent.compact.engine`` names.

    Raises:
        UnknownEngine: no built-in or installed engine has that name.
        EngineUnavailable: the plugin could not be loaded or did not build an engine.
    """
    name = agent.compact.engine
    built_in = BUILT_IN.get(name)
    if built_in is not None:
        return built_in(agent, **options)
    entry_point = _plugins().get(name)
    if entry_point is None:
        raise UnknownEngine(name, available_engines())
    try:
        factory = entry_point.load()
    except (ImportError, AttributeError) as exc:
        raise EngineUnavailable(name, f"cannot load {entry_point.value}: {exc}") from exc
    if not callable(factory):
        raise EngineUnavailable(name, f"{entry_point.value} is not callable")
    engine = _call(factory, agent, options)
    if not isinstance(engine, ContextEngine):
        raise EngineUnavailable(name, f"{entry_point.value} did not build a ContextEngine")
    if _takes_force_flag(engine):
        _log.warning(
            "engine_protocol_outdated", engine=name, hint="compress(mode=) replaces force="
        )
        return _ForceFlagEngine(engine)
    return engine


async def compress_with(
    engine: ContextEngine,
    context: Context,
    *,
    focus: str | None = None,
    mode: CompactionMode = "automatic",
) -> CompactionOutcome:
    """``engine.compress(context, ...)``, with an error outside the tree named for the engine.

    Raises:
        EngineFailed: the engine raised anything but a ``forge_app`` or ``forge_domain``
            error (a bug in its code: one line naming it instead of a traceback).
    """
    try:
        return await engine.compress(context, focus=focus, mode=mode)
    except (ForgeAppError, ForgeDomainError):
        raise
    except Exception as exc:  # an engine's own code, often a plugin's: named, not a traceback
        raise EngineFailed(engine.name, exc) from exc


def _takes_force_flag(engine: ContextEngine) -> bool:
    try:
        parameters = inspect.signature(engine.compress).parameters
    except (TypeError, ValueError):  # no signature to read: assume the current protocol
        return False
    return "force" in parameters and "mode" not in parameters


class _ForceFlagEngine(DelegatingEngine):
    """An engine whose ``compress`` takes ``force: bool``, adapted to ``mode``.

    Every mode but ``automatic`` is passed as ``force=True``. Plugins written
    against the first protocol keep working; drop this in the next major version.
    """

    def __init__(self, engine: ContextEngine) -> None:
        super().__init__(engine)
        self._compress = cast(Callable[..., Awaitable[CompactionOutcome]], engine.compress)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        return await self._compress(context, focus=focus, force=mode != "automatic")
