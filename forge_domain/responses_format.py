"""Reading and writing OpenAI Responses input items, losslessly.

The items map onto the one internal model:

* a ``message`` item (or a bare ``{"role", "content"}``) of a user, system or
  developer is one :class:`TextMessage`; ``input_text``/``output_text`` parts are
  :class:`TextPart`, ``input_image`` an :class:`ImagePart`, any other part an
  :class:`OtherPart`;
* a run of model output — ``reasoning`` items, then at most one assistant
  ``message``, then ``function_call`` items — is one assistant message: reasoning
  items are kept whole in ``reasoning_details`` (``encrypted_content`` stays opaque),
  calls are :class:`ToolCall` answered by ``call_id``;
* a ``function_call_output`` is a :class:`ToolResult`; ``custom_tool_call`` items
  (Codex's ``apply_patch``) are calls of ``call_type`` ``custom`` whose ``input`` is the
  arguments text, answered by ``custom_tool_call_output`` results;
* any other item (``compaction``, ``web_search_call``, ``item_reference`` …) is kept
  whole as the one :class:`OtherPart` of a message marked ``{"_responses": "item"}``,
  written back untouched.

Keys the model does not know (``id``, ``status``, ``type: message`` …) are kept in
``extra``; what the format cannot hold of a message converted from another format
is carried under ``_forge`` (:mod:`forge_domain._format_carry`), so
``messages_to_responses(messages_from_responses(x)) == x`` and the reverse.
Malformed input raises :class:`InvalidMessage` naming ``input[index]`` and the field.
"""

from __future__ import annotations

from collections.abc import Iterable

from forge_domain._format_carry import add_carry, carried_fields, with_extra
from forge_domain._responses_read import (
    ITEM_MARK,
    MESSAGE,
    OUTPUTS,
    STAGES,
    WHERE,
    Stage,
    Turn,
    read_items,
)
from forge_domain.errors import InvalidMessage, InvalidTranscript
from forge_domain.json import JsonObject, JsonValue, json_type_name
from forge_domain.messages import (
    Content,
    ContentPart,
    ContextMessage,
    ImagePart,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    ToolResult,
)

__all__ = ["messages_from_responses", "messages_to_responses"]


def messages_from_responses(items: object) -> list[ContextMessage]:
    """Read a list of Responses input items as internal messages.

    Raises:
        InvalidMessage: naming ``input[index]`` and the field of the first bad item.
        InvalidTranscript: when ``items`` is not a list.
    """
    if not isinstance(items, list):
        raise InvalidTranscript([f"expected a list of input items, got {json_type_name(items)}"])
    return [message for _, message in read_items(items)]


# -- writing --------------------------------------------------------------------------


def _parts_out(parts: tuple[ContentPart, ...], text_type: str) -> list[JsonValue]:
    out: list[JsonValue] = []
    for part in parts:
        if isinstance(part, TextPart):
            written: JsonObject = {"type": text_type, "text": part.text}
        elif isinstance(part, ImagePart):
            written = {"type": "input_image", "image_url": part.url}
            if part.detail is not None:
                written["detail"] = part.detail
        else:
            out.append(dict(part.raw))
            continue
        for key, value in part.extra.items():
            written.setdefault(key, value)
        out.append(written)
    return out


def _content_out(content: Content, text_type: str) -> JsonValue:
    if content is None or isinstance(content, str):
        return content
    return _parts_out(content, text_type)


def _native(message: ContextMessage) -> list[JsonObject]:
    """The items of one message, without any carry."""
    if isinstance(message, ToolResult):
        custom = message.extra.get(ITEM_MARK) == "custom"
        item: JsonObject = {
            "type": OUTPUTS[custom],
            "call_id": message.call_id,
            "output": _content_out(message.content, "input_text"),
        }
        return [with_extra(item, {k: v for k, v in message.extra.items() if k != ITEM_MARK})]
    content = message.content
    if (
        message.extra.get(ITEM_MARK) == "item"
        and isinstance(content, tuple)
        and len(content) == 1
        and isinstance(content[0], OtherPart)
    ):
        return [dict(content[0].raw)]
    role = message.role
    if role != Role.ASSISTANT:
        name = "developer" if role == Role.SYSTEM and message.wire_role == "developer" else role
        item = {"role": str(name), "content": _content_out(content, "input_text")}
        return [with_extra(item, message.extra)]
    items = [dict(d) for d in message.reasoning_details or () if d.get("type") == "reasoning"]
    if content is not None or not (items or message.tool_calls):
        item = {"role": "assistant", "content": _content_out(content, "output_text")}
        items.append(with_extra(item, message.extra))
    for call in message.tool_calls or ():
        custom = call.call_type == "custom"
        written: JsonObject = {
            "type": "custom_tool_call" if custom else "function_call",
            "call_id": call.id,
            "name": call.name,
            "input" if custom else "arguments": call.arguments,
        }
        items.append(with_extra(written, call.extra))
    return items


def _written(message: ContextMessage) -> list[JsonObject]:
    """The items of one message, with what they cannot hold carried."""
    items = _native(message)
    read_back = read_items(list(items))
    if len(read_back) != 1:  # an opaque item whose type reads as something else
        raise InvalidMessage(0, "", "cannot be written as one Responses item", container=WHERE)
    back = read_back[0][1]
    carried = carried_fields(message, back)
    if carried:
        add_carry(items[0], "message", carried)
    if isinstance(message, TextMessage) and isinstance(back, TextMessage):
        calls = [
            item for item in items if item.get("type") in ("function_call", "custom_tool_call")
        ]
        for call, call_back, item in zip(
            message.tool_calls or (), back.tool_calls or (), calls, strict=True
        ):
            carried = carried_fields(call, call_back)
            if carried:
                add_carry(item, "call", carried)
    return items


def _first_stage(items: list[JsonObject]) -> Stage | None:
    first = items[0]
    if first.get("type") in STAGES:
        return STAGES[str(first["type"])]
    if "role" in first and first.get("type", "message") == "message":
        return MESSAGE if first["role"] == "assistant" else None
    return None


def messages_to_responses(messages: Iterable[ContextMessage]) -> list[JsonObject]:
    """Write internal messages as Responses input items."""
    out: list[JsonObject] = []
    last: Turn | None = None  # the stage reached by the previous assistant message's items
    for message in messages:
        items = _written(message)
        stage = _first_stage(items)
        is_turn = isinstance(message, TextMessage) and message.role == Role.ASSISTANT
        if is_turn and stage is not None and last is not None and last.accepts(stage):
            add_carry(items[0], "split", True)
        if is_turn and stage is not None:
            last = Turn(0, {})
            last.stage = max(s for s in (_first_stage([item]) for item in items) if s is not None)
        else:
            last = None
        out.extend(items)
    return out
