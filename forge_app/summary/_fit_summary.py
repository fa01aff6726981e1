"""Fitting a rendered summary frame to a number of characters (:func:`fit_summary`).

From gentle to hard, :func:`fit_summary` drops the oldest assistant texts, then the oldest
tool lines that changed no file and showed no error, then user asks repeated later word for
word; then it shortens the commands of failed calls, drops the evidence of old failures,
then their lines; then it cuts user asks shorter and shorter, and only when even cut asks do
not fit, drops the oldest. Every line that changed a file stays, and so does the last error
(its line and its evidence). Whatever is dropped is counted in the one omission note
(:mod:`forge_app.summary._omission`).
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import cast

from pydantic import BaseModel

from forge_app.summary._budget import (
    MIN_TEXT_LIMIT,
    SHORT_COMMAND,
    cut_marked,
    narration_texts,
    truncate_text,
    unmarked,
)
from forge_app.summary._omission import Position, without_items
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.summary._summary import OmittedKind
from forge_domain.tools import (
    EARLIER_EVIDENCE,
    EVIDENCE_SEPARATOR,
    FILE_CHANGING_KINDS,
    ShellTool,
    evidence_runs,
)

__all__: list[str] = []  # internal: used by the compactor and the LLM engine

SHORT_EVIDENCE = 80
"""Characters kept of a failure's evidence when a summary is squeezed (its first part)."""

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

Change = OmittedKind | SummaryItem
"""What a plan does to an item: drop it (counted as that kind in the note) or replace it."""


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
        (position, _estimate(item), "narration") for position, item in narration_texts(summary)
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
    """A user text cut to ``limit`` characters (:func:`truncate_text`: only when shorter)."""
    if not isinstance(item, TextItem) or item.is_omission:
        return item
    cut = truncate_text(item.text, limit)
    return item if cut is item.text else item.model_copy(update={"text": cut})


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
    asks = [(len(text), *unmarked(text)) for text in texts]  # as truncate_text reads them

    def saved(limit: int) -> int:
        total = 0
        for length, text, removed in asks:
            if length <= limit:
                break
            total += max(0, length - len(cut_marked(text, removed, limit)))
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
    shrunk = without_items(summary, drops, replaced)
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
        return _least_fact_cut(summary, candidates, render, max_chars, (too_little, enough), best)
    candidate, _ = _shrunk(summary, candidates, sys.maxsize)
    return candidate, render(candidate)


def _is_fact_change(summary: ContextSummary, position: Position, change: Change) -> bool:
    """True when ``change`` leaves out or shortens a fact (an ask, a line that showed an
    error, its evidence); False for an assistant text, a plain tool line, a shortened
    command."""
    if change == "narration":
        return False
    if change in ("repeated_ask", "ask"):
        return True
    block_index, item_index = position
    item = summary.blocks[block_index].contents[item_index]
    if not isinstance(item, ToolCallItem):
        return True
    if isinstance(change, str):
        return _shows_error(item)
    return isinstance(change, ToolCallItem) and change.evidence != item.evidence


def _least_fact_cut(
    summary: ContextSummary,
    candidates: list[tuple[Position, int, Change]],
    render: Callable[[ContextSummary], str],
    max_chars: int,
    known: tuple[int, int],
    best: tuple[ContextSummary, str],
) -> tuple[ContextSummary, str]:
    """``best`` (a planned cut that fits), or a smaller one that fits when the candidates
    between ``known``'s cut that stayed over and ``best``'s leave out a fact.

    The search stops at a cut that fills the limit to within :data:`_SPARE`, planned from
    estimates; when the candidates inside that margin are asks or errors, which ones go
    would depend on how the estimates fell. Then the least number of candidates that fits
    is found render by render, between a cut that is over and one that fits, so a fact is
    never left out for want of a render: each probe is the count where the rendered length
    is estimated to meet the limit (read linearly between the two cuts' renders; before any
    cut is rendered over, back from the one that fits, twice as far each time), and a probe
    that does not halve the range is followed by one that does. Where a frame is shorter
    for every candidate more, this is the count halving alone finds, with fewer renders
    (a 50,000-message span: 4 instead of 10; ``tests/app/test_fit_least_cut.py``). Cuts
    that go on to the user's texts are left as found.
    """
    too_little, enough = known
    cumulative = list(accumulate(size for _, size, _ in candidates))
    if not cumulative or enough > cumulative[-1]:
        return best
    low = bisect_left(cumulative, too_little) + 1 if too_little > 0 else 0  # over
    high = bisect_left(cumulative, enough) + 1  # fits
    if not any(_is_fact_change(summary, p, c) for p, _, c in candidates[low:high]):
        return best
    high_chars, low_chars = len(best[1]), 0  # rendered at ``high``; at ``low`` (0: not yet)
    back = 2 * (max_chars - high_chars) + 1  # estimated chars to put back, past the edge
    halve = False
    while high - low > 1:
        at_high = cumulative[high - 1]
        if halve:
            middle = (low + high) // 2
        elif not low_chars:  # no cut rendered over yet: back from ``high``, further each time
            middle = bisect_left(cumulative, at_high - back) + 1
            back *= 2
        else:  # where the rendered length meets the limit, read linearly between the two
            at_low = cumulative[low - 1] if low else 0
            over = (low_chars - max_chars) * (at_high - at_low) // (low_chars - high_chars)
            middle = bisect_left(cumulative, at_low + over) + 1
        middle = min(max(middle, low + 1), high - 1)
        candidate, _ = _shrunk(summary, candidates, cumulative[middle - 1])
        text = render(candidate)
        width = high - low
        if len(text) <= max_chars:
            high, high_chars, best = middle, len(text), (candidate, text)
        else:
            low, low_chars = middle, len(text)
        halve = low_chars > 0 and not halve and high - low > width // 2
    return best


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
    summary = without_items(summary, {})  # earlier notes merged into one
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
