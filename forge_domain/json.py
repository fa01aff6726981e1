"""JSON value types shared by the domain models, and a fast parser for small documents."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias, cast

from pydantic import JsonValue

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object."""

__all__ = ["JsonObject", "JsonValue", "parse_json"]

_DECODER = json.JSONDecoder()
_scan_once: Callable[[str, int], tuple[object, int]] = getattr(_DECODER, "scan_once")  # noqa: B009  (not in typeshed)
_WHITESPACE = " \t\n\r"


def parse_json(text: str) -> JsonValue:
    """``json.loads(text)``, about twice as fast on the small documents of tool arguments.

    ``json.loads`` spends half its time on a tiny argument (a few hundred characters)
    in Python-level wrappers and whitespace regexes around the C scanner. A document
    without surrounding whitespace goes straight to the scanner; anything else (leading
    or trailing whitespace, extra data, invalid JSON) goes through ``json.loads``, so
    results and errors are exactly those of ``json.loads``.

    Raises:
        json.JSONDecodeError: as ``json.loads`` does.
    """
    if text and text[0] not in _WHITESPACE:
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            pass  # not a JSON value: json.loads raises the proper error
        else:
            if end == len(text):
                return cast(JsonValue, value)
    return cast(JsonValue, json.loads(text))
