"""DedupeRole: fold a run of same-role blocks into one, dropping repeated items only.

forge keeps only the first item of the first block of a run, so a second prompt
or a correction sent straight after the first vanishes from the digest
(forge-spec §10 step 2, §16 item 9). Here every distinct item survives.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge_domain.messages import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem


@dataclass(frozen=True)
class DedupeRole:
    """Merge each run of consecutive ``role`` blocks into one block.

    Inside a run, an item equal to an item already kept in that run is dropped;
    every distinct item is kept, in order. Blocks of other roles pass unchanged.
    """

    role: Role
    """The role whose runs are folded."""

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary with each run of ``role`` blocks folded into one block."""
        blocks: list[SummaryBlock] = []
        run: list[SummaryItem] = []
        for block in summary.blocks:
            if block.role != self.role:
                if run:
                    blocks.append(_block(self.role, run))
                    run = []
                blocks.append(block)
                continue
            run.extend(item for item in block.contents if item not in run)
        if run:
            blocks.append(_block(self.role, run))
        return summary.model_copy(update={"blocks": tuple(blocks)})


def _block(role: Role, items: list[SummaryItem]) -> SummaryBlock:
    # Items taken from validated blocks: nothing to re-validate.
    return SummaryBlock.model_construct(role=role, contents=tuple(items))
