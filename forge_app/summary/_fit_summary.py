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
from collections.abc import Callable
from itertools import accumulate, islice
from typing import cast

from forge_app.summary._budget import MIN_TEXT_LIMIT, cut_marked, unmarked
from forge_app.summary._fit_cuts import (
    Change,
    asks_limited,
    cuts_applied,
    estimate,
    fit_candidates,
    shows_error,
    user_texts,
)
from forge_app.summary._omission import Position, without_items
from forge_domain.summary import ContextSummary, ToolCallItem

__all__: list[str] = []  # internal: used by the compactor and the LLM engine

_ATTEMPTS = 4
"""Renders that correct an estimated cut before the hardest cut is taken."""
_SPARE = 0.05
"""Share of the limit a fitted frame may leave unused without another render."""
_NOTE_CHARS = 160
"""About what the omission note adds to a rendered frame."""


def _ask_limit(summary: ContextSummary, needed: int) -> int:
    """The largest limit on the user's texts that saves ``needed`` characters (at least
    ``MIN_TEXT_LIMIT``)."""
    # Longest first: a text no longer than a limit saves nothing, and the sum stops there.
    texts = sorted((item.text for _, item in user_texts(summary)), key=len, reverse=True)
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
    taken = 0
    for _, size, _ in candidates:
        if needed <= 0:
            break
        needed -= size
        taken += 1
    shrunk = cuts_applied(summary, islice(candidates, taken))
    if needed <= 0:
        return shrunk, False
    limit = _ask_limit(shrunk, needed)
    return asks_limited(shrunk, limit), limit == MIN_TEXT_LIMIT


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
        return shows_error(item)
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
    fitted, text = _search(summary, len(text), fit_candidates(summary), render, max_chars)
    if len(text) <= max_chars:
        return fitted, text
    asks = [(position, estimate(item), "ask") for position, item in user_texts(fitted)]
    if not asks:
        return fitted, text
    candidates = cast(list[tuple[Position, int, Change]], asks)
    return _search(fitted, len(text), candidates, render, max_chars)
