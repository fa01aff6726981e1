"""When a built-in engine would compact, known without building it.

``forge-compact compact`` of a transcript under the threshold must not import the
engines, the summary layer and its template engine only to learn that nothing fires
(start-up time, ``benchmarks/STARTUP.md``). The built-in engines run inside
:class:`~forge_app.compaction.TieredEngine`, which keeps :class:`BaseContextEngine`'s
triggers (the agent's, against its threshold); :class:`BuiltInTriggers` is that base with
no ``compress``. ``tests/app/test_cli_startup.py`` checks both answer alike.
"""

from __future__ import annotations

from typing import Final

from forge_domain import Agent, BaseContextEngine, CompactionMode, CompactionOutcome, Context

__all__: list[str] = []  # internal: BUILT_IN_ENGINES and BuiltInTriggers, for the registry and CLI

BUILT_IN_ENGINES: Final = ("frame", "llm")
"""The names of the built-in engines (``compact.engine``), which no plugin can replace."""


class BuiltInTriggers(BaseContextEngine):
    """The triggers of a built-in engine for ``agent``: it answers ``should_compress``
    (and the preflight check) only; it cannot compact."""

    def __init__(self, agent: Agent, *, context_length: int | None = None) -> None:
        """The triggers of the built-in engine ``agent.compact.engine`` names."""
        self.name = agent.compact.engine
        super().__init__(agent, context_length=context_length)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Not an engine: :func:`~forge_app.compaction.resolve_engine` builds the real one."""
        raise NotImplementedError("BuiltInTriggers only tells whether a built-in engine fires")
