"""Which span a strategy compacts: forge's vectors, our documented semantics, properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import (
    CompactionStrategy,
    Context,
    Evict,
    InvalidConfig,
    JsonObject,
    Max,
    Min,
    Retain,
    ToolResult,
    find_sequence_preserving_last_n,
)
from forge_domain.testing import bracket, pattern
from tests.vectors import strategy_from_forge, vector_params


def _is_start_at_zero_quirk(entry: JsonObject) -> bool:
    return "saturating_sub" in str(entry.get("note", ""))


def _has_evict(raw: object) -> bool:
    return raw == "evict" or (isinstance(raw, list) and any(_has_evict(item) for item in raw))


@pytest.mark.parametrize(
    "vector",
    vector_params(
        "find_sequence_preserving_last_n", where=lambda e: not _is_start_at_zero_quirk(e)
    ),
)
def test_find_sequence_preserving_last_n_matches_forge(vector):
    letters = vector["input"]["pattern"]
    span = find_sequence_preserving_last_n(pattern(letters), vector["input"]["preserve_last_n"])
    expected_range = vector["expected_range"]
    expected = (vector["expected"], None if expected_range is None else tuple(expected_range))
    actual = (bracket(letters, span), span)
    assert actual == expected


def test_find_sequence_preserving_last_n_quirk_vector_is_the_only_one_skipped():
    actual = [
        (v["input"]["pattern"], v["input"]["preserve_last_n"])
        for v in (p.values[0] for p in vector_params("find_sequence_preserving_last_n"))
        if _is_start_at_zero_quirk(v)
    ]
    assert actual == [("trr", 1)]


@pytest.mark.parametrize(
    ("letters", "keep", "expected"),
    [
        ("trr", 1, "trr"),
        ("trr", 2, "trr"),
        ("Trrr", 1, "Trrr"),
        ("trru", 1, "[trr]u"),
        ("tra", 1, "[tr]a"),
    ],
    ids=[
        "forge-gives-[t]rr-orphaning-both-results",
        "call-alone-at-0-is-never-compacted",
        "parallel-call-at-0-keeps-its-results",
        "whole-group-at-0-is-fine",
        "single-result-at-0-is-fine",
    ],
)
def test_find_sequence_preserving_last_n_never_saturates_at_zero(letters, keep, expected):
    actual = bracket(letters, find_sequence_preserving_last_n(pattern(letters), keep))
    assert actual == expected


@pytest.mark.parametrize(
    ("letters", "keep", "expected"),
    [
        ("suTrr", 0, "su[Trr]"),
        ("suTrr", 1, "suTrr"),
        ("suaTrr", 1, "su[a]Trr"),
        ("suaTrru", 1, "su[aTrr]u"),
        ("suaTere", 1, "su[a]Tere"),
        ("suteua", 2, "su[te]ua"),
        ("sueua", 0, "sueu[a]"),
    ],
    ids=[
        "parallel-group-whole",
        "end-on-first-of-two-results",
        "walks-back-over-group-and-call",
        "group-then-user",
        "failed-results-count-as-results",
        "failed-single-result",
        "orphan-result-before-first-assistant-stays",
    ],
)
def test_find_sequence_preserving_last_n_with_our_letters(letters, keep, expected):
    actual = bracket(letters, find_sequence_preserving_last_n(pattern(letters), keep))
    assert actual == expected


def test_find_sequence_preserving_last_n_accepts_a_plain_sequence():
    actual = find_sequence_preserving_last_n(pattern("suaua").messages, 1)
    assert actual == (2, 3)


@pytest.mark.parametrize(
    "vector",
    vector_params(
        "compaction_strategy_to_fixed", where=lambda e: not _has_evict(e["input"]["strategy"])
    ),
)
def test_compaction_strategy_retained_count_matches_forge_for_retain(vector):
    strategy = strategy_from_forge(vector["input"]["strategy"])
    actual = strategy.retained_count(pattern(vector["input"]["pattern"]))
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    "vector",
    vector_params(
        "compaction_strategy_eviction_range", where=lambda e: not _has_evict(e["input"]["strategy"])
    ),
)
def test_compaction_strategy_eviction_range_matches_forge_for_retain(vector):
    strategy = strategy_from_forge(vector["input"]["strategy"])
    actual = strategy.eviction_range(pattern(vector["input"]["pattern"]))
    expected = None if vector["expected"] is None else tuple(vector["expected"])
    assert actual == expected


E = CompactionStrategy.evict
R = CompactionStrategy.retain


@pytest.mark.parametrize(
    ("letters", "strategy", "expected"),
    [
        ("suauauauau", E(0.0), "suauauauau"),
        ("suauauauau", E(1.0), "su[auauauau]"),
        ("suauauauau", E(0.5), "su[auau]auau"),
        ("suauauauau", E(0.2), "su[a]uauauau"),
        ("suauauauau", E(0.8), "su[auauau]au"),
        ("suauauauau", E(1.5), "su[auauauau]"),
        ("suauauauau", E(-0.5), "suauauauau"),
        ("suauauauau", E(float("nan")), "suauauauau"),
        ("suauauauau", E(0.5).max(R(6)), "su[au]auauau"),
        ("suauauauau", E(0.5).min(R(6)), "su[auau]auau"),
        ("suauauauau", E(0.5).min(R(2)), "su[auauau]au"),
        ("suauauauau", E(0.2).max(R(6)), "su[a]uauauau"),
        ("suauauauau", R(0), "su[auauauau]"),
        ("suauauauau", R(8), "suauauauau"),
        ("sutrtrtrua", E(1.0), "su[trtrtrua]"),
        ("sutrtrtrua", E(0.5), "su[tr]trtrua"),
        ("suuu", E(1.0), "suuu"),
        ("", E(1.0), ""),
    ],
    ids=[
        "evict-0-compacts-nothing",
        "evict-1-whole-span-from-first-a",
        "evict-half-about-half-the-tokens",
        "evict-0.2-one-message",
        "evict-0.8-more-than-0.5",
        "evict-clamped-above-1",
        "evict-clamped-below-0",
        "evict-nan-is-0",
        "max-is-more-conservative",
        "min-is-more-aggressive-than-retain-6",
        "min-takes-the-smaller-retention",
        "default-automatic-strategy",
        "retain-0-everything",
        "retain-over-compactable-span",
        "evict-1-with-tools",
        "evict-half-stops-before-a-call",
        "no-assistant-nothing",
        "empty",
    ],
)
def test_compaction_strategy_eviction_range_documented_semantics(letters, strategy, expected):
    actual = bracket(letters, strategy.eviction_range(pattern(letters)))
    assert actual == expected


def test_compaction_strategy_is_a_closed_tagged_union():
    strategy = E(0.2).max(R(6)).min(R(1))
    actual = CompactionStrategy.model_validate(strategy.model_dump())
    expected = CompactionStrategy(
        Min(
            left=CompactionStrategy(
                Max(
                    left=CompactionStrategy(Evict(percentage=0.2)),
                    right=CompactionStrategy(Retain(count=6)),
                )
            ),
            right=CompactionStrategy(Retain(count=1)),
        )
    )
    assert actual == expected


# -- properties ----------------------------------------------------------------------------

_SEGMENTS = st.one_of(
    st.sampled_from(["s", "u", "a"]),
    st.tuples(st.just("t"), st.sampled_from("re")).map("".join),
    st.tuples(st.just("T"), st.sampled_from("re"), st.sampled_from("re")).map("".join),
)
valid_patterns = st.lists(_SEGMENTS, max_size=25).map("".join)
"""Pattern strings in which every call is directly followed by all of its results."""

strategies = st.recursive(
    st.one_of(
        st.floats(min_value=0.0, max_value=1.0).map(CompactionStrategy.evict),
        st.integers(min_value=0, max_value=30).map(CompactionStrategy.retain),
    ),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda pair: pair[0].min(pair[1])),
        st.tuples(inner, inner).map(lambda pair: pair[0].max(pair[1])),
    ),
    max_leaves=4,
)


def _call_index(context: Context) -> dict[str, int]:
    return {
        call.id: index
        for index, message in enumerate(context)
        if not isinstance(message, ToolResult)
        for call in message.tool_calls or ()
    }


@given(letters=valid_patterns, strategy=strategies)
def test_compaction_strategy_eviction_range_never_splits_calls_from_results(letters, strategy):
    context = pattern(letters)
    span = strategy.eviction_range(context)
    calls = _call_index(context)

    def inside(index: int) -> bool:
        return span is not None and span[0] <= index <= span[1]

    actual = [
        (index, inside(calls[message.call_id]), inside(index))
        for index, message in enumerate(context)
        if isinstance(message, ToolResult)
    ]
    expected = [(index, now, now) for index, _, now in actual]
    assert actual == expected


@given(letters=valid_patterns, strategy=strategies)
def test_compaction_strategy_eviction_range_starts_at_first_assistant(letters, strategy):
    span = strategy.eviction_range(pattern(letters))
    first_assistant = min((letters.find(x) for x in "atT" if x in letters), default=None)
    assert span is None or (first_assistant is not None and span[0] == first_assistant)


@given(letters=valid_patterns, strategy=strategies)
def test_compaction_strategy_eviction_range_keeps_the_retained_messages(letters, strategy):
    context = pattern(letters)
    span = strategy.eviction_range(context)
    assert span is None or len(context) - 1 - span[1] >= strategy.retained_count(context)


@given(letters=valid_patterns, count=st.integers(min_value=0, max_value=30))
def test_compaction_strategy_retain_keeps_at_least_n(letters, count):
    context = pattern(letters)
    span = R(count).eviction_range(context)
    assert span is None or len(context) - 1 - span[1] >= count


@given(letters=valid_patterns, percentage=st.floats(min_value=0.0, max_value=1.0))
def test_compaction_strategy_evict_summarises_at_most_the_fraction(letters, percentage):
    context = pattern(letters)
    span = E(percentage).eviction_range(context)
    if span is None:
        return
    compactable = sum(m.approx_tokens for m in context[span[0] :])
    summarised = sum(m.approx_tokens for m in context[span[0] : span[1] + 1])
    assert summarised <= percentage * compactable


@given(
    letters=valid_patterns,
    left=strategies,
    right=strategies,
)
def test_compaction_strategy_max_never_compacts_more_than_min(letters, left, right):
    context = pattern(letters)
    conservative = left.max(right).retained_count(context)
    aggressive = left.min(right).retained_count(context)
    assert conservative >= aggressive


@pytest.mark.parametrize("keep", [-1, -7])
def test_find_sequence_rejects_a_negative_keep_with_a_typed_error(keep):
    with pytest.raises(InvalidConfig, match=f"keep must be 0 or more messages; got {keep}"):
        find_sequence_preserving_last_n(pattern("suatrua"), keep)
