"""The carry key's errors name the field at fault, however large or odd the key is."""

from __future__ import annotations

import pytest

from forge_domain import InvalidMessage
from forge_domain.formats import messages_from_responses


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("nope", "_forge.message.nope"),
        ("k" * 5_000_000, f"_forge.message.{'k' * 60!r}… (5,000,000 characters)"),
        ("two\nlines", "_forge.message.'two\\nlines'"),
    ],
    ids=["plain", "huge", "newline"],
)
def test_format_carry_unknown_key_is_named_bounded_on_one_line(key: str, expected: str) -> None:
    items = [{"role": "user", "content": "x", "_forge": {"message": {key: 1}}}]
    with pytest.raises(InvalidMessage) as caught:
        messages_from_responses(items)
    assert str(caught.value) == f"input[0].{expected}: not a carried field"
