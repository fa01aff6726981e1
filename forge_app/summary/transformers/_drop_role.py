"""DropRole: remove every block of one role."""

from __future__ import annotations

from dataclasses import dataclass

from forge_domain import Role
from forge_domain.summary import ContextSummary


@dataclass(frozen=True)
class DropRole:
    """Drop the blocks written by ``role``; keep every other block unchanged and in order."""

    role: Role
    """The role whose blocks are removed."""

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary without ``role``'s blocks."""
        blocks = tuple(block for block in summary.blocks if block.role != self.role)
        return summary.model_copy(update={"blocks": blocks})
