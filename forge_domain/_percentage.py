"""Validation of fractions such as ``eviction_window`` (forge's message format)."""

from __future__ import annotations

import math
from decimal import Decimal

from forge_domain._errors import InvalidConfig


def format_float(value: float) -> str:
    """Format a float the way Rust's ``Display`` does: no ``.0`` suffix, no exponent."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") and value == 0 else text


def validate_percentage(value: float) -> float:
    """Return ``value`` when it lies in [0, 1].

    Raises:
        InvalidConfig: ``percentage must be between 0.0 and 1.0, got 1.5``.
    """
    if not 0.0 <= value <= 1.0:
        raise InvalidConfig(f"percentage must be between 0.0 and 1.0, got {format_float(value)}")
    return value
