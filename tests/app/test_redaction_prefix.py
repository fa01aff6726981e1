"""``keeps_prefix``: a cheap test that ``redact`` leaves a text's first characters as they are.

Every secret shape of the redaction tests (each rule's redacted forms, the realistic fakes),
put after every cut of a prefix and checked at every length: where ``keeps_prefix`` says
the first characters stay, ``redact`` keeps them. Cases name the ways it could be wrong (a
private key's block, which starts before its hint; a Stripe key, one character before its
hint; a long-s ``secret`` that only a case-folding pattern sees).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.summary._redaction import keeps_prefix, redact
from tests.app.secret_fakes import SECRET_FAKES
from tests.app.test_redaction import CASES, FORMS

SHAPES = sorted(
    {text for rows in FORMS.values() for text, expected in rows if expected}
    | {text for _, text, _ in SECRET_FAKES}
    | {text for _, text, expected in CASES if expected != text}
)
"""Texts that ``redact`` changes, one per shape it knows at least."""

PADS = ["", "x", "ab ", "see: ", "The parser fails on nested lists ", "\u00e9t\u00e9 "]


def test_a_case_folded_secret_word_is_redacted_far_from_any_hint():
    text = "\u017fecret=abc12345" + " " * 50 + "a token"

    assert (redact(text)[:8], keeps_prefix(text, 32)) == ("\u017fecret=[", False)


def test_every_shape_changes():
    assert all(redact(text) != text for text in SHAPES)


@pytest.mark.parametrize("text", SHAPES)
def test_a_kept_prefix_is_kept_for_every_shape_pad_and_length(text):
    wrong = [
        (pad, length)
        for pad in PADS
        for length in range(len(pad + text) + 2)
        if keeps_prefix(pad + text, length) and redact(pad + text)[:length] != (pad + text)[:length]
    ]

    assert wrong == []


@pytest.mark.parametrize(
    ("text", "length", "expected"),
    [
        ("plain words about the parser and its lists", 32, True),
        ("the tokenizer fails on nested lists, please check", 32, True),  # not a secret word
        ("the token fails on nested lists, please check", 32, False),
        ("x" * 40 + "token=abc", 32, False),  # within the reach after the prefix
        ("x" * 50 + "token=abc", 32, True),
        ("see -----BEGIN RSA PRIVATE KEY-----\nMIIEabc", 8, False),  # (its "--" too)
        ("a rk_live_0123456789abcdef", 2, False),  # the key starts one before its hint
        ("\u017fecret=abc12345" + " " * 50 + "a token", 32, False),  # not ASCII: case folding
        ("", 32, True),
    ],
)
def test_keeps_prefix_cases(text, length, expected):
    assert keeps_prefix(text, length) is expected


@given(
    pad=st.text(max_size=40),
    shape=st.sampled_from(SHAPES),
    after=st.text(max_size=20),
    length=st.integers(0, 80),
)
def test_keeps_prefix_is_never_wrong(pad, shape, after, length):
    text = pad + shape + after

    assert not keeps_prefix(text, length) or redact(text)[:length] == text[:length]
