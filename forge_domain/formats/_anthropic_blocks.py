"""Anthropic content blocks to internal parts, calls and usage, and back.

Helpers of :mod:`forge_domain.formats._anthropic`: one block at a time, each error
naming the turn index and the block's field.
"""

from __future__ import annotations

import json
import re
from typing import Final

from forge_domain._errors import InvalidMessage
from forge_domain._json import JsonObject, JsonValue, json_type_name
from forge_domain._messages import ContentPart, ImagePart, OtherPart, TextPart, ToolCall
from forge_domain._usage import Usage
from forge_domain.formats._carry import shown, with_extra

__all__: list[str] = []  # internal: block readers and writers of the Anthropic codec

REASONING_TYPES: Final = frozenset({"thinking", "redacted_thinking"})
"""Assistant blocks kept whole in ``reasoning_details``."""

SPACINGS: Final[dict[str, tuple[tuple[str, str], bool]]] = {
    "default": ((", ", ": "), False),
    "compact": ((",", ":"), False),
    "ascii": ((", ", ": "), True),
    "compact_ascii": ((",", ":"), True),
}
"""How tool arguments may be spelled: ``json.dumps`` separators and ``ensure_ascii``.
A ``tool_use`` input is written back as text in the ``default`` spelling; a call
converted from text spelled another way carries the spelling's name."""

_DATA_URI = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)


def fail(index: int, where: str, problem: str, container: str = "messages") -> InvalidMessage:
    """The error for a bad field of turn ``index``."""
    return InvalidMessage(index, where, problem, container=container)


def spell(value: JsonValue, spacing: str) -> str:
    """``value`` as JSON text in a named spelling."""
    separators, ascii_only = SPACINGS[spacing]
    return json.dumps(value, ensure_ascii=ascii_only, separators=separators)


# -- reading --------------------------------------------------------------------------


def read_part(index: int, where: str, block: JsonObject, kind: str) -> ContentPart:
    """A text, image or other block as a content part."""
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            raise fail(index, f"{where}.text", f"expected a string, got {json_type_name(text)}")
        return TextPart.model_construct(
            kind="text",
            text=text,
            extra={k: v for k, v in block.items() if k not in ("type", "text")},
        )
    source = block.get("source")
    detail = block.get("detail")
    if kind == "image" and isinstance(source, dict) and isinstance(detail, str | None):
        url = _image_url(source)
        if url is not None:
            modelled = ("type", "source") if detail is None else ("type", "source", "detail")
            known = (
                ("type", "media_type", "data")
                if source.get("type") == "base64"
                else ("type", "url")
            )
            return ImagePart.model_construct(
                kind="image",
                url=url,
                detail=detail,
                url_extra={k: v for k, v in source.items() if k not in known},
                extra={k: v for k, v in block.items() if k not in modelled},
            )
    return OtherPart.model_construct(kind="other", raw=dict(block))


def _image_url(source: JsonObject) -> str | None:
    """The data URI or URL of an image source; None for a source kept whole (``file`` …)."""
    if source.get("type") == "base64":
        media, data = source.get("media_type"), source.get("data")
        if isinstance(media, str) and isinstance(data, str) and ";" not in media:
            return f"data:{media};base64,{data}"
    elif source.get("type") == "url":
        url = source.get("url")
        if isinstance(url, str) and not url.startswith("data:"):
            return url
    return None


def read_call(index: int, where: str, block: JsonObject, carry: JsonObject) -> ToolCall:
    """A ``tool_use`` block as a call; ``carry`` may name the arguments' spelling."""
    call_id, name, given = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        raise fail(
            index, f"{where}.id", f"expected a non-empty string, got {json_type_name(call_id)}"
        )
    if not isinstance(name, str) or not name:
        raise fail(
            index, f"{where}.name", f"expected a non-empty string, got {json_type_name(name)}"
        )
    if not isinstance(given, dict):
        raise fail(index, f"{where}.input", f"expected an object, got {json_type_name(given)}")
    spacing = carry.get("spacing", "default")
    if not isinstance(spacing, str) or spacing not in SPACINGS:
        raise fail(index, f"{where}._forge.spacing", f"unknown spelling {shown(spacing)}")
    return ToolCall.model_construct(
        id=call_id,
        name=name,
        arguments=spell(given, spacing),
        call_type="function",
        function_extra={},
        extra={k: v for k, v in block.items() if k not in ("type", "id", "name", "input")},
    )


# -- writing --------------------------------------------------------------------------


def write_part(part: ContentPart) -> JsonObject:
    """A content part as a block."""
    if isinstance(part, TextPart):
        out: JsonObject = {"type": "text", "text": part.text}
    elif isinstance(part, ImagePart):
        match = _DATA_URI.fullmatch(part.url)
        source: JsonObject = (
            {"type": "base64", "media_type": match[1], "data": match[2]}
            if match
            else {"type": "url", "url": part.url}
        )
        out = {"type": "image", "source": with_extra(source, part.url_extra)}
        if part.detail is not None:
            out["detail"] = part.detail
    else:
        return dict(part.raw)
    return with_extra(out, part.extra)


def write_call(call: ToolCall) -> tuple[JsonObject, str]:
    """A call as a ``tool_use`` block, and the spelling that gives its arguments back."""
    try:
        given = json.loads(call.arguments)
    except ValueError:
        given = None
    spacing = "default"
    if isinstance(given, dict):
        spacing = next((s for s in SPACINGS if spell(given, s) == call.arguments), "default")
    else:
        given = {}
    out: JsonObject = {"type": "tool_use", "id": call.id, "name": call.name, "input": given}
    return with_extra(out, call.extra), spacing


def write_usage(usage: Usage) -> JsonObject:
    """Usage as read, or in Anthropic's shape."""
    if usage.raw is not None:
        return dict(usage.raw)
    return {
        "input_tokens": usage.prompt_tokens.value - usage.cached_tokens.value,
        "output_tokens": usage.completion_tokens.value,
        "cache_read_input_tokens": usage.cached_tokens.value,
    }
