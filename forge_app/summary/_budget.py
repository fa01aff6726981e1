"""Keeping a summary's texts within a size: cut long texts visibly, cap the assistant's own.

* :func:`truncate_text` cuts one text, marking the cut (a text cut before is cut again,
  its marker counting both cuts);
* :func:`limit_texts` cuts any text over a limit, and long shell commands, marking the cut;
* :func:`drop_oldest_narration` caps the assistant's own texts, dropping the oldest and
  counting them in the omission note (:mod:`forge_app.summary._omission`).

Fitting a whole rendered frame to a size is :func:`forge_app.summary._fit_summary.fit_summary`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import cast

from forge_app.summary._omission import Position, without_items
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem
from forge_domain.summary._summary import OmittedKind
from forge_domain.tools import ShellTool

__all__ = [
    "COMMAND_LIMIT",
    "TRUNCATION_MARKER",
    "drop_oldest_narration",
    "limit_texts",
    "truncate_text",
]  # narration_certain_to_go: for the compactor (prepared_summary)


TRUNCATION_MARKER = "… [truncated {count} chars]"
"""Appended where a text was cut; ``{count}`` is the number of characters removed."""
COMMAND_LIMIT = 400
"""Characters kept of a shell command in a summary (heredocs and scripts can run to pages)."""
MIN_TEXT_LIMIT = 40
"""Characters of a text kept however hard a summary is squeezed."""
SHORT_COMMAND = 64
"""Characters kept of a failed call's command when a summary is squeezed (its start names it)."""

_MARKED = re.compile(r" … \[truncated (\d+) chars\]$")
"""A text that :func:`truncate_text` cut: its marker and the number it counts."""


def truncate_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, the cut marked visibly; ``text`` itself
    when the marker would make it no shorter (a 57-character ask cut at 40 came out 63).

    A text cut before is cut again from its kept part, its marker counting both cuts (a
    summary folded into the next one is cut again, never marked twice).
    """
    if len(text) <= limit:
        return text
    cut = cut_marked(*unmarked(text), limit)
    return cut if len(cut) < len(text) else text


def unmarked(text: str) -> tuple[str, int]:
    """``text`` without the marker of an earlier cut, and the characters it counts (0)."""
    earlier = _MARKED.search(text) if text.endswith(" chars]") else None
    if earlier is None:
        return text, 0
    return text[: earlier.start()], int(earlier.group(1))


def cut_marked(text: str, removed: int, limit: int) -> str:
    """``text`` (``removed`` characters cut from it before) cut to ``limit``, marked."""
    if len(text) <= limit:
        return text + " " + TRUNCATION_MARKER.format(count=removed)
    removed += len(text) - limit
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
    """Return ``summary`` with texts cut to ``limit`` chars, commands to ``COMMAND_LIMIT``
    (texts never below ``MIN_TEXT_LIMIT``: a summary with no text gives its caller a
    longest text of 0; commands never below ``SHORT_COMMAND``: ``cd /repo && `` alone
    names nothing, and a failure is found by its command)."""
    limit = max(limit, MIN_TEXT_LIMIT)
    command_limit = max(min(limit, COMMAND_LIMIT), SHORT_COMMAND)
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


# -- dropping the oldest narration, with one note -------------------------------------------


def narration_texts(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """The assistant's own texts (omission notes aside), oldest first."""
    for block_index, block in enumerate(summary.blocks):
        if block.role != Role.ASSISTANT:
            continue
        for item_index, item in enumerate(block.contents):
            if isinstance(item, TextItem) and not item.is_omission:
                yield (block_index, item_index), item


def drop_oldest_narration(summary: ContextSummary, budget: int) -> ContextSummary:
    """Drop the oldest assistant texts until their total fits ``budget`` characters.

    Tool-call lines and user texts are kept; the omission note, where the first
    dropped text was, counts them (with whatever earlier notes counted).
    """
    narration = list(narration_texts(summary))
    excess = sum(len(item.text) for _, item in narration) - budget
    drops: dict[Position, OmittedKind] = {}
    for position, item in narration:
        if excess <= 0:
            break
        drops[position] = "narration"
        excess -= len(item.text)
    return without_items(summary, drops)


def narration_certain_to_go(
    summary: ContextSummary, final: Callable[[str], str], limit: int, budget: int
) -> list[TextItem]:
    """The assistant texts of ``summary`` that :func:`drop_oldest_narration` of it, once
    transformed and cut to ``limit`` (:func:`limit_texts`), drops whatever they read then:
    those older than the newest one it drops. ``final`` is what the transformers make of
    a text (redacted or not); it is asked of the newest texts only.

    :func:`drop_oldest_narration` keeps the longest run of newest texts whose lengths add up
    to ``budget`` at most (it drops the oldest while the rest is over), so which texts go is
    read off the newest texts' final lengths alone, and the older ones' texts may be left
    as they are (not redacted) by the steps before it: nothing between reads an assistant
    text (the transformers fold user texts, merge tool lines, strip paths from tool lines).
    """
    narration = list(narration_texts(summary))
    kept = narration_kept((item.text for _, item in reversed(narration)), final, limit, budget)
    if kept == len(narration):
        return []
    index = len(narration) - 1 - kept  # the newest that goes: the older ones go too
    going = {id(item): item for _, item in narration[:index]}
    if going:  # an item object also standing where it stays is read there
        going_at = {position for position, _ in narration[:index]}
        for block_index, block in enumerate(summary.blocks):
            for item_index, item in enumerate(block.contents):
                if id(item) in going and (block_index, item_index) not in going_at:
                    del going[id(item)]
    return list(going.values())


def narration_kept(
    newest_first: Iterable[str], final: Callable[[str], str], limit: int, budget: int
) -> int:
    """How many of the assistant texts ``newest_first`` :func:`drop_oldest_narration`
    keeps once they are transformed by ``final`` and cut to ``limit`` (as
    :func:`limit_texts` cuts them): the longest run of newest texts whose final lengths
    add up to ``budget`` at most. ``final`` is asked of those texts and of the newest
    one that goes, no older one (the count of all the texts when none goes)."""
    limit = max(limit, MIN_TEXT_LIMIT)  # as limit_texts reads it
    kept = 0
    total = 0
    for text in newest_first:
        total += len(truncate_text(final(text), limit))
        if total > budget:
            return kept
        kept += 1
    return kept
