"""What a wire format cannot hold of a message, carried under one reserved key; and the
small helpers the codecs share.

The internal messages can hold more than the Anthropic and Responses formats (an
OpenAI ``name``, ``"content": ""`` on a call-only turn, arguments spelled with other
spacing …). A codec writes a message natively, reads its own output back and
compares: the fields that differ are written under :data:`CARRY_KEY` on the item
that holds the message, and reading them restores the message exactly, so a
conversion from another format and back is lossless. A native transcript never has
the key, and a message written natively without loss gets none.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cache
from typing import TypeVar, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from forge_domain._errors import InvalidMessage
from forge_domain._json import JsonObject, JsonValue
from forge_domain._messages import Content, ContentPart, Role, TextMessage, ToolResult
from forge_domain._usage import Usage

__all__: list[str] = []  # internal: the carry and helpers the codecs share

CARRY_KEY = "_forge"
"""The reserved key holding what the format could not say (``{"message": {...}}`` …)."""

_NEVER_CARRIED = frozenset({"kind", "tool_calls", "span_usage", "summary_data"})
"""Fields compared elsewhere (calls one by one) or never written in any format."""

M = TypeVar("M", bound=BaseModel)


@cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[object]:
    annotation = cast("type[object]", model.model_fields[name].annotation)
    return TypeAdapter(annotation)


def carried_fields(original: BaseModel, read_back: BaseModel) -> JsonObject:
    """The fields of ``original`` that ``read_back`` lost, as JSON (empty when none)."""
    model = type(original)
    out: JsonObject = {}
    for name in model.model_fields:
        if name in _NEVER_CARRIED:
            continue
        value = getattr(original, name)
        if value != getattr(read_back, name):
            out[name] = cast(JsonValue, _adapter(model, name).dump_python(value, mode="json"))
    return out


SHOWN_CHARS = 60
"""The most characters of a value an error message quotes (a 5 MB role stays one short line)."""


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message: one line (escapes), cut to ``limit`` characters."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _key(name: str) -> str:
    """An input key as a field path shows it: bare when short and printable, else quoted and
    bounded."""
    return name if name.isprintable() and len(name) <= SHOWN_CHARS else shown(name)


def restore_fields(message: M, raw: JsonValue, index: int, field: str, container: str) -> M:
    """``message`` with the carried fields ``raw`` put back.

    Raises:
        InvalidMessage: ``raw`` is not an object of known fields with valid values.
    """
    if not isinstance(raw, dict):
        raise InvalidMessage(index, field, "expected an object", container=container)
    model = type(message)
    update: dict[str, object] = {}
    for name, value in raw.items():
        if name in _NEVER_CARRIED or name not in model.model_fields:
            raise InvalidMessage(
                index, f"{field}.{_key(name)}", "not a carried field", container=container
            )
        try:
            update[name] = _adapter(model, name).validate_python(value)
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
            raise InvalidMessage(index, f"{field}.{name}", problem, container=container) from exc
    return message.model_copy(update=update) if update else message


def split_carry(item: JsonObject, index: int, container: str) -> tuple[JsonObject, JsonObject]:
    """``item`` without :data:`CARRY_KEY`, and the carry (empty when there is none)."""
    if CARRY_KEY not in item:
        return item, {}
    carry = item[CARRY_KEY]
    if not isinstance(carry, dict):
        raise InvalidMessage(index, CARRY_KEY, "expected an object", container=container)
    return {k: v for k, v in item.items() if k != CARRY_KEY}, carry


def add_carry(item: JsonObject, key: str, value: JsonValue) -> None:
    """Put ``value`` under ``item[CARRY_KEY][key]``."""
    carry = item.get(CARRY_KEY)
    if not isinstance(carry, dict):
        carry = item[CARRY_KEY] = {}
    carry[key] = value


def carry_calls(
    message: BaseModel, back: BaseModel, items: Sequence[JsonValue], call_types: Collection[str]
) -> None:
    """Carry, on each call's item, what the call of ``message`` lost in ``back`` (its read-back).

    The call items are those of ``items`` whose ``type`` is in ``call_types``, in the order
    of the calls; nothing is carried unless both messages are text messages.
    """
    if not (isinstance(message, TextMessage) and isinstance(back, TextMessage)):
        return
    written = [item for item in items if isinstance(item, dict) and item.get("type") in call_types]
    calls = zip(message.tool_calls or (), back.tool_calls or (), written, strict=True)
    for call, call_back, item in calls:
        carried = carried_fields(call, call_back)
        if carried:
            add_carry(item, "call", carried)


def with_extra(out: JsonObject, extra: JsonObject, skip: str | None = None) -> JsonObject:
    """``out`` with the unmodelled keys of ``extra`` added in order (never over a written
    key, never ``skip``); every codec writes its ``extra`` this way."""
    for key, value in extra.items():
        if key != skip:
            out.setdefault(key, value)
    return out


def bare_text(
    role: Role, content: Content, extra: JsonObject, wire_role: str | None = None
) -> TextMessage:
    """A text message of checked values, built without validation (as the codecs read)."""
    return TextMessage.model_construct(
        kind="text",
        role=role,
        content=content,
        tool_calls=None,
        reasoning_details=None,
        reasoning_content=None,
        name=None,
        droppable=False,
        usage=None,
        span_usage=None,
        summary_data=None,
        wire_role=wire_role,
        content_absent=False,
        extra=extra,
    )


def bare_result(
    call_id: str,
    content: str | tuple[ContentPart, ...],
    extra: JsonObject,
    *,
    is_error: bool = False,
    name: str | None = None,
    usage: Usage | None = None,
) -> ToolResult:
    """A tool result of checked values, built without validation (as the codecs read)."""
    return ToolResult.model_construct(
        kind="tool",
        call_id=call_id,
        name=name,
        content=content,
        is_error=is_error,
        usage=usage,
        extra=extra,
    )
