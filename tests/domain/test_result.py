"""Compaction metrics and outcomes."""

from __future__ import annotations

import pytest

from forge_domain import CompactionOutcome, CompactionResult
from forge_domain.testing import pattern
from tests.vectors import vector_params


@pytest.mark.parametrize("vector", vector_params("compaction_result"))
def test_compaction_result_reduction_percentages_match_forge(vector):
    result = CompactionResult(**vector["input"])
    actual = {
        "token_reduction_percentage": result.token_reduction_percentage(),
        "message_reduction_percentage": result.message_reduction_percentage(),
    }
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    ("compacted_range", "expected"),
    [(None, False), ((2, 5), True)],
    ids=["nothing-compactable", "span-compacted"],
)
def test_compaction_outcome_changed(compacted_range, expected):
    result = CompactionResult(
        original_tokens=10,
        compacted_tokens=10,
        original_messages=2,
        compacted_messages=2,
        compacted_range=compacted_range,
    )
    actual = CompactionOutcome(context=pattern("ua"), result=result).changed()
    assert actual == expected


def test_compaction_result_defaults():
    actual = CompactionResult(
        original_tokens=1, compacted_tokens=1, original_messages=1, compacted_messages=1
    )
    expected = CompactionResult(
        original_tokens=1,
        compacted_tokens=1,
        original_messages=1,
        compacted_messages=1,
        compacted_range=None,
        budget_status="not_set",
        engine="frame",
        summary_usage=None,
        coverage=None,
    )
    assert actual == expected
