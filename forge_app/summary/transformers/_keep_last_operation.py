"""KeepLastOperation: per resource, keep the last call, without letting a failure hide a success.

forge's ``TrimContextSummary`` collapses only *adjacent* calls on one resource, treats
reads, writes and removals of a path as one resource, ignores success, and merges
todo writes so that earlier diffs are lost (forge-spec §10 step 3, §16 item 10).
Here, inside each assistant block:

* a call is superseded by a *later* call with the same operation key anywhere in the
  block (text in between does not matter);
* the key is the kind plus what a reader of the summary sees: a read and a write of
  one file are different operations, so an update is never hidden by a later read;
* when the last call on a key failed, the last *successful* call on that key is kept
  too, so the summary still shows what worked;
* ``todo_write`` calls are never merged: each carries its own diff;
* a superseded call is not forgotten: the next kept call on its key counts it among
  its ``earlier`` calls (and ``earlier_failures``, when it failed).

:func:`aggregate_operations` goes further, for summaries that must stay small: one
line per operation key in the whole summary, at the last call's place, counting
every call it stands for (the compactor applies it after the transformers).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from operator import attrgetter
from typing import cast

from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, ToolCallItem
from forge_domain.tools import TOOL_KIND_TABLE, SummaryTool, ToolKindDefinition, merged_evidence

__all__ = [
    "KeepLastOperation",
]


def _key_of(definition: ToolKindDefinition) -> Callable[[SummaryTool], Hashable] | None:
    """How a kind's operation key is read: the kind plus every field a reader sees
    (``definition.shown``); None for a kind whose calls are never merged."""
    if not definition.is_mergeable:
        return None
    if not definition.shown:
        key = (definition.kind,)
        return lambda tool: key
    return attrgetter("kind", *definition.shown)


_KEYS: dict[str, Callable[[SummaryTool], Hashable]] = {
    row.kind: key_of for row in TOOL_KIND_TABLE if (key_of := _key_of(row)) is not None
}
"""Per kind of :data:`TOOL_KIND_TABLE`, how its operation key is read (``todo_write``: none)."""


def operation_key(tool: SummaryTool) -> Hashable | None:
    """What makes two calls "the same operation"; None for calls that are never merged.

    ``(kind, path)`` for file operations, ``(kind, command)`` for shell calls,
    ``(kind, name, arguments)`` for generic ones … (see ``_key_of``); a dict lookup on
    ``kind`` rather than a ``match`` over sixteen classes.
    """
    key = _KEYS.get(tool.kind)
    return None if key is None else key(tool)


@dataclass(slots=True)
class _Earlier:
    """The calls of one operation merged so far: what ``ToolCallItem.with_earlier``, folded
    over them, would give, without a line built per call.

    Merging ``n`` calls with ``with_earlier`` validates ``n - 1`` lines and keeps the last;
    this counts them and builds that line once (about 2,000 lines fewer per 5,000-message
    compaction). It repeats ``with_earlier``'s sums: ``tests/app/test_transform_fast_paths.py``
    checks it against the fold.
    """

    calls: int
    """How many calls the merged calls stand for (their ``ToolCallItem.calls``)."""
    failures: int
    """How many of those failed (their ``ToolCallItem.failures``)."""
    evidence: str | None
    """Their evidence, merged as ``with_earlier`` merges it (:func:`merged_evidence`)."""

    @classmethod
    def of(cls, item: ToolCallItem) -> _Earlier:
        """The calls ``item`` stands for."""
        return cls(item.calls, item.failures, item.evidence)

    def add(self, item: ToolCallItem) -> None:
        """Count in ``item``, a later call of the operation (``item.with_earlier(self)``)."""
        self.calls += item.calls
        self.failures += item.failures
        self.evidence = merged_evidence(item.evidence, self.evidence)


def keep_last_operations(contents: tuple[SummaryItem, ...]) -> tuple[SummaryItem, ...]:
    """``contents`` with superseded calls removed (see the module docstring)."""
    last: dict[Hashable, int] = {}
    last_success: dict[Hashable, int] = {}
    keys: list[Hashable | None] = [None] * len(contents)
    keyed = 0
    for index, item in enumerate(contents):
        if not isinstance(item, ToolCallItem):
            continue
        key_of = _KEYS.get(item.tool.kind)
        if key_of is None:
            continue
        key = keys[index] = key_of(item.tool)
        keyed += 1
        last[key] = index
        if item.is_success:
            last_success[key] = index
    if keyed == len(last):
        return contents  # no key repeats: nothing is superseded
    kept: list[SummaryItem] = []
    superseded: dict[Hashable, _Earlier] = {}  # per key, the calls since the last kept one
    for index, (item, key) in enumerate(zip(contents, keys, strict=True)):
        if key is None or not isinstance(item, ToolCallItem):
            kept.append(item)
            continue
        final = contents[last[key]]
        if index == last[key] or (
            index == last_success.get(key)
            and isinstance(final, ToolCallItem)
            and not final.is_success
        ):
            previous = superseded.pop(key, None)
            kept.append(item if previous is None else item.with_earlier(previous))
        else:
            previous = superseded.get(key)
            if previous is None:
                superseded[key] = _Earlier.of(item)
            else:
                previous.add(item)
    return tuple(kept)


def aggregate_operations(summary: ContextSummary, /) -> ContextSummary:
    """One tool-call line per operation key across ``summary``, at its last call's place.

    The line is the last call (its id and status) counting every earlier call on the
    key, and how many of them failed; lines that already stand for several calls (from
    an earlier compaction) add theirs. Texts and ``todo_write`` calls are never merged;
    blocks left empty are dropped and runs of one role's blocks joined.
    """
    keyed: list[tuple[int, int, Hashable]] = []  # every line with a key, in order
    last: dict[Hashable, tuple[int, int]] = {}
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if isinstance(item, ToolCallItem) and (key := operation_key(item.tool)) is not None:
                last[key] = (block_index, item_index)
                keyed.append((block_index, item_index, key))
    if len(keyed) == len(last):
        return summary  # no key repeats: nothing to merge
    # Only the blocks with a line merged away or merging earlier ones are built again.
    changes: dict[int, dict[int, ToolCallItem | None]] = {}  # per block: item -> new (None: gone)
    merged: dict[Hashable, _Earlier] = {}  # per key, the calls seen so far
    for block_index, item_index, key in keyed:
        item = cast(ToolCallItem, summary.blocks[block_index].contents[item_index])
        previous = merged.get(key)
        if last[key] == (block_index, item_index):
            if previous is not None:
                changes.setdefault(block_index, {})[item_index] = item.with_earlier(previous)
            continue
        changes.setdefault(block_index, {})[item_index] = None
        if previous is None:
            merged[key] = _Earlier.of(item)
        else:
            previous.add(item)
    blocks = list(summary.blocks)
    for block_index, changed in changes.items():
        block = blocks[block_index]
        contents = [changed.get(index, item) for index, item in enumerate(block.contents)]
        kept = tuple(item for item in contents if item is not None)
        blocks[block_index] = block.model_copy(update={"contents": kept})
    return ContextSummary.of_blocks(blocks)


@dataclass(frozen=True)
class KeepLastOperation:
    """In assistant blocks, keep the last call per operation (plus a success a failure followed)."""

    role: Role = Role.ASSISTANT
    """The role whose blocks are trimmed (forge trims only assistant blocks)."""

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary with superseded calls removed from ``role``'s blocks."""
        blocks = tuple(
            _trimmed(block) if block.role == self.role else block for block in summary.blocks
        )
        return summary.model_copy(update={"blocks": blocks})


def _trimmed(block: SummaryBlock) -> SummaryBlock:
    """``block`` with superseded calls removed; the block itself when none is."""
    if len(block.contents) < 2:  # nothing to supersede (most blocks of a bounded build)
        return block
    contents = keep_last_operations(block.contents)
    if len(contents) == len(block.contents):
        return block
    return block.model_copy(update={"contents": contents})
