"""Keeping a summary within a size: cut long texts visibly, drop the oldest detail with a note.

From gentle to hard:

* :func:`limit_texts` cuts any text over a limit, and long shell commands, marking the cut;
* :func:`drop_oldest_narration` caps the assistant's own texts, dropping the oldest;
* :func:`fit_summary` makes the rendered frame fit a number of characters: it drops the
  oldest assistant texts, then the oldest tool lines that changed no file, then user
  asks repeated later word for word, then cuts user asks shorter and shorter. Every
  distinct user ask and every line that changed a file stays.

Whatever is dropped is counted in one omission note (a :class:`TextItem` with
``omitted``), put where the gap starts. The next compaction adds its own drops to that
note instead of writing a second one, so notes never pile up across folds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterator
from typing import cast

from pydantic import BaseModel

from forge_domain.messages import Role
from forge_domain.summary import (
    ContextSummary,
    OmittedKind,
    SummaryBlock,
    SummaryItem,
    TextItem,
    ToolCallItem,
)
from forge_domain.summary_tools import FILE_CHANGING_KINDS, ShellTool

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
OMISSION_NOTE = "[omitted to keep this summary bounded: {what} from earlier in the session]"
"""The omission note; ``{what}`` counts what was left out (``14 commands, 3 assistant notes``)."""
MIN_TEXT_LIMIT = 40
"""Characters of a text kept however hard a summary is squeezed."""

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
}
"""How the note names each kind, in the order it lists them."""
_KEPT_KINDS = FILE_CHANGING_KINDS
"""Tool lines that changed a file: a budget never drops them."""
_ATTEMPTS = 4
"""Renders that correct an estimated cut before the hardest cut is taken."""
_SPARE = 0.05
"""Share of the limit a fitted frame may leave unused without another render."""
_NOTE_CHARS = 160
"""About what the omission note adds to a rendered frame."""
_TEXT_CHARS = 10
"""About what the frame adds around a text (its fence and line breaks)."""
_LINE_CHARS = 16
"""About what the frame adds around a tool line (label, code span, status)."""

Position = tuple[int, int]
"""Where an item is: (block index, item index)."""


def truncate_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, the cut marked visibly."""
    if len(text) <= limit:
        return text
    removed = len(text) - limit
    return text[:limit].rstrip() + " " + TRUNCATION_MARKER.format(count=removed)


def _too_long(item: SummaryItem, limit: int, command_limit: int) -> bool:
    """True for a text over ``limit`` characters or a shell command over ``command_limit``."""
    if isinstance(item, TextItem):
        return len(item.text) > limit and not item.is_omission
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


# -- dropping, with one note ---------------------------------------------------------------


def _narration(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """The assistant's own texts (omission notes aside), oldest first."""
    for block_index, block in enumerate(summary.blocks):
        if block.role != Role.ASSISTANT:
            continue
        for item_index, item in enumerate(block.contents):
            if isinstance(item, TextItem) and not item.is_omission:
                yield (block_index, item_index), item


def _detail_lines(summary: ContextSummary) -> Iterator[tuple[Position, ToolCallItem]]:
    """Tool lines that changed no file, oldest first."""
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if isinstance(item, ToolCallItem) and item.tool.kind not in _KEPT_KINDS:
                yield (block_index, item_index), item


def _repeated_asks(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """User texts said again later word for word, oldest first (the last saying is not)."""
    asks = [
        ((block_index, item_index), item)
        for block_index, block in enumerate(summary.blocks)
        if block.role == Role.USER
        for item_index, item in enumerate(block.contents)
        if isinstance(item, TextItem) and not item.is_omission
    ]
    last = {item.text: position for position, item in asks}
    for position, item in asks:
        if last[item.text] != position:
            yield position, item


def _count(counts: dict[OmittedKind, int], item: SummaryItem, role: Role) -> None:
    """Add what ``item``, written by ``role``, stands for to ``counts``."""
    if isinstance(item, ToolCallItem):
        counts[item.tool.kind] = counts.get(item.tool.kind, 0) + item.calls
    elif item.is_omission:
        for what, count in item.omitted:
            counts[what] = counts.get(what, 0) + count
    else:
        text: OmittedKind = "repeated_ask" if role == Role.USER else "narration"
        counts[text] = counts.get(text, 0) + 1


def omission_note(counts: dict[OmittedKind, int]) -> TextItem:
    """The note saying what was left out, listing kinds in the order of ``_NOUNS``."""
    omitted = tuple((what, counts[what]) for what in _NOUNS if counts.get(what))
    what = ", ".join(
        f"{count} {singular if count == 1 else plural}"
        for (singular, plural), count in ((_NOUNS[kind], count) for kind, count in omitted)
    )
    return TextItem(text=OMISSION_NOTE.format(what=what), omitted=omitted)


def _without(summary: ContextSummary, drops: Collection[Position]) -> ContextSummary:
    """``summary`` without the items at ``drops``; they and every earlier note are counted
    in one note, put where the first of them in an assistant block was (if all were user
    texts, in an assistant block of its own before the first)."""
    notes = sum(
        isinstance(i, TextItem) and i.is_omission for b in summary.blocks for i in b.contents
    )
    if not drops and notes <= 1:
        return summary
    counts: dict[OmittedKind, int] = {}
    first_block: int | None = None
    note_at: Position | None = None  # in the new blocks
    kept: list[list[SummaryItem]] = []
    for block_index, block in enumerate(summary.blocks):
        contents: list[SummaryItem] = []
        for item_index, item in enumerate(block.contents):
            if (block_index, item_index) in drops or (
                isinstance(item, TextItem) and item.is_omission
            ):
                _count(counts, item, block.role)
                first_block = block_index if first_block is None else first_block
                if note_at is None and block.role == Role.ASSISTANT:
                    note_at = (block_index, len(contents))
                continue
            contents.append(item)
        kept.append(contents)
    blocks = [
        block
        if len(contents) == len(block.contents)
        else SummaryBlock(role=block.role, contents=tuple(contents))
        for block, contents in zip(summary.blocks, kept, strict=True)
    ]
    note = omission_note(counts)
    if note_at is not None:
        block_index, item_index = note_at
        contents = kept[block_index]
        contents.insert(item_index, note)
        blocks[block_index] = SummaryBlock(role=Role.ASSISTANT, contents=tuple(contents))
    elif first_block is not None:
        blocks.insert(first_block, SummaryBlock(role=Role.ASSISTANT, contents=(note,)))
    return ContextSummary.of_blocks(blocks)


def drop_oldest_narration(summary: ContextSummary, budget: int) -> ContextSummary:
    """Drop the oldest assistant texts until their total fits ``budget`` characters.

    Tool-call lines and user texts are kept; the omission note, where the first
    dropped text was, counts them (with whatever earlier notes counted).
    """
    excess = sum(len(item.text) for _, item in _narration(summary)) - budget
    drops: set[Position] = set()
    for position, item in _narration(summary):
        if excess <= 0:
            break
        drops.add(position)
        excess -= len(item.text)
    return _without(summary, drops)


# -- fitting a rendered size ---------------------------------------------------------------


def _chars(value: object) -> int:
    """The characters of the strings in a tool (the ``kind`` tag aside), about what it shows."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, tuple):
        return sum(_chars(part) + _TEXT_CHARS for part in value)
    if isinstance(value, BaseModel):
        return sum(_chars(v) for name, v in value.__dict__.items() if name != "kind")
    return 0


def _estimate(item: SummaryItem) -> int:
    """About how many characters ``item`` adds to a rendered frame."""
    if isinstance(item, TextItem):
        return len(item.text) + _TEXT_CHARS
    return _chars(item.tool) + _LINE_CHARS + (_LINE_CHARS if item.earlier else 0)


def _cut_ask(item: SummaryItem, limit: int) -> SummaryItem:
    """A user text cut to ``limit`` characters, unless the marker would make it no shorter."""
    if not isinstance(item, TextItem) or item.is_omission:
        return item
    cut = truncate_text(item.text, limit)
    return item.model_copy(update={"text": cut}) if len(cut) < len(item.text) else item


def _asks_limited(summary: ContextSummary, limit: int) -> ContextSummary:
    """``summary`` with the user's texts cut to ``limit`` characters where that shortens them."""
    blocks = tuple(
        SummaryBlock(
            role=block.role, contents=tuple(_cut_ask(item, limit) for item in block.contents)
        )
        if block.role == Role.USER
        else block
        for block in summary.blocks
    )
    return summary.model_copy(update={"blocks": blocks})


def _ask_limit(summary: ContextSummary, needed: int) -> int:
    """The largest limit on the user's texts that saves ``needed`` characters (at least
    ``MIN_TEXT_LIMIT``)."""
    asks = [
        item.text
        for block in summary.blocks
        if block.role == Role.USER
        for item in block.contents
        if isinstance(item, TextItem) and not item.is_omission
    ]

    def saved(limit: int) -> int:
        return sum(max(0, len(text) - len(truncate_text(text, limit))) for text in asks)

    low, high = MIN_TEXT_LIMIT, max(map(len, asks), default=MIN_TEXT_LIMIT)
    while low < high:  # saved() falls as the limit grows: find the last limit that saves enough
        middle = (low + high + 1) // 2
        if saved(middle) >= needed:
            low = middle
        else:
            high = middle - 1
    return low


def _shrunk(
    summary: ContextSummary, candidates: list[tuple[Position, int]], needed: int
) -> tuple[ContextSummary, bool]:
    """``summary`` with the first ``candidates`` dropped until about ``needed`` characters
    are saved, then the user's texts cut for what is still missing; and whether that is
    the hardest cut (every candidate dropped, every long text cut to the minimum)."""
    drops: set[Position] = set()
    for position, size in candidates:
        if needed <= 0:
            break
        drops.add(position)
        needed -= size
    shrunk = _without(summary, drops)
    if needed <= 0:
        return shrunk, False
    limit = _ask_limit(shrunk, needed)
    return _asks_limited(shrunk, limit), limit == MIN_TEXT_LIMIT


def fit_summary(
    summary: ContextSummary, render: Callable[[ContextSummary], str], max_chars: int
) -> tuple[ContextSummary, str]:
    """``summary`` and its rendering by ``render``, within ``max_chars`` when that is possible.

    Over the limit, the oldest assistant texts go first, then the oldest tool lines
    that changed no file, then user texts repeated later, then the user's texts are
    cut (as little as does it); what was dropped is counted in the omission note.
    Distinct user asks and file changes stay, so a summary of more of them than fit
    stays over.

    The cut is planned from estimated sizes, then rendered and checked. Estimates miss
    what the frame saves besides the items (headings of emptied blocks), so each render
    corrects the next plan by the ratio of what was saved to what was planned, within
    the cuts already known to be too small or enough; it stops once the frame fits with
    little room to spare, or after a few renders (then the hardest cut is taken if no
    plan fitted), or when the hardest cut is still over.
    """
    summary = _without(summary, ())  # earlier notes merged into one
    text = render(summary)
    full = len(text)
    if full <= max_chars:
        return summary, text
    candidates = [(position, _estimate(item)) for position, item in _narration(summary)]
    candidates += [(position, _estimate(item)) for position, item in _detail_lines(summary)]
    candidates += [(position, _estimate(item)) for position, item in _repeated_asks(summary)]
    floor = int(max_chars * (1 - _SPARE))  # a fit above this is close enough
    aim = full - (max_chars + floor) // 2  # what to save: the middle of that band
    needed = full - max_chars + _NOTE_CHARS
    too_little, enough = 0, sys.maxsize  # planned savings known to stay over / to fit
    best: tuple[ContextSummary, str] | None = None
    for _ in range(_ATTEMPTS):
        candidate, hardest = _shrunk(summary, candidates, needed)
        text = render(candidate)
        if len(text) <= max_chars:
            best, enough = (candidate, text), needed
            if len(text) >= floor:
                break
        elif hardest:
            return candidate, text  # over, with nothing left to drop or cut
        else:
            too_little = needed
        needed = min(max(needed * aim // max(full - len(text), 1), too_little + 1), enough - 1)
        if needed <= too_little:
            break  # nothing left between a cut too small and one that is enough
    if best is not None:
        return best
    candidate, _ = _shrunk(summary, candidates, sys.maxsize)
    return candidate, render(candidate)
