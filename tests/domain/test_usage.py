"""Token counts and usage: addition laws and the cost rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import TokenCount, Usage
from forge_domain._usage import is_plausible_total

token_counts = st.builds(
    TokenCount,
    value=st.integers(min_value=0, max_value=10**9),
    kind=st.sampled_from(["actual", "approx"]),
)
costs = st.one_of(st.none(), st.integers(min_value=0, max_value=10**6).map(lambda c: c / 64))
usages = st.builds(
    Usage,
    prompt_tokens=token_counts,
    completion_tokens=token_counts,
    total_tokens=token_counts,
    cached_tokens=token_counts,
    cost=costs,
)


@given(token_counts, token_counts)
def test_token_count_addition_is_actual_only_if_both_are(left, right):
    actual = left + right
    expected = TokenCount(
        value=left.value + right.value,
        kind="actual" if left.is_actual() and right.is_actual() else "approx",
    )
    assert actual == expected


@given(token_counts, token_counts, token_counts)
def test_token_count_addition_is_associative_and_commutative(a, b, c):
    actual = ((a + b) + c, b + a)
    expected = (a + (b + c), a + b)
    assert actual == expected


@given(token_counts)
def test_token_count_zero_actual_is_the_identity(count):
    actual = count + TokenCount()
    assert actual == count


@pytest.mark.parametrize(
    ("count", "expected"),
    [(TokenCount.actual(5), ("5", 5, True)), (TokenCount.approx(5), ("~5", 5, False))],
    ids=["actual", "approx"],
)
def test_token_count_display_and_int(count, expected):
    actual = (str(count), int(count), count.is_actual())
    assert actual == expected


@given(usages, usages)
def test_usage_accumulate_adds_every_token_field(left, right):
    total = left.accumulate(right)
    actual = (
        total.prompt_tokens,
        total.completion_tokens,
        total.total_tokens,
        total.cached_tokens,
    )
    expected = (
        left.prompt_tokens + right.prompt_tokens,
        left.completion_tokens + right.completion_tokens,
        left.total_tokens + right.total_tokens,
        left.cached_tokens + right.cached_tokens,
    )
    assert actual == expected


@given(costs, costs)
def test_usage_accumulate_cost_rule(left, right):
    actual = Usage(cost=left).accumulate(Usage(cost=right)).cost
    if left is None and right is None:
        expected = None
    elif left is None or right is None:
        expected = left if right is None else right
    else:
        expected = left + right
    assert actual == expected


@given(usages, usages, usages)
def test_usage_accumulate_is_associative_and_commutative(a, b, c):
    # costs are multiples of 1/64, so float addition is exact and the laws hold exactly
    actual = (a.accumulate(b).accumulate(c), b.accumulate(a))
    expected = (a.accumulate(b.accumulate(c)), a.accumulate(b))
    assert actual == expected


@given(usages)
def test_usage_default_is_the_identity(usage):
    actual = usage.accumulate(Usage())
    assert actual == usage


def test_usage_reported_sums_total():
    actual = Usage.reported(prompt_tokens=90, completion_tokens=10, cached_tokens=5, cost=0.5)
    expected = Usage(
        prompt_tokens=TokenCount.actual(90),
        completion_tokens=TokenCount.actual(10),
        total_tokens=TokenCount.actual(100),
        cached_tokens=TokenCount.actual(5),
        cost=0.5,
    )
    assert actual == expected


@given(st.lists(usages, max_size=6))
def test_usage_total_is_the_accumulate_fold(items):
    expected = None
    for usage in items:
        expected = usage if expected is None else expected.accumulate(usage)
    actual = Usage.total(items)
    assert actual == expected


def test_usage_total_of_one_usage_is_that_usage():
    usage = Usage.reported(prompt_tokens=1, completion_tokens=2).model_copy(
        update={"raw": {"x": 1}}
    )
    actual = Usage.total([usage])
    assert actual is usage


@pytest.mark.parametrize(
    ("reported", "estimate", "expected"),
    [
        (1_000, 1_000, True),
        (5_000, 1_000, True),
        (500, 1_000, True),
        (250, 1_000, True),
        (249, 1_000, False),
        (30, 120, True),
        (30, 121, False),
        (30, 1_700, False),
        (1, 0, True),
    ],
    ids=[
        "equal",
        "above-the-estimate",
        "half-whitespace-heavy",
        "exactly-a-quarter",
        "just-under-a-quarter",
        "constant-30-small-context",
        "constant-30-just-too-small",
        "constant-30-on-1700",
        "empty-estimate",
    ],
)
def test_is_plausible_total_distrusts_reports_under_a_quarter_of_the_estimate(
    reported, estimate, expected
):
    actual = is_plausible_total(reported, estimate)
    assert actual == expected
