"""Keeping a summary within a size: truncate long texts with a visible marker."""

from __future__ import annotations

from typing import cast

from forge_domain.messages import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem
from forge_domain.summary_tools import ShellTool

__all__ = [
    "COMMAND_LIMIT",
    "OMISSION_NOTE",
    "TRUNCATION_MARKER",
    "drop_oldest_narration",
    "limit_texts",
    "truncate_text",
]


TRUNCATION_MARKER = "… [truncated {count} chars]"
"""Appended where a text was cut; ``{count}`` is the number of characters removed."""
COMMAND_LIMIT = 400
"""Characters kept of a shell command in a summary (heredocs and scripts can run to pages)."""
OMISSION_NOTE = "[{count} earlier assistant notes omitted to keep this summary bounded]"
"""Put where the oldest assistant texts were dropped."""


def truncate_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, the cut marked visibly."""
    if len(text) <= limit:
        return text
    removed = len(text) - limit
    return text[:limit].rstrip() + " " + TRUNCATION_MARKER.format(count=removed)


def _too_long(item: SummaryItem, limit: int, command_limit: int) -> bool:
    """True for a text over ``limit`` characters or a shell command over ``command_limit``."""
    if isinstance(item, TextItem):
        return len(item.text) > limit
    return isinstance(item.tool, ShellTool) and len(item.tool.command) > command_limit


def _limited(item: SummaryItem, limit: int, command_limit: int) -> SummaryItem:
    if not _too_long(item, limit, command_limit):
        return item
    if isinstance(item, TextItem):
        return item.model_copy(update={"text": truncate_text(item.text, limit)})
    tool = cast(ShellTool, item.tool)
    command = truncate_text(tool.command, command_limit)
    return item.model_copy(update={"tool": tool.model_copy(update={"command": command})})


def limit_texts(summary: ContextSummary, limit: int) -> ContextSummary:
    """Return ``summary`` with texts cut to ``limit`` chars, commands to ``COMMAND_LIMIT``."""
    command_limit = min(limit, COMMAND_LIMIT)
    blocks = tuple(_limited_block(block, limit, command_limit) for block in summary.blocks)
    return summary.model_copy(update={"blocks": blocks})


def _limited_block(block: SummaryBlock, limit: int, command_limit: int) -> SummaryBlock:
    # Most blocks have nothing to cut: look before building anything.
    if not any(_too_long(item, limit, command_limit) for item in block.contents):
        return block  # the block is shared, not copied
    contents = tuple(_limited(item, limit, command_limit) for item in block.contents)
    return block.model_copy(update={"contents": contents})


def longest_text(summary: ContextSummary) -> int:
    """Length of the longest text item (0 when there is none)."""
    return max(
        (
            len(item.text)
            for block in summary.blocks
            for item in block.contents
            if isinstance(item, TextItem)
        ),
        default=0,
    )


def _narration_length(summary: ContextSummary) -> int:
    return sum(
        len(item.text)
        for block in summary.blocks
        if block.role == Role.ASSISTANT
        for item in block.contents
        if isinstance(item, TextItem)
    )


def drop_oldest_narration(summary: ContextSummary, budget: int) -> ContextSummary:
    """Drop the oldest assistant texts until their total fits ``budget`` characters.

    Tool-call lines and user texts are kept; a visible note at the place of the
    first dropped text says how many were left out.
    """
    excess = _narration_length(summary) - budget
    if excess <= 0:
        return summary
    dropped = 0
    blocks: list[SummaryBlock] = []
    note_at: int | None = None
    for block in summary.blocks:
        contents: list[SummaryItem] = []
        for item in block.contents:
            if excess > 0 and block.role == Role.ASSISTANT and isinstance(item, TextItem):
                excess -= len(item.text)
                dropped += 1
                if note_at is None:
                    note_at = len(blocks)
                continue
            contents.append(item)
        if len(contents) == len(block.contents):
            blocks.append(block)  # nothing dropped: the block is shared, not copied
        else:  # a subset of the block's own items: nothing to re-validate
            blocks.append(SummaryBlock.of_items(block.role, tuple(contents)))
    if note_at is not None:
        note = TextItem(text=OMISSION_NOTE.format(count=dropped))
        first = blocks[note_at]
        blocks[note_at] = first.model_copy(update={"contents": (note, *first.contents)})
    return summary.model_copy(update={"blocks": tuple(b for b in blocks if b.contents)})
