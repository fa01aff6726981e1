"""The fit's least cut that keeps the facts: the cut a bisection of the candidates finds.

``_least_fact_cut`` probes where the rendered length is estimated to meet the limit (and
halves when an estimate does not narrow the range), so it renders fewer cuts than halving
the candidates each time; these tests write that bisection out and check that both find
the same cut, on summaries whose fit goes through the search.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import accumulate

import pytest

from benchmarks.generator import generate_session
from forge_app.compaction._compactor import prepared_summary
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._build import build_summary
from forge_app.summary._fit_cuts import Change, fit_candidates
from forge_app.summary._fit_summary import (
    _is_fact_change,
    _least_fact_cut,
    _shrunk,
)
from forge_app.summary._frame import SummaryFrame
from forge_app.summary._omission import Position, without_items
from forge_app.summary.transformers import SummaryTransformer
from forge_domain.summary import ContextSummary
from forge_domain.tools import ToolCatalog

_FRAME = SummaryFrame()
_CATALOG = ToolCatalog.default()


def _prepared(size: int, seed: int) -> ContextSummary:
    data = json.dumps(generate_session(size, seed=seed)).encode()
    messages = list(parse_transcript(data, "generated.json").context)[:-20]
    built = build_summary(messages, _CATALOG)
    return without_items(prepared_summary(built, SummaryTransformer("/repo")), {})


_SUMMARIES = {(size, seed): _prepared(size, seed) for size, seed in ((600, 1), (1_500, 2))}


def _bisected(
    summary: ContextSummary,
    candidates: list[tuple[Position, int, Change]],
    render: Callable[[ContextSummary], str],
    max_chars: int,
    low: int,
    high: int,
) -> str:
    """The render of the fewest candidates in ``(low, high]`` that fits (``high`` fits),
    halving the range each time."""
    cumulative = list(accumulate(size for _, size, _ in candidates))
    best = render(_shrunk(summary, candidates, cumulative[high - 1])[0])
    while high - low > 1:
        middle = (low + high) // 2
        text = render(_shrunk(summary, candidates, cumulative[middle - 1])[0])
        if len(text) <= max_chars:
            high, best = middle, text
        else:
            low = middle
    return best


def _padded(summary: ContextSummary) -> str:
    """The frame padded by the square of its items over 20: a length that is not linear in
    what the candidates save (still shorter with each candidate), for the search's guesses
    to miss."""
    items = sum(len(block.contents) for block in summary.blocks)
    return _FRAME.render(summary) + " " * (items * items // 20)


_RENDERS = {"frame": _FRAME.render, "padded": _padded}


def _cut(
    summary: ContextSummary, candidates: list[tuple[Position, int, Change]], count: int
) -> ContextSummary:
    """The frame with the first ``count`` candidates applied."""
    cumulative = list(accumulate(size for _, size, _ in candidates))
    return _shrunk(summary, candidates, cumulative[count - 1] if count else 0)[0]


@pytest.mark.parametrize("share", [0.12, 0.2, 0.3, 0.45, 0.6, 0.75])
@pytest.mark.parametrize("fixture", sorted(_SUMMARIES))
@pytest.mark.parametrize("over_at", [0, 8])
@pytest.mark.parametrize("rendering", sorted(_RENDERS))
def test_least_fact_cut_is_the_bisection_s(
    fixture: tuple[int, int], share: float, over_at: int, rendering: str
) -> None:
    """From the cut of every candidate (it fits) and a cut known to be over (none applied,
    or the first eighth), the search returns the frame the bisection returns."""
    summary, render = _SUMMARIES[fixture], _RENDERS[rendering]
    max_chars = int(len(render(summary)) * share)
    candidates = fit_candidates(summary)
    cumulative = list(accumulate(size for _, size, _ in candidates))
    every = _shrunk(summary, candidates, cumulative[-1])[0]
    low = len(candidates) // over_at + 1 if over_at else 0
    too_little = cumulative[low - 2] + 1 if low else 0  # what _least_fact_cut reads as ``low``
    facts = [_is_fact_change(summary, p, c) for p, _, c in candidates[low:]]
    over = len(render(_cut(summary, candidates, low))) > max_chars
    fits = len(render(every)) <= max_chars
    assert (over, fits, any(facts)) == (True, True, True)  # a search that runs
    expected = _bisected(summary, candidates, render, max_chars, low, len(candidates))
    _, text = _least_fact_cut(
        summary,
        candidates,
        render,
        max_chars,
        (too_little, cumulative[-1]),
        (every, render(every)),
    )
    assert text == expected
