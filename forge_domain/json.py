"""JSON value types shared by the domain models."""

from __future__ import annotations

from typing import TypeAlias

from pydantic import JsonValue

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object."""

__all__ = ["JsonObject", "JsonValue"]
