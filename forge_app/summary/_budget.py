"""Keeping a summary within a size: cut long texts visibly, drop the oldest detail with a note.

From gentle to hard:

* :func:`limit_texts` cuts any text over a limit, and long shell commands, marking the cut;
* :func:`drop_oldest_narration` caps the assistant's own texts, dropping the oldest;
* :func:`fit_summary` makes the rendered frame fit a number of characters: it drops the
  oldest assistant texts, then the oldest tool lines that changed no file and showed no
  error, then user asks repeated later word for word; then it shortens the commands of
  failed calls, drops the evidence of old failures, then their lines; then it cuts user
  asks shorter and shorter, and only when even cut asks do not fit, drops the oldest.
  Every line that changed a file stays, and so does the last error (its line and its
  evidence).

Whatever is dropped is counted in one omission note (a :class:`TextItem` with
``omitted``), put where the gap starts. The next compaction adds its own drops to that
note instead of writing a second one, so notes never pile up across folds.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping
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
from forge_domain.tool_outcome import EARLIER_EVIDENCE, EVIDENCE_SEPARATOR, evidence_runs

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
SHORT_COMMAND = 64
"""Characters kept of a failed call's command when a summary is squeezed (its start names it)."""
SHORT_EVIDENCE = 80
"""Characters kept of a failure's evidence when a summary is squeezed (its first part)."""

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

_MARKED = re.compile(r" … \[truncated (\d+) chars\]$")
"""A text that :func:`truncate_text` cut: its marker and the number it counts."""

Position = tuple[int, int]
"""Where an item is: (block index, item index)."""


def truncate_text(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, the cut marked visibly.

    A text cut before is cut again from its kept part, its marker counting both cuts (a
    summary folded into the next one is cut again, never marked twice).
    """
    if len(text) <= limit:
        return text
    return _cut(*_unmarked(text), limit)


def _unmarked(text: str) -> tuple[str, int]:
    """``text`` without the marker of an earlier cut, and the characters it counts (0)."""
    earlier = _MARKED.search(text) if text.endswith(" chars]") else None
    if earlier is None:
        return text, 0
    return text[: earlier.start()], int(earlier.group(1))


def _cut(text: str, removed: int, limit: int) -> str:
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


# -- dropping, with one note ---------------------------------------------------------------

Change = OmittedKind | SummaryItem
"""What a plan does to an item: drop it (counted as that kind in the note) or replace it."""


def _narration(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """The assistant's own texts (omission notes aside), oldest first."""
    for block_index, block in enumerate(summary.blocks):
        if block.role != Role.ASSISTANT:
            continue
        for item_index, item in enumerate(block.contents):
            if isinstance(item, TextItem) and not item.is_omission:
                yield (block_index, item_index), item


def _lines(summary: ContextSummary) -> Iterator[tuple[Position, ToolCallItem]]:
    """Every tool line, oldest first."""
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if isinstance(item, ToolCallItem):
                yield (block_index, item_index), item


def _shows_error(item: ToolCallItem) -> bool:
    """True for a line whose (last) call failed, or that keeps the evidence of an error."""
    return not item.is_success or item.evidence is not None


def _last_errors(summary: ContextSummary) -> set[Position]:
    """The last failed line and the last line with evidence: the budget keeps them whole."""
    failed = [position for position, item in _lines(summary) if not item.is_success]
    shown = [position for position, item in _lines(summary) if item.evidence is not None]
    return {*failed[-1:], *shown[-1:]}


def _user_texts(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """The user's texts (omission notes aside), oldest first."""
    for block_index, block in enumerate(summary.blocks):
        if block.role != Role.USER:
            continue
        for item_index, item in enumerate(block.contents):
            if isinstance(item, TextItem) and not item.is_omission:
                yield (block_index, item_index), item


def _repeated_asks(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """User texts said again later word for word, oldest first (the last saying is not)."""
    asks = list(_user_texts(summary))
    last = {item.text: position for position, item in asks}
    for position, item in asks:
        if last[item.text] != position:
            yield position, item


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
    return isinstance(item, TextItem) and item.is_omission


def _without(
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
    kept: dict[int, list[SummaryItem]] = {}  # the items of each block looked into
    blocks: list[SummaryBlock] = []
    for block_index, block in enumerate(summary.blocks):
        if block_index not in touched and not any(map(_is_note, block.contents)):
            blocks.append(block)  # nothing to drop, replace or count: kept as it is
            continue
        contents = kept[block_index] = []
        for item_index, item in enumerate(block.contents):
            kind = drops.get((block_index, item_index))
            if kind is not None or _is_note(item):
                _count(counts, item, kind or "narration")
                first_block = block_index if first_block is None else first_block
                if note_at is None and block.role == Role.ASSISTANT:
                    note_at = (block_index, len(contents))
                continue
            contents.append(replaced.get((block_index, item_index), item))
        changed = len(contents) != len(block.contents) or any(
            new is not old for new, old in zip(contents, block.contents, strict=True)
        )
        blocks.append(block.model_copy(update={"contents": tuple(contents)}) if changed else block)
    if counts:
        note = omission_note(counts)
        if note_at is not None:
            block_index, item_index = note_at
            contents = kept[block_index]
            contents.insert(item_index, note)
            blocks[block_index] = summary.blocks[block_index].model_copy(
                update={"contents": tuple(contents)}
            )
        elif first_block is not None:
            blocks.insert(first_block, SummaryBlock(role=Role.ASSISTANT, contents=(note,)))
    return ContextSummary.of_blocks(blocks)


def drop_oldest_narration(summary: ContextSummary, budget: int) -> ContextSummary:
    """Drop the oldest assistant texts until their total fits ``budget`` characters.

    Tool-call lines and user texts are kept; the omission note, where the first
    dropped text was, counts them (with whatever earlier notes counted).
    """
    excess = sum(len(item.text) for _, item in _narration(summary)) - budget
    drops: dict[Position, OmittedKind] = {}
    for position, item in _narration(summary):
        if excess <= 0:
            break
        drops[position] = "narration"
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
    evidence = len(item.evidence) + _TEXT_CHARS if item.evidence is not None else 0
    return _chars(item.tool) + _LINE_CHARS + (_LINE_CHARS if item.earlier else 0) + evidence


def _short_command(item: ToolCallItem) -> ToolCallItem:
    """``item`` with its shell command cut to ``SHORT_COMMAND`` characters, runs of white
    space folded first and ``…`` marking the cut (the start names a command; a
    here-document's text is on disk); the item itself when the command is not longer."""
    tool = item.tool
    if not isinstance(tool, ShellTool) or len(tool.command) <= SHORT_COMMAND + _LINE_CHARS:
        return item
    command = " ".join(tool.command.split())[:SHORT_COMMAND].rstrip() + " …"
    return item.model_copy(update={"tool": tool.model_copy(update={"command": command})})


def _error_line(run: str) -> str:
    """The first part of one failure's evidence (its error line), at most ``SHORT_EVIDENCE``
    characters."""
    first = run.split(EVIDENCE_SEPARATOR, 1)[0]
    return first if len(first) <= SHORT_EVIDENCE else first[: SHORT_EVIDENCE - 1] + "…"


def _short_evidence(item: ToolCallItem) -> ToolCallItem:
    """``item`` with the evidence of each failure it keeps cut to its error line (at most
    ``SHORT_EVIDENCE`` characters); the item itself when that is not shorter."""
    if item.evidence is None:
        return item
    cut = EARLIER_EVIDENCE.join(_error_line(run) for run in evidence_runs(item.evidence))
    return item.model_copy(update={"evidence": cut}) if len(cut) < len(item.evidence) else item


def _candidates(summary: ContextSummary) -> list[tuple[Position, int, Change]]:
    """What may go, in the order it goes, with about what each saves: the oldest assistant
    texts; long commands shortened; tool lines that changed no file and showed no error;
    repeated asks; the evidence of old errors shortened to its error line; then the lines
    of old errors that changed no file. The last error keeps its line and its evidence
    (its command only shortened)."""
    candidates: list[tuple[Position, int, Change]] = [
        (position, _estimate(item), "narration") for position, item in _narration(summary)
    ]
    current = dict(_lines(summary))
    kept = _last_errors(summary)
    for position, item in current.items():
        shorter = _short_command(item)
        if shorter is not item:
            candidates.append((position, _estimate(item) - _estimate(shorter), shorter))
            current[position] = shorter
    errors = {position: item for position, item in current.items() if _shows_error(item)}
    candidates += [
        (position, _estimate(item), item.tool.kind)
        for position, item in current.items()
        if position not in errors and item.tool.kind not in _KEPT_KINDS
    ]
    candidates += [
        (position, _estimate(item), "repeated_ask") for position, item in _repeated_asks(summary)
    ]
    old = {position: item for position, item in errors.items() if position not in kept}
    for position, item in old.items():
        shorter = _short_evidence(item)
        if shorter is not item:
            candidates.append((position, _estimate(item) - _estimate(shorter), shorter))
            old[position] = shorter
    candidates += [
        (position, _estimate(item), item.tool.kind)
        for position, item in old.items()
        if item.tool.kind not in _KEPT_KINDS
    ]
    return candidates


def _cut_ask(item: SummaryItem, limit: int) -> SummaryItem:
    """A user text cut to ``limit`` characters, unless the marker would make it no shorter."""
    if not isinstance(item, TextItem) or item.is_omission:
        return item
    cut = truncate_text(item.text, limit)
    return item.model_copy(update={"text": cut}) if len(cut) < len(item.text) else item


def _asks_limited(summary: ContextSummary, limit: int) -> ContextSummary:
    """``summary`` with the user's texts cut to ``limit`` characters where that shortens them."""
    blocks = tuple(
        _asks_cut(block, limit) if block.role == Role.USER else block for block in summary.blocks
    )
    return summary.model_copy(update={"blocks": blocks})


def _asks_cut(block: SummaryBlock, limit: int) -> SummaryBlock:
    contents = tuple(_cut_ask(item, limit) for item in block.contents)
    if all(new is old for new, old in zip(contents, block.contents, strict=True)):
        return block
    return block.model_copy(update={"contents": contents})


def _ask_limit(summary: ContextSummary, needed: int) -> int:
    """The largest limit on the user's texts that saves ``needed`` characters (at least
    ``MIN_TEXT_LIMIT``)."""
    # Longest first: a text no longer than a limit saves nothing, and the sum stops there.
    texts = sorted((item.text for _, item in _user_texts(summary)), key=len, reverse=True)
    asks = [(len(text), *_unmarked(text)) for text in texts]  # as truncate_text reads them

    def saved(limit: int) -> int:
        total = 0
        for length, text, removed in asks:
            if length <= limit:
                break
            total += max(0, length - len(_cut(text, removed, limit)))
        return total

    low, high = MIN_TEXT_LIMIT, asks[0][0] if asks else MIN_TEXT_LIMIT
    while low < high:  # saved() falls as the limit grows: find the last limit that saves enough
        middle = (low + high + 1) // 2
        if saved(middle) >= needed:
            low = middle
        else:
            high = middle - 1
    return low


def _shrunk(
    summary: ContextSummary, candidates: list[tuple[Position, int, Change]], needed: int
) -> tuple[ContextSummary, bool]:
    """``summary`` with the first ``candidates`` applied until about ``needed`` characters
    are saved, then the user's texts cut for what is still missing; and whether that is
    the hardest cut (every candidate applied, every long text cut to the minimum)."""
    drops: dict[Position, OmittedKind] = {}
    replaced: dict[Position, SummaryItem] = {}
    for position, size, change in candidates:
        if needed <= 0:
            break
        if isinstance(change, str):
            drops[position] = change
        else:
            replaced[position] = change
        needed -= size
    shrunk = _without(summary, drops, replaced)
    if needed <= 0:
        return shrunk, False
    limit = _ask_limit(shrunk, needed)
    return _asks_limited(shrunk, limit), limit == MIN_TEXT_LIMIT


def _search(
    summary: ContextSummary,
    full: int,
    candidates: list[tuple[Position, int, Change]],
    render: Callable[[ContextSummary], str],
    max_chars: int,
) -> tuple[ContextSummary, str]:
    """The least cut of ``summary`` (rendered at ``full`` chars) that fits ``max_chars``,
    planned from ``candidates`` and corrected render by render; the hardest cut if none
    fits (see :func:`fit_summary`)."""
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


def fit_summary(
    summary: ContextSummary, render: Callable[[ContextSummary], str], max_chars: int
) -> tuple[ContextSummary, str]:
    """``summary`` and its rendering by ``render``, within ``max_chars`` when that is possible.

    Over the limit, the oldest assistant texts go first, then the oldest tool lines
    that changed no file and showed no error, then user texts repeated later; then, of
    the lines that showed an error, long commands are shortened, the evidence of old
    ones dropped, then their lines; then the user's texts are cut (as little as does it).
    Only when even cut asks do not fit are the oldest asks dropped. Lines that changed a
    file and the last error stay. What was dropped is counted in the omission note.

    The cut is planned from estimated sizes, then rendered and checked. Estimates miss
    what the frame saves besides the items (headings of emptied blocks), so each render
    corrects the next plan by the ratio of what was saved to what was planned, within
    the cuts already known to be too small or enough; it stops once the frame fits with
    little room to spare, or after a few renders (then the hardest cut is taken if no
    plan fitted), or when the hardest cut is still over.
    """
    summary = _without(summary, {})  # earlier notes merged into one
    text = render(summary)
    if len(text) <= max_chars:
        return summary, text
    fitted, text = _search(summary, len(text), _candidates(summary), render, max_chars)
    if len(text) <= max_chars:
        return fitted, text
    asks = [(position, _estimate(item), "ask") for position, item in _user_texts(fitted)]
    if not asks:
        return fitted, text
    candidates = cast(list[tuple[Position, int, Change]], asks)
    return _search(fitted, len(text), candidates, render, max_chars)
