"""Percent validation and Rust-style float formatting."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import InvalidConfig, format_float, validate_percentage
from tests.vectors import vector_params


def _outcome(value: float) -> dict[str, object]:
    try:
        validate_percentage(value)
    except InvalidConfig as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True, "error": None}


@pytest.mark.parametrize(
    "vector",
    vector_params("percentage_validation", where=lambda v: v["input"]["layer"].startswith("agent")),
)
def test_validate_percentage_message_matches_forge(vector):
    actual = _outcome(vector["input"]["value"])
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    "vector",
    vector_params(
        "percentage_validation", where=lambda v: v["input"]["layer"].startswith("forge_config")
    ),
)
def test_validate_percentage_accepts_what_forge_config_accepts(vector):
    actual = _outcome(vector["input"]["value"])["ok"]
    assert actual == vector["expected"]["ok"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.5, "1.5"),
        (2.0, "2"),
        (-1.0, "-1"),
        (0.0, "0"),
        (-0.0, "0"),
        (1e20, "100000000000000000000"),
        (1e-7, "0.0000001"),
        (0.1 + 0.2, "0.30000000000000004"),
        (math.nan, "NaN"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
    ],
    ids=[
        "fraction",
        "drops-dot-zero",
        "negative-integer",
        "zero",
        "negative-zero",
        "no-exponent-large",
        "no-exponent-small",
        "shortest-repr",
        "nan",
        "inf",
        "negative-inf",
    ],
)
def test_format_float_like_rust_display(value, expected):
    actual = format_float(value)
    assert actual == expected


def test_validate_percentage_rejects_nan():
    actual = _outcome(math.nan)
    assert actual == {"ok": False, "error": "percentage must be between 0.0 and 1.0, got NaN"}


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_format_float_round_trips(value):
    actual = float(format_float(value))
    assert actual == value
