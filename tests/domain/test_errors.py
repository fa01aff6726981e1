"""The domain's error tree and its messages."""

from __future__ import annotations

import pytest

from forge_domain import (
    ForgeDomainError,
    InvalidArguments,
    InvalidConfig,
    InvalidMessage,
    InvalidPattern,
    InvalidTranscript,
)


@pytest.mark.parametrize(
    "error",
    [
        InvalidMessage(0, "role", "bad"),
        InvalidTranscript(["x"]),
        InvalidConfig("x"),
        InvalidPattern("x", 0),
        InvalidArguments("read", "{"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_domain_errors_share_one_root_and_are_value_errors(error):
    actual = (isinstance(error, ForgeDomainError), isinstance(error, ValueError))
    assert actual == (True, True)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InvalidMessage(3, "tool_calls[0].id", "empty"), "messages[3].tool_calls[0].id: empty"),
        (InvalidMessage(1, "", "not an object"), "messages[1]: not an object"),
        (InvalidTranscript(["a", "b"]), "invalid transcript: a; b"),
        (
            InvalidTranscript([str(i) for i in range(7)]),
            "invalid transcript: 0; 1; 2; 3; 4 (and 2 more)",
        ),
    ],
    ids=["field", "whole-message", "few-violations", "many-violations-truncated"],
)
def test_domain_error_messages(error, expected):
    actual = str(error)
    assert actual == expected


def test_invalid_transcript_keeps_every_violation():
    actual = InvalidTranscript([str(i) for i in range(7)]).violations
    assert actual == ("0", "1", "2", "3", "4", "5", "6")
