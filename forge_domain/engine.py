"""The contract every context engine fulfils (Hermes Agent's ``ContextEngine``, our shape).

An engine decides when a conversation must shrink and shrinks it. The default
engine ``frame`` is deterministic; ``llm`` asks a model for the summary; third
parties register more through the ``forge.engines`` entry-point group. Engines
may keep state per session (cooldowns, the previous summary); they never
mutate a :class:`Context` in place.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from forge_domain.context import Context
from forge_domain.json import JsonObject
from forge_domain.result import CompactionOutcome
from forge_domain.usage import TokenCount, Usage


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
        self, context: Context, *, focus: str | None = None, force: bool = False
    ) -> CompactionOutcome:
        """Compact ``context``; ``force`` compacts even when no trigger fires.

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
