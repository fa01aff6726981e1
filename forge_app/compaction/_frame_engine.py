"""The default context engine: deterministic frame summaries, no model, no network."""

from __future__ import annotations

from pathlib import Path

from forge_app.compaction._compactor import Compactor
from forge_domain.agent import Agent
from forge_domain.context import Context
from forge_domain.json import JsonObject
from forge_domain.result import CompactionOutcome
from forge_domain.tool_catalog import ToolCatalog
from forge_domain.usage import TokenCount, Usage


class FrameEngine:
    """Compacts with the :class:`Compactor` when the agent's triggers fire.

    The token trigger uses the agent's safety threshold
    (:meth:`Agent.compaction_threshold`) for the current model's window.
    """

    name = "frame"

    def __init__(
        self,
        agent: Agent,
        *,
        cwd: str | None = None,
        template_dir: Path | None = None,
        catalog: ToolCatalog | None = None,
        context_length: int | None = None,
    ) -> None:
        """Prepare the engine for ``agent``; ``context_length`` is the model's window if known."""
        self._agent = agent
        self._cwd = cwd
        self._template_dir = template_dir
        self._catalog = catalog if catalog is not None else agent.tool_catalog()
        self.last_usage: Usage | None = None
        self.update_model(context_length)

    @property
    def threshold(self) -> int:
        """The token count at which automatic compaction fires."""
        return self._threshold

    @property
    def compactor(self) -> Compactor:
        """The compactor doing the work (its config carries the effective threshold)."""
        return self._compactor

    def update_model(self, context_length: int | None) -> None:
        """Recompute the threshold for a model with this window."""
        self._threshold = self._agent.compaction_threshold(context_length)
        compact = self._agent.compact.model_copy(update={"token_threshold": self._threshold})
        self._compactor = Compactor(
            compact, cwd=self._cwd, template_dir=self._template_dir, catalog=self._catalog
        )

    def update_from_response(self, usage: Usage) -> None:
        """Remember the latest usage report (the context carries it too)."""
        self.last_usage = usage

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        """Any of the agent's triggers fires (tokens against the safety threshold)."""
        return self._compactor.config.should_compact(context, token_count)

    def should_compress_preflight(self, context: Context) -> bool:
        """The context is already at or over the threshold before a request."""
        return int(context.token_count()) >= self._threshold

    async def compress(
        self, context: Context, *, focus: str | None = None, force: bool = False
    ) -> CompactionOutcome:
        """Compact ``context``; ``force`` uses the manual strategy. ``focus`` is ignored."""
        strategy = self._compactor.forced_strategy() if force else None
        return self._compactor.compact(context, strategy)

    def on_session_start(self, session_id: str) -> None:
        """Nothing to prepare."""

    def on_session_end(self, session_id: str) -> None:
        """Nothing to release."""

    def on_session_reset(self) -> None:
        """Forget the last usage report."""
        self.last_usage = None

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """The frame engine offers no tools."""
        return ()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """The frame engine offers no tools, so every call is refused."""
        raise NotImplementedError(f"the frame engine has no tool {name!r}")
