"""Leaving out, before the fit, the user asks the fit is certain to drop (:func:`bound_asks`).

A chat of tens of thousands of user asks, summarised for a frame of a few thousand
tokens, keeps a few hundred of them: :func:`~forge_app.summary._fit_summary.fit_summary`
first applies every other cut (assistant texts, plain tool lines, repeated asks, old
errors), cuts the asks to ``MIN_TEXT_LIMIT`` characters, and only then drops the oldest
asks, the fewest that fit (found render by render). Each of those renders draws every ask.

When the newest asks alone, cut that short, are already over the limit, the older ones
are dropped whatever happens: :func:`bound_asks` applies the fit's hardest cut and drops
those asks itself, counted in the omission note as the fit counts them (``user asks``;
repeated ones were already ``repeated user asks``), so the fit draws a frame of the
newest asks only and drops the same ones after them. It checks by one render that what
it leaves is still over the limit even cut hardest (then the fit's result is the same:
the fit of the whole summary would reach that cut too); otherwise the summary is given
back as it was. What the fit cuts, and in which order, it reads from the fit's own
:mod:`~forge_app.summary._fit_cuts`.
"""

from __future__ import annotations

from collections.abc import Callable

from forge_app.summary._budget import MIN_TEXT_LIMIT, truncate_text
from forge_app.summary._fit_cuts import (
    TEXT_CHARS,
    asks_limited,
    cuts_applied,
    fit_candidates,
    user_texts,
)
from forge_domain import Role
from forge_domain.summary import ContextSummary, TextItem

__all__: list[str] = []  # internal: used by the compactor

KEPT_SHARE = 2
"""How many times the limit the newest asks kept add up to (cut short), at least."""
PREFIX = 32
"""Characters of an ask that tell it apart from the others without redacting it
(:func:`asks_certain_to_go`); fewer than ``MIN_TEXT_LIMIT``, so no cut reaches them."""


def bound_asks(
    summary: ContextSummary, render: Callable[[ContextSummary], str], max_chars: int
) -> ContextSummary:
    """``summary`` cut as :func:`fit_summary` would cut it anyway, without the oldest asks
    certain to be dropped (see the module); ``summary`` itself when none is certain."""
    reduced = cut_for(summary, KEPT_SHARE * max_chars)
    if reduced is None or len(render(asks_limited(reduced, MIN_TEXT_LIMIT))) <= max_chars:
        return summary  # the fit might keep a dropped ask: leave the choice to it
    return reduced


def cut_for(summary: ContextSummary, kept_chars: float) -> ContextSummary | None:
    """``summary`` with the fit's every cut but the asks' applied and the asks older than
    the newest ones adding up to over ``kept_chars`` (cut short) dropped, counted as the fit
    counts them; None when no ask is older, or when the note would go elsewhere than the
    fit puts it (where the first dropped ask was: no other note, no assistant item dropped).
    Not checked: :func:`bound_asks` checks it by a render."""
    said = list(user_texts(summary))
    last = {item.text: index for index, (_, item) in enumerate(said)}  # as _repeated_asks
    total = 0
    for index in range(len(said) - 1, -1, -1):  # newest first: the fit drops the oldest
        text = said[index][1].text
        if last[text] != index:
            continue  # said again later: a repeated ask, not one of the asks
        if total > kept_chars:
            break  # this ask and the older ones go
        total += len(truncate_text(text, MIN_TEXT_LIMIT)) + TEXT_CHARS
    else:
        return None  # every ask kept
    dropped = [said[i][0] for i in range(index + 1) if last[said[i][1].text] == i]
    candidates = fit_candidates(summary, said)
    has_note = any(
        isinstance(item, TextItem) and item.omitted
        for block in summary.blocks
        for item in block.contents
    )
    if not has_note and all(
        summary.blocks[b].role != Role.ASSISTANT or not isinstance(change, str)
        for (b, _), _, change in candidates
    ):
        return None
    return cuts_applied(summary, candidates, dict.fromkeys(dropped, "ask"))


def asks_certain_to_go(
    summary: ContextSummary,
    final: Callable[[str], str],
    kept: Callable[[str], bool],
    limit: int,
    max_chars: int,
) -> list[TextItem]:
    """User texts of ``summary`` (transformed, not yet redacted) that :func:`bound_asks`
    of it, once each text is made ``final`` (redacted) and cut to ``limit``
    (:func:`~forge_app.summary._budget.limit_texts`), drops as ``user asks`` whatever
    they read: so they need not be redacted (``prepared_summary`` spares them).

    The asks the bound keeps are read as it reads them (newest first, the last saying of
    each final text, until they pass ``KEPT_SHARE * max_chars`` cut short), their texts
    made final; older ones all go, as ``user asks`` or, said again later, as ``repeated
    user asks``. Which of the two is decided on final texts, so an older ask is left as
    it is only when its first :data:`PREFIX` characters are certain to stay in its final
    text and no other ask's final text starts with them: then its text, final or as it
    is, equals no other's, and every other ask reads as it would. They stay when
    ``kept(text)`` (the redaction leaves the first ``MIN_TEXT_LIMIT`` characters as they
    are and they are ASCII: :func:`~forge_app.summary._redaction.keeps_prefix`) and one of
    them from the ``PREFIX``-th on is not white space: a cut to ``limit``
    (``MIN_TEXT_LIMIT`` at least) takes white space off its end (``rstrip``) and a cut
    text's marker (`` …``) off before it is cut again, neither past that character. ``[]``
    when none goes (the bound then leaves the summary to the fit, every text redacted)."""
    said = [item for _, item in user_texts(summary)]
    limit = max(limit, MIN_TEXT_LIMIT)  # as limit_texts reads it
    kept_chars = KEPT_SHARE * max_chars
    keys: dict[str, int] = {}  # per first PREFIX characters of a final text, how many
    seen: set[str] = set()
    total = 0
    boundary = -1  # the newest ask that goes as a user ask: it and the older ones go
    for index in range(len(said) - 1, -1, -1):
        text = truncate_text(final(said[index].text), limit)
        if text not in seen:
            seen.add(text)
            if total > kept_chars:
                boundary = index
                break
            total += len(truncate_text(text, MIN_TEXT_LIMIT)) + TEXT_CHARS
        keys[text[:PREFIX]] = keys.get(text[:PREFIX], 0) + 1
    if boundary < 0:
        return []
    as_is: list[tuple[str, TextItem]] = []  # the older asks whose prefix stays, and it
    for item in said[: boundary + 1]:
        text = item.text
        if text[PREFIX - 1 : MIN_TEXT_LIMIT].strip() and kept(text):
            key = text[:PREFIX]
            as_is.append((key, item))
        else:
            key = truncate_text(final(text), limit)[:PREFIX]
        keys[key] = keys.get(key, 0) + 1
    # An item object standing elsewhere too (the same key, if as a user text; else as an
    # assistant's text, which the bound drops, every one) is left as it is there as well.
    return [item for key, item in as_is if keys[key] == 1]
