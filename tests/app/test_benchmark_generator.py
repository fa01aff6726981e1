"""The benchmark's session generator: deterministic, exact in size, provider-valid."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generator import MAX_OUTPUT, MIN_OUTPUT, TOOL_NAMES, generate_session
from forge_domain import Context
from forge_domain.formats import find_violations


def test_generate_session_is_deterministic_for_a_seed():
    actual = generate_session(300, seed=7)
    expected = generate_session(300, seed=7)
    assert actual == expected


def test_generate_session_differs_between_seeds():
    assert generate_session(50, seed=1) != generate_session(50, seed=2)


@pytest.mark.parametrize("size", [2, 3, 4, 17, 100, 1_000], ids=lambda n: f"{n}-messages")
def test_generate_session_has_the_requested_size(size):
    actual = len(generate_session(size, seed=3))
    assert actual == size


@settings(max_examples=40)
@given(size=st.integers(min_value=2, max_value=250), seed=st.integers(0, 2**32))
def test_generate_session_is_provider_valid(size, seed):
    fixture = Context.from_openai(generate_session(size, seed=seed))
    actual = find_violations(fixture)
    assert actual == []


def test_generate_session_has_realistic_tool_rounds():
    session = generate_session(2_000, seed=5)
    outputs = [m["content"] for m in session if m["role"] == "tool"]
    calls = [m["tool_calls"] for m in session if m.get("tool_calls")]
    actual = (
        all(MIN_OUTPUT <= len(out) <= MAX_OUTPUT for out in outputs),
        {c["function"]["name"] for group in calls for c in group} == set(TOOL_NAMES),
        any(len(group) > 1 for group in calls),
        sum(m["role"] == "user" for m in session) > 1,
        (session[0]["role"], session[1]["role"]),
    )
    expected = (True, True, True, True, ("system", "user"))
    assert actual == expected


def test_generate_session_rejects_fewer_than_two_messages():
    with pytest.raises(ValueError, match="at least 2 messages, got 1"):
        generate_session(1)
