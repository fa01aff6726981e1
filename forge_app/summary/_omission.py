"""The omission note: what a summary's budget dropped, counted in one note.

Whatever a budget drops (:func:`forge_app.summary._budget.drop_oldest_narration`,
:func:`forge_app.summary._fit_summary.fit_summary`) is counted in one omission note (a
:class:`TextItem` with ``omitted``), put where the gap starts. The next compaction adds its
own drops to that note instead of writing a second one, so notes never pile up across folds.
"""

from __future__ import annotations

from collections.abc import Mapping

from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.summary._summary import OmittedKind

__all__ = ["OMISSION_NOTE"]


OMISSION_NOTE = "[omitted to keep this summary bounded: {what} from earlier in the session]"
"""The omission note; ``{what}`` counts what was left out (``14 commands, 3 assistant notes``)."""

_NOUNS: dict[OmittedKind, tuple[str, str]] = {
    "shell": ("command", "commands"),
    "file_read": ("read", "reads"),
    "search": ("search", "searches"),
    "sem_search": ("semantic search", "semantic searches"),
    "fetch": ("fetch", "fetches"),
    "followup": ("question", "questions"),
    "plan": ("plan", "plans"),
    "skill": ("skill", "skills"),
    "task": ("delegation", "delegations"),
    "mcp": ("MCP call", "MCP calls"),
    "generic": ("tool call", "tool calls"),
    "todo_write": ("task plan update", "task plan updates"),
    "todo_read": ("task plan read", "task plan reads"),
    "file_update": ("file update", "file updates"),
    "file_remove": ("file deletion", "file deletions"),
    "undo": ("undo", "undos"),
    "narration": ("assistant note", "assistant notes"),
    "repeated_ask": ("repeated user ask", "repeated user asks"),
    "ask": ("user ask", "user asks"),
}
"""How the note names each kind, in the order it lists them."""

Position = tuple[int, int]
"""Where an item is: (block index, item index)."""


def _count(counts: dict[OmittedKind, int], item: SummaryItem, kind: OmittedKind) -> None:
    """Add what ``item``, dropped as ``kind``, stands for to ``counts``."""
    if isinstance(item, ToolCallItem):
        counts[item.tool.kind] = counts.get(item.tool.kind, 0) + item.calls
    elif item.is_omission:
        for what, count in item.omitted:
            counts[what] = counts.get(what, 0) + count
    else:
        counts[kind] = counts.get(kind, 0) + 1


def omission_note(counts: dict[OmittedKind, int]) -> TextItem:
    """The note saying what was left out, listing kinds in the order of ``_NOUNS``."""
    omitted = tuple((what, counts[what]) for what in _NOUNS if counts.get(what))
    what = ", ".join(
        f"{count} {singular if count == 1 else plural}"
        for (singular, plural), count in ((_NOUNS[kind], count) for kind, count in omitted)
    )
    return TextItem(text=OMISSION_NOTE.format(what=what), omitted=omitted)


def _is_note(item: SummaryItem) -> bool:
    return type(item) is TextItem and bool(item.omitted)  # (isinstance: slower, no subclass)


_EMPTIED: dict[Role, SummaryBlock] = {}
"""An empty block per role: what a block whose every item went leaves in its place (one
model, not a copy per block; :meth:`ContextSummary.of_blocks` leaves empty blocks out)."""


def _emptied(role: Role) -> SummaryBlock:
    block = _EMPTIED.get(role)
    if block is None:
        block = _EMPTIED[role] = SummaryBlock(role=role, contents=())
    return block


def without_items(
    summary: ContextSummary,
    drops: Mapping[Position, OmittedKind],
    replaced: Mapping[Position, SummaryItem] | None = None,
) -> ContextSummary:
    """``summary`` without the items at ``drops`` (and with those at ``replaced`` replaced);
    the dropped items and every earlier note are counted in one note, put where the first
    of them in an assistant block was (if all were user texts, in an assistant block of
    its own before the first)."""
    if not drops and not replaced:
        notes = (i for b in summary.blocks for i in b.contents if _is_note(i))
        if next(notes, None) is None or next(notes, None) is None:  # at most one note
            return summary
    replaced = replaced or {}
    touched = {block_index for block_index, _ in drops} | {b for b, _ in replaced}
    counts: dict[OmittedKind, int] = {}
    first_block: int | None = None
    note_at: Position | None = None  # in the new blocks
    note_block: list[SummaryItem] = []  # the items kept of the block the note goes into
    blocks: list[SummaryBlock] = []
    for block_index, block in enumerate(summary.blocks):
        if block_index not in touched and not any(map(_is_note, block.contents)):
            blocks.append(block)  # nothing to drop, replace or count: kept as it is
            continue
        contents: list[SummaryItem] = []
        for item_index, item in enumerate(block.contents):
            kind = drops.get((block_index, item_index))
            if kind is not None or _is_note(item):
                if kind is not None and type(item) is TextItem and not item.omitted:
                    counts[kind] = counts.get(kind, 0) + 1  # most drops: one text, counted once
                else:
                    _count(counts, item, kind or "narration")
                first_block = block_index if first_block is None else first_block
                if note_at is None and block.role == Role.ASSISTANT:
                    note_at = (block_index, len(contents))
                continue
            contents.append(replaced.get((block_index, item_index), item))
        if note_at is not None and note_at[0] == block_index:
            note_block = contents
        if not contents:
            blocks.append(_emptied(block.role))
            continue
        changed = len(contents) != len(block.contents) or any(
            new is not old for new, old in zip(contents, block.contents, strict=True)
        )
        blocks.append(block.model_copy(update={"contents": tuple(contents)}) if changed else block)
    if counts:
        note = omission_note(counts)
        if note_at is not None:
            block_index, item_index = note_at
            note_block.insert(item_index, note)
            blocks[block_index] = summary.blocks[block_index].model_copy(
                update={"contents": tuple(note_block)}
            )
        elif first_block is not None:
            blocks.insert(first_block, SummaryBlock(role=Role.ASSISTANT, contents=(note,)))
    return ContextSummary.of_blocks(blocks)
