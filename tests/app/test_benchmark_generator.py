"""The benchmark's session generator: deterministic, exact in size, provider-valid."""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generator import (
    DEFAULT_MIX,
    MAX_OUTPUT,
    MIN_OUTPUT,
    MIXES,
    TOOL_NAMES,
    Message,
    Mix,
    generate_session,
)
from forge_domain import Context
from forge_domain.formats import find_violations
from forge_domain.tools import output_outcome


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


# SHA-256 of json.dumps(generate_session(n, seed=seed)), computed with the generator of
# commit 8a37120, before mixes existed: the default mix must not change a byte.
_DEFAULT_DIGESTS = {
    (1, 5_000): "84d54b68f05f07cf9a9b5e94de64a3ec6fe12e1c2030aa6feee40c3410b45e69",
    (2, 5_000): "98c443ae80641abcb1b4a8f018b94873912330841ddb4358f16fc358db02cffd",
    (3, 5_000): "781735e35181f6dd0a4ff4e33e48dc6f422fb48ef87f41468d809bdd9b897e21",
    (0, 7): "53ec073b9567ac1aca2e8818a5a3539d21d3beeae8bf8598e7b528346921d87e",
    (9, 301): "bd2ad908c36746de019ff3764c652f58927bec61a1243e10bb4c5f7c7f6fd76a",
}


@pytest.mark.parametrize(("seed", "size"), list(_DEFAULT_DIGESTS), ids=str)
def test_default_mix_gives_the_sessions_generated_before_mixes(seed, size):
    actual = hashlib.sha256(json.dumps(generate_session(size, seed=seed)).encode()).hexdigest()
    assert actual == _DEFAULT_DIGESTS[seed, size]


def test_default_mix_is_the_default_argument():
    assert generate_session(400, seed=5, mix=DEFAULT_MIX) == generate_session(400, seed=5)


def test_mixes_are_named_by_their_keys_default_first():
    actual = (next(iter(MIXES)), all(name == mix.name for name, mix in MIXES.items()))
    assert actual == ("default", True)


_OTHER_MIXES = [mix for mix in MIXES.values() if mix != DEFAULT_MIX]


@pytest.mark.parametrize("mix", _OTHER_MIXES, ids=lambda m: m.name)
@pytest.mark.parametrize("size", [2, 3, 41, 600], ids=lambda n: f"{n}-messages")
def test_every_mix_gives_an_exact_provider_valid_session(mix, size):
    session = generate_session(size, seed=11, mix=mix)
    actual = (len(session), find_violations(Context.from_openai(session)))
    assert actual == (size, [])


@pytest.mark.parametrize("mix", _OTHER_MIXES, ids=lambda m: m.name)
def test_every_mix_is_deterministic_per_seed(mix):
    first = generate_session(300, seed=4, mix=mix)
    actual = (
        first == generate_session(300, seed=4, mix=mix),
        first == generate_session(300, seed=5, mix=mix),
    )
    assert actual == (True, False)


def _calls(session: list[Message]) -> list[dict[str, object]]:
    return [call for m in session for call in m.get("tool_calls") or []]


def _median_output(session: list[Message]) -> float:
    return statistics.median(len(str(m["content"])) for m in session if m["role"] == "tool")


def _median_edit_arguments(session: list[Message]) -> float:
    return statistics.median(
        len(call["function"]["arguments"])
        for call in _calls(session)
        if call["function"]["name"] == "edit_file"
    )


def _repeated_share(session: list[Message]) -> float:
    seen: set[tuple[str, str]] = set()
    repeats = 0
    calls = _calls(session)
    for call in calls:
        key = (call["function"]["name"], call["function"]["arguments"])
        repeats += key in seen
        seen.add(key)
    return repeats / len(calls)


def _failed_share(session: list[Message]) -> float:
    outputs = [str(m["content"]) for m in session if m["role"] == "tool"]
    return sum(output_outcome(out) == "failed" for out in outputs) / len(outputs)


def _calls_per_turn(session: list[Message]) -> float:
    return statistics.mean(len(m["tool_calls"]) for m in session if m.get("tool_calls"))


_PROPERTY: dict[str, tuple[Callable[[list[Message]], float], str]] = {
    "long-outputs": (_median_output, "higher"),
    "large-edits": (_median_edit_arguments, "higher"),
    "repeated": (_repeated_share, "higher"),
    "distinct": (_repeated_share, "lower"),
    "failing": (_failed_share, "higher"),
    "parallel": (_calls_per_turn, "higher"),
}


def test_every_mix_has_a_property_to_check():
    assert set(_PROPERTY) == {mix.name for mix in _OTHER_MIXES}


@pytest.mark.parametrize("mix", _OTHER_MIXES, ids=lambda m: m.name)
def test_every_mix_differs_from_default_in_the_property_it_names(mix):
    measure, direction = _PROPERTY[mix.name]
    default, mixed = (measure(generate_session(1_500, seed=2, mix=m)) for m in (DEFAULT_MIX, mix))
    actual = "higher" if mixed > default else "lower" if mixed < default else "same"
    assert actual == direction


def test_distinct_mix_repeats_no_call_and_repeated_mix_repeats_calls_with_their_outputs():
    distinct = generate_session(1_500, seed=3, mix=MIXES["distinct"])
    repeated = generate_session(1_500, seed=3, mix=MIXES["repeated"])
    outputs = {m["tool_call_id"]: m["content"] for m in repeated if m["role"] == "tool"}
    seen: set[tuple[object, object, object]] = set()
    exact_repeats = 0
    for call in _calls(repeated):
        key = (call["function"]["name"], call["function"]["arguments"], outputs[call["id"]])
        exact_repeats += key in seen
        seen.add(key)
    actual = (_repeated_share(distinct), exact_repeats / len(_calls(repeated)) > 0.4)
    assert actual == (0.0, True)


def test_failing_mix_ends_failed_outputs_with_the_exit_code_and_keeps_their_size():
    mix = MIXES["failing"]
    session = generate_session(1_500, seed=6, mix=mix)
    failed = [
        str(m["content"])
        for m in session
        if m["role"] == "tool" and output_outcome(str(m["content"])) == "failed"
    ]
    low, high = mix.output_chars
    actual = (
        len(failed) > 0,
        all(out.endswith("[Command finished with exit code 1]") for out in failed),
        all(low <= len(out) <= high for out in failed),
    )
    assert actual == (True, True, True)


def test_a_custom_mix_is_accepted():
    mix = Mix(name="reads", description="only read_file", tool_weights=(1, 0, 0, 0))
    names = {call["function"]["name"] for call in _calls(generate_session(200, seed=1, mix=mix))}
    assert names == {"read_file"}
