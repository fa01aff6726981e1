"""JSON value types shared by the domain models."""

from __future__ import annotations

from typing import TypeAlias

from pydantic import JsonValue

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object."""

__all__ = ["JsonObject", "JsonValue"]  # json_type_name: for the codecs, not the API


def json_type_name(value: object) -> str:
    """The JSON name of ``value``'s type for an error message (``object``, ``array``, ``null``…)."""
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
