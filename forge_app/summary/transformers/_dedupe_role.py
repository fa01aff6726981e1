"""DedupeRole: fold a run of same-role blocks into one, dropping repeated items only.

forge keeps only the first item of the first block of a run, so a second prompt
or a correction sent straight after the first vanishes from the digest
(forge-spec §10 step 2, §16 item 9). Here every distinct item survives.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem


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
        run: list[SummaryBlock] = []
        for block in summary.blocks:
            if block.role != self.role:
                if run:
                    blocks.append(_folded(self.role, run))
                    run = []
                blocks.append(block)
                continue
            run.append(block)
        if run:
            blocks.append(_folded(self.role, run))
        return summary.model_copy(update={"blocks": tuple(blocks)})


def _folded(role: Role, run: list[SummaryBlock]) -> SummaryBlock:
    """One block of the run's distinct items, in order (the block itself when it is alone
    and has no repeats: the common case, a single message between two assistant turns)."""
    items: list[SummaryItem] = []
    seen: set[str] = set()  # one key per distinct item: a list scan made long runs quadratic
    for block in run:
        for item in block.contents:
            if isinstance(item, TextItem) and not item.omitted:
                key = item.text
            else:
                key = item.model_dump_json()
            if key not in seen:
                seen.add(key)
                items.append(item)
    if len(run) == 1 and len(items) == len(run[0].contents):
        return run[0]
    return SummaryBlock(role=role, contents=tuple(items))
