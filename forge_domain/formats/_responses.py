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
is carried under ``_forge`` (:mod:`forge_domain.formats._carry`), so
``messages_to_responses(messages_from_responses(x)) == x`` and the reverse.
Malformed input raises :class:`InvalidMessage` naming ``input[index]`` and the field.
"""

from __future__ import annotations

from collections.abc import Iterable

from forge_domain._errors import InvalidMessage, InvalidTranscript
from forge_domain._json import JsonObject, JsonValue, json_type_name
from forge_domain._messages import (
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
from forge_domain.formats._carry import add_carry, carried_fields, carry_calls, with_extra
from forge_domain.formats._responses_read import (
    CALL_TYPES,
    ITEM_MARK,
    OUTPUTS,
    WHERE,
    Stage,
    continues,
    item_stage,
    read_items,
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
        out.append(with_extra(written, part.extra))
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


def _written(message: ContextMessage, position: int) -> list[JsonObject]:
    """The items of one message, with what they cannot hold carried.

    Raises:
        InvalidMessage: naming ``position`` when the items do not read back as one message.
    """
    items = _native(message)
    try:
        read_back = read_items(list(items))
    except InvalidMessage as exc:  # an opaque item that is not a valid item
        raise InvalidMessage(position, exc.field, exc.problem, container=WHERE) from exc
    if len(read_back) != 1:  # an opaque item whose type reads as something else
        raise InvalidMessage(
            position, "", "cannot be written as one Responses item", container=WHERE
        )
    back = read_back[0][1]
    carried = carried_fields(message, back)
    if carried:
        add_carry(items[0], "message", carried)
    carry_calls(message, back, items, CALL_TYPES)
    return items


def messages_to_responses(messages: Iterable[ContextMessage]) -> list[JsonObject]:
    """Write internal messages as Responses input items.

    Raises:
        InvalidMessage: naming the position of a message that cannot be written as
            items (an opaque item that is not one valid item).
    """
    out: list[JsonObject] = []
    last: Stage | None = None  # the stage reached by the previous assistant message's items
    for position, message in enumerate(messages):
        items = _written(message, position)
        stages = [stage for stage in map(item_stage, items) if stage is not None]
        is_turn = isinstance(message, TextMessage) and message.role == Role.ASSISTANT
        first = item_stage(items[0])
        if is_turn and first is not None and last is not None and continues(last, first):
            add_carry(items[0], "split", True)
        last = max(stages) if is_turn and first is not None else None
        out.extend(items)
    return out
