"""What a wire format cannot hold of a message, carried under one reserved key; and the
small helpers the Anthropic and Responses codecs share.

The internal messages can hold more than the Anthropic and Responses formats (an
OpenAI ``name``, ``"content": ""`` on a call-only turn, arguments spelled with other
spacing …). A codec writes a message natively, reads its own output back and
compares: the fields that differ are written under :data:`CARRY_KEY` on the item
that holds the message, and reading them restores the message exactly, so a
conversion from another format and back is lossless. A native transcript never has
the key, and a message written natively without loss gets none.
"""

from __future__ import annotations

from functools import cache
from typing import TypeVar, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from forge_domain.errors import InvalidMessage
from forge_domain.json import JsonObject, JsonValue
from forge_domain.messages import Content, Role, TextMessage

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
                index, f"{field}.{name}", "not a carried field", container=container
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


def with_extra(out: JsonObject, extra: JsonObject, skip: str = "") -> JsonObject:
    """``out`` with the unmodelled keys of ``extra`` (never over a written key, never ``skip``)."""
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
