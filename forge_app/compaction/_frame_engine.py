"""The default context engine: deterministic frame summaries, no model, no network."""

from __future__ import annotations

from pathlib import Path
from typing import assert_never

from forge_app.compaction._compactor import Compactor
from forge_app.summary import SummaryFrame
from forge_domain import (
    Agent,
    BaseContextEngine,
    Compact,
    CompactionMode,
    CompactionOutcome,
    Context,
)
from forge_domain.tools import ToolCatalog


class FrameEngine(BaseContextEngine):
    """Compacts with the :class:`Compactor` when the agent's triggers fire.

    The token trigger uses the agent's safety threshold
    (:meth:`Agent.compaction_threshold`) for the current model's window; the
    compactor's summary budget derives from it too.
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
        self._cwd = cwd
        self._frame = SummaryFrame(template_dir)  # read once: never while compacting
        self._catalog = catalog if catalog is not None else agent.tool_catalog()
        super().__init__(agent, context_length=context_length)

    @property
    def compactor(self) -> Compactor:
        """The compactor doing the work (its config carries the effective threshold)."""
        return self._compactor

    def update_model(self, context_length: int | None) -> None:
        """Recompute the threshold, and the compactor that uses it, for this window."""
        super().update_model(context_length)
        self._compactor = self._compactor_for(self.compact)

    def _compactor_for(self, compact: Compact) -> Compactor:
        return Compactor(compact, cwd=self._cwd, catalog=self._catalog, frame=self._frame)

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Compact ``context``: the automatic strategy, else the manual one. ``focus`` is ignored.

        Every mode uses the summary budget derived from the safety threshold
        (:meth:`Compact.summary_budget`), so a manual ``/compact`` is bounded too.
        """
        compactor = self._compactor
        match mode:
            case "automatic":
                return compactor.compact(context)
            case "forced" | "manual":
                return compactor.compact(context, compactor.forced_strategy())
            case _:
                assert_never(mode)
