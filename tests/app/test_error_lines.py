"""Error lines are one line and bounded, whatever the input put into them."""

from __future__ import annotations

import pytest

from forge_app.cli.console import MAX_ERROR_CHARS, one_line
from forge_domain import InvalidMessage
from forge_domain.formats import message_from_openai
from forge_domain.formats._carry import SHOWN_CHARS, shown

LINES = [
    ("plain", "s.json: no such file", "s.json: no such file"),
    ("newlines", "keys: a\nb\r\nc", "keys: a b c"),
    ("unicode-breaks", "a\u2028b\u0085c\x1cd", "a b c d"),
    ("control", "a\x00b\x1b[31mc", "a\\x00b\\x1b[31mc"),
    ("surrogate", "a\ud800b", "a\\ud800b"),
    ("tab", "a\tb", "a\\tb"),
]


@pytest.mark.parametrize(("message", "expected"), [c[1:] for c in LINES], ids=[c[0] for c in LINES])
def test_one_line_flattens_and_escapes(message, expected):
    assert one_line(message) == expected


@pytest.mark.parametrize("size", [MAX_ERROR_CHARS + 1, 10_000, 5_000_000])
def test_one_line_keeps_the_start_and_the_end_of_a_long_message(size):
    message = "start " + "x" * size + " end"

    line = one_line(message)

    actual = (len(line) <= MAX_ERROR_CHARS, line[:6], line[-4:], "characters cut" in line)
    assert actual == (True, "start ", " end", True)


@pytest.mark.parametrize("control", [200, MAX_ERROR_CHARS - 20, 5_000])
def test_one_line_keeps_the_end_when_escapes_lengthen_the_message(control):
    message = "start " + "\x01" * control + " why: the reason"

    line = one_line(message)

    actual = (len(line) <= MAX_ERROR_CHARS, line[:6], line.endswith(" why: the reason"))
    assert actual == (True, "start ", True)


SHOWN = [
    ("short", "robot", "'robot'"),
    ("newline", "a\nb", "'a\\nb'"),
    ("number", 5, "5"),
    ("long", "x" * 100, f"{'x' * SHOWN_CHARS!r}… (100 characters)"),
]


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in SHOWN], ids=[c[0] for c in SHOWN])
def test_shown_quotes_and_cuts(value, expected):
    assert shown(value) == expected


def test_a_5_mb_role_gives_a_short_error():
    with pytest.raises(InvalidMessage) as raised:
        message_from_openai(0, {"role": "x" * 5_000_000, "content": "hi"})

    assert len(str(raised.value)) < 200
