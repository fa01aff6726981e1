"""Reading OpenAI Responses input items into internal messages (see ``responses_format``).

Items are flat: a run ``reasoning* message? (function_call | custom_tool_call)*`` of
model output is one assistant message (:class:`Turn`); an item that does not fit the
run starts the next message, as does one carrying ``{"split": true}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from forge_domain._errors import InvalidMessage
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
    ToolCall,
    ToolResult,
)
from forge_domain.formats._carry import (
    CARRY_KEY,
    bare_result,
    bare_text,
    restore_fields,
    shown,
    split_carry,
)
from forge_domain.formats._openai import TEXT_ROLES

__all__: list[str] = []  # internal: item reading of the Responses codec

WHERE: Final = "input"
ITEM_MARK: Final = "_responses"
"""``extra`` key marking a message that holds one opaque item (value ``"item"``)."""
_USER_ITEMS: Final = frozenset({"compaction", "item_reference"})
"""Opaque items that stand for input, not model output (also every ``*_output``)."""

Stage = Literal[0, 1, 2]
_REASONING: Final[Stage] = 0
_MESSAGE: Final[Stage] = 1
_CALLS: Final[Stage] = 2


def _fail(index: int, where: str, problem: str) -> InvalidMessage:
    return InvalidMessage(index, where, problem, container=WHERE)


def _string(index: int, item: JsonObject, key: str, *, non_empty: bool = False) -> str:
    value = item.get(key)
    if not isinstance(value, str) or (non_empty and not value):
        wanted = "a non-empty string" if non_empty else "a string"
        raise _fail(index, key, f"expected {wanted}, got {json_type_name(value)}")
    return value


def _part(index: int, where: str, raw: JsonValue, text_type: str) -> ContentPart:
    if not isinstance(raw, dict):
        raise _fail(index, where, f"expected a content part object, got {json_type_name(raw)}")
    part_type = raw.get("type")
    if not isinstance(part_type, str):
        raise _fail(index, f"{where}.type", f"expected a string, got {json_type_name(part_type)}")
    if part_type == text_type:
        text = raw.get("text")
        if not isinstance(text, str):
            raise _fail(index, f"{where}.text", f"expected a string, got {json_type_name(text)}")
        extra = {k: v for k, v in raw.items() if k not in ("type", "text")}
        return TextPart.model_construct(kind="text", text=text, extra=extra)
    url = raw.get("image_url")
    detail = raw.get("detail")
    if part_type == "input_image" and isinstance(url, str) and isinstance(detail, str | None):
        modelled = ("type", "image_url") if detail is None else ("type", "image_url", "detail")
        return ImagePart.model_construct(
            kind="image",
            url=url,
            detail=detail,
            url_extra={},
            extra={k: v for k, v in raw.items() if k not in modelled},
        )
    return OtherPart.model_construct(kind="other", raw=dict(raw))


def _content(index: int, key: str, raw: JsonValue, text_type: str) -> Content:
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return tuple(
            _part(index, f"{key}[{position}]", part, text_type) for position, part in enumerate(raw)
        )
    raise _fail(
        index, key, f"expected a string, an array of parts or null, got {json_type_name(raw)}"
    )


def _text_type(role: Role) -> str:
    return "output_text" if role == Role.ASSISTANT else "input_text"


def _message_item(index: int, item: JsonObject) -> TextMessage:
    role_name = item.get("role")
    if not isinstance(role_name, str) or role_name not in TEXT_ROLES:
        raise _fail(
            index,
            "role",
            f"unknown role {shown(role_name)}; expected user, system, developer or assistant",
        )
    if "content" not in item:
        raise _fail(index, "content", "a message item needs content")
    role = TEXT_ROLES[role_name]
    return bare_text(
        role,
        _content(index, "content", item["content"], _text_type(role)),
        {k: v for k, v in item.items() if k not in ("role", "content")},
        role_name if role_name == "developer" else None,
    )


def _call(index: int, item: JsonObject) -> ToolCall:
    """A ``function_call`` (its ``arguments``) or a ``custom_tool_call`` (its ``input``)."""
    call_type = "function" if item.get("type") == "function_call" else "custom"
    arguments = "arguments" if call_type == "function" else "input"
    return ToolCall.model_construct(
        id=_string(index, item, "call_id", non_empty=True),
        name=_string(index, item, "name", non_empty=True),
        arguments=_string(index, item, arguments),
        call_type=call_type,
        function_extra={},
        extra={k: v for k, v in item.items() if k not in ("type", "call_id", "name", arguments)},
    )


def _output(index: int, item: JsonObject, item_type: str) -> ToolResult:
    output = _content(index, "output", item.get("output"), "input_text")
    if output is None:
        raise _fail(index, "output", f"a {item_type} needs output, got null")
    extra = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
    if item_type == "custom_tool_call_output":
        extra[ITEM_MARK] = "custom"
    return bare_result(_string(index, item, "call_id", non_empty=True), output, extra)


def _opaque(item: JsonObject, item_type: str) -> TextMessage:
    is_input = item_type in _USER_ITEMS or item_type.endswith("_output")
    part = OtherPart.model_construct(kind="other", raw=dict(item))
    return bare_text(Role.USER if is_input else Role.ASSISTANT, (part,), {ITEM_MARK: "item"})


@dataclass
class Turn:
    """The model-output items of one assistant message, as they are read."""

    index: int
    carry: JsonObject
    stage: Stage = _REASONING
    reasoning: list[JsonObject] = field(default_factory=list)
    message: TextMessage | None = None
    calls: list[ToolCall] = field(default_factory=list)

    def build(self) -> TextMessage:
        message = self.message or bare_text(Role.ASSISTANT, None, {})
        built = message.model_copy(
            update={
                "tool_calls": tuple(self.calls) if self.calls else None,
                "reasoning_details": tuple(self.reasoning) if self.reasoning else None,
            }
        )
        if "message" in self.carry:
            built = restore_fields(
                built, self.carry["message"], self.index, f"{CARRY_KEY}.message", WHERE
            )
        return built


def _type_of(item: JsonObject) -> JsonValue:
    """An item's ``type``: ``"message"`` for a bare ``{"role", "content"}``."""
    item_type = item.get("type")
    return "message" if item_type is None and "role" in item else item_type


def _item_type(index: int, item: object) -> tuple[JsonObject, str]:
    if not isinstance(item, dict):
        raise _fail(index, "", f"expected an item object, got {json_type_name(item)}")
    item_type = _type_of(item)
    if not isinstance(item_type, str):
        raise _fail(index, "type", f"expected a string, got {json_type_name(item_type)}")
    return item, item_type


CALL_TYPES: Final = ("function_call", "custom_tool_call")
"""The items that are tool calls (:class:`ToolCall` ``function`` and ``custom``)."""
_STAGES: Final[dict[str, Stage]] = {"reasoning": _REASONING, **dict.fromkeys(CALL_TYPES, _CALLS)}
OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")


def item_stage(item: JsonObject) -> Stage | None:
    """Where ``item`` sits in an assistant turn (reasoning, message, calls); None for an
    item that is a message of its own (user input, a tool output, an opaque item)."""
    item_type = _type_of(item)
    if item_type == "message":
        return _MESSAGE if item.get("role") == "assistant" else None
    return _STAGES.get(item_type) if isinstance(item_type, str) else None


def continues(reached: Stage, stage: Stage) -> bool:
    """Whether an item of ``stage`` continues a turn that has ``reached`` a stage: calls
    always do, reasoning after reasoning does, a message after reasoning does."""
    return stage == _CALLS or stage > reached or stage == reached == _REASONING


def read_items(items: list[JsonValue]) -> list[tuple[int, ContextMessage]]:
    """Each message with the index of its first item."""
    out: list[tuple[int, ContextMessage]] = []
    turn: Turn | None = None

    def close() -> None:
        nonlocal turn
        if turn is not None:
            out.append((turn.index, turn.build()))
            turn = None

    for index, raw in enumerate(items):
        item, item_type = _item_type(index, raw)
        item, carry = split_carry(item, index, WHERE)
        stage = item_stage(item)
        if stage is None:
            close()
            message: ContextMessage
            if item_type == "message":
                message = _message_item(index, item)
            elif item_type in OUTPUTS:
                message = _output(index, item, item_type)
            else:
                message = _opaque(item, item_type)
            if "message" in carry:
                message = restore_fields(
                    message, carry["message"], index, f"{CARRY_KEY}.message", WHERE
                )
            out.append((index, message))
            continue
        if turn is None or carry.get("split") is True or not continues(turn.stage, stage):
            close()
            turn = Turn(index, carry)
        turn.stage = stage
        if stage == _REASONING:
            turn.reasoning.append(item)
        elif stage == _MESSAGE:
            turn.message = _message_item(index, item)
        else:
            call = _call(index, item)
            if "call" in carry:
                call = restore_fields(call, carry["call"], index, f"{CARRY_KEY}.call", WHERE)
            turn.calls.append(call)
    close()
    return out
