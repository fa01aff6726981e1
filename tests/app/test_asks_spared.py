"""The asks the ask bound drops anyway are not redacted: the bounded summary is unchanged.

``Compactor._bounded`` (prepare, then ``bound_asks``) with the asks spared against the same
with every ask redacted (``asks_certain_to_go`` replaced by one sparing none): equal, on
summaries whose old asks hold secrets before and after their first 40 characters, share
their first characters, differ only in a secret (so that only their redaction makes them
equal), or are cut by the text limit where a cut takes white space off their end.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forge_app.compaction._compactor as compactor_module
from forge_app.compaction._compactor import Compactor, prepared_summary
from forge_app.summary._ask_bound import asks_certain_to_go, bound_asks
from forge_app.summary.transformers import redaction_memo
from forge_app.summary.transformers._redact_secrets import prefix_kept
from forge_domain import Compact, Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem

_COMPACTOR = Compactor(Compact(), cwd="/repo")
_MAX_CHARS = 2_000
_NEWER = [
    f"Newer ask number {n} about the parser and its nested lists, token=a{n:07d}" for n in range(90)
]
"""Enough asks, after the old ones, for the bound to drop every old one (each with a secret
where it is not read to tell them apart: the newest stay, redacted)."""


def _summary(asks: list[str], *, narration: bool = True) -> ContextSummary:
    blocks = [SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="I read the code."),))]
    blocks = blocks if narration else []
    for ask in asks:
        blocks.append(SummaryBlock(role=Role.USER, contents=(TextItem(text=ask),)))
        if narration:
            blocks.append(SummaryBlock(role=Role.ASSISTANT, contents=(TextItem(text="Done."),)))
    return ContextSummary(blocks=tuple(blocks))


def _bounded(
    summary: ContextSummary, text_limit: int, *, memo: bool, max_chars: int = _MAX_CHARS
) -> ContextSummary:
    if memo:
        with redaction_memo():
            return _COMPACTOR._bounded(summary, text_limit, max_chars)
    return _COMPACTOR._bounded(summary, text_limit, max_chars)


def _every_ask_redacted(
    monkeypatch: pytest.MonkeyPatch, summary: ContextSummary, text_limit: int
) -> ContextSummary:
    with monkeypatch.context() as patch:
        patch.setattr(compactor_module, "asks_certain_to_go", lambda *_: [])
        return _bounded(summary, text_limit, memo=False)


def _spared(
    summary: ContextSummary, text_limit: int, max_chars: int = _MAX_CHARS
) -> list[TextItem]:
    prepared = _COMPACTOR._transform.unredacted(summary)
    final = _COMPACTOR._transform.assistant_text
    return asks_certain_to_go(prepared, final, prefix_kept(40), text_limit, max_chars)


PREFIX = "The parser fails on nested list"  # 31 characters
OLD_ASKS = [
    PREFIX + "s, please check it and then the token=abc12345 again",  # secret after 40
    PREFIX + "s, please check it and then the token=xyz98765 again",  # equal once redacted
    "token=abc12345 " + PREFIX,  # a secret in the first characters
    "token=xyz98765 " + PREFIX,  # equal once redacted
    PREFIX + "s and the cache invalidation as well, thanks",
    PREFIX + "s and the cache invalidation as well, thanks",  # said again
    PREFIX + "s and the cache invalidation as well, thanks!",  # the same first characters
    # cut by a limit of 60 where the cut takes the spaces back to the 31st character: once
    # redacted, both are 107 characters long (one marker), as they are only the second
    PREFIX + " " * 60 + "token=abcdefgh",
    PREFIX + "\t" * 60 + "x" * 16,
    "Retry logic: the password: hunter22 is wrong",
    "Docs: see https://bob:hunter2@github.com/x/y.git for the mirror",
    "Newer ask number 89 about the parser and its nested lists, token=b0000000",  # said again
    "Cache invalidation in the loader is wrong again, see the note on token=abc12345 there",
]


@pytest.mark.parametrize("text_limit", [40, 60, 2_000])
@pytest.mark.parametrize("memo", [False, True])
def test_spared_asks_leave_the_bounded_summary_unchanged(monkeypatch, text_limit, memo):
    summary = _summary([*OLD_ASKS, *OLD_ASKS[::-1], *_NEWER])

    spared = _bounded(summary, text_limit, memo=memo)

    assert spared == _every_ask_redacted(monkeypatch, summary, text_limit)
    assert _spared(summary, text_limit)  # some asks were left unredacted


@pytest.mark.parametrize("max_chars", range(1_000, 3_000, 71))
def test_the_asks_spared_are_the_bound_drops_and_no_kept_one(monkeypatch, max_chars):
    summary = _summary([*OLD_ASKS, *_NEWER])
    with monkeypatch.context() as patch:
        patch.setattr(compactor_module, "asks_certain_to_go", lambda *_: [])
        expected = _bounded(summary, 2_000, memo=False, max_chars=max_chars)
    kept = {item.text.split(", token")[0] for block in expected.blocks for item in block.contents}

    spared = _spared(summary, 2_000, max_chars)

    assert {item.text.split(", token")[0] for item in spared} & kept == set()
    assert _bounded(summary, 2_000, memo=False, max_chars=max_chars) == expected


def test_the_old_asks_are_counted_as_the_bound_counts_them(monkeypatch):
    summary = _summary([*OLD_ASKS, *_NEWER])

    bounded = _bounded(summary, 60, memo=False)

    notes = [i for b in bounded.blocks for i in b.contents if isinstance(i, TextItem) and i.omitted]
    assert dict(notes[0].omitted)["repeated_ask"] == 5  # word for word, redacted (3), cut


def test_asks_equal_only_once_redacted_are_not_spared():
    spared = _spared(_summary([*OLD_ASKS, *_NEWER]), 2_000)

    # The others share their first characters, hold a secret in them, or end them with
    # white space a cut may take.
    assert {item.text for item in spared} & set(OLD_ASKS) == {OLD_ASKS[-1]}


def test_asks_the_bound_keeps_after_all_are_redacted(monkeypatch):
    # No assistant text to drop and no note: the bound leaves the summary to the fit.
    secret = "Please check the parser and the nested lists again, as before; token=abc12345"
    summary = _summary([secret, *_NEWER], narration=False)
    assert secret in {item.text for item in _spared(summary, 2_000)}
    prepared = prepared_summary(summary, _COMPACTOR._transform)
    assert bound_asks(prepared, _COMPACTOR._frame.render, _MAX_CHARS) is prepared

    bounded = _bounded(summary, 2_000, memo=False)

    assert bounded == prepared
    assert "abc12345" not in str(bounded.model_dump())


_PIECES = st.sampled_from(
    [
        PREFIX,
        PREFIX + "s",
        "token=abc12345",
        "token=xyz98765",
        "password: hunter22",
        "sk-abcdefghijklmnopqrstuvwx",
        " and the docs",
        " " * 30,
        "\t" * 25,
        "x" * 30,
        "tokenizer",
        "caf\u00e9 ",
    ]
)


@given(
    asks=st.lists(st.lists(_PIECES, min_size=1, max_size=6).map("".join), max_size=40),
    text_limit=st.sampled_from([40, 50, 70, 2_000]),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_spared_asks_never_change_the_bounded_summary(asks, text_limit):
    summary = _summary([*asks, *_NEWER])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compactor_module, "asks_certain_to_go", lambda *_: [])
        expected = _bounded(summary, text_limit, memo=False)

    assert _bounded(summary, text_limit, memo=True) == expected
