"""Reading Anthropic turns into internal messages (:mod:`forge_domain.formats._anthropic`).

A native turn's layout that the internal model has no field for is kept in
``extra[LAYOUT_KEY]``: ``order`` (block order when not reasoning, content, calls; or
results before content), ``string`` (an assistant turn whose content is a string),
``own_turn`` (a user turn right after a results-only turn, which the writer would
otherwise join), ``turn`` (the keys of a results-only turn), ``no_content`` (a result
without ``content``).
"""

from __future__ import annotations

from typing import Final

from forge_domain._errors import InvalidMessage
from forge_domain._json import JsonObject, JsonValue, json_type_name
from forge_domain._messages import (
    Content,
    ContentPart,
    ContextMessage,
    Role,
    TextMessage,
    TextPart,
    ToolResult,
)
from forge_domain.formats._anthropic_blocks import REASONING_TYPES, fail, read_call, read_part
from forge_domain.formats._carry import bare_result, bare_text, restore_fields, shown, split_carry
from forge_domain.formats._openai import read_usage

__all__: list[str] = []  # internal: turn and system reading of the Anthropic codec

LAYOUT_KEY: Final = "_anthropic"
"""``extra`` key holding a native turn's layout (``order``, ``string``, ``own_turn`` …)."""
LAYOUT_ONLY: Final = ("order", "string", "no_content")
"""Layout the writer honours only while it fits the message; never carried."""
_ORDER: Final = {"r": 0, "c": 1, "u": 2}
"""Block letters of a turn: reasoning or tool_result, content, tool_use."""


def flags_of(message: ContextMessage) -> JsonObject:
    flags = message.extra.get(LAYOUT_KEY)
    return flags if isinstance(flags, dict) else {}


def flagged(extra: JsonObject, flags: JsonObject) -> JsonObject:
    return {**extra, LAYOUT_KEY: flags} if flags else extra


def _canonical(order: str) -> str:
    return "".join(sorted(order, key=_ORDER.__getitem__))


def _collapsed(parts: list[ContentPart]) -> Content:
    """One plain non-empty text part reads as a string; none as None.

    An empty text block stays a part: as the string ``""`` it would be written as no
    block at all.
    """
    if not parts:
        return None
    only = parts[0]
    if len(parts) == 1 and isinstance(only, TextPart) and not only.extra and only.text:
        return only.text
    return tuple(parts)


def _blocks(index: int, content: list[JsonValue]) -> list[tuple[str, JsonObject, JsonObject]]:
    """Each block's type, the block without its carry, and the carry."""
    out: list[tuple[str, JsonObject, JsonObject]] = []
    for position, raw in enumerate(content):
        where = f"content[{position}]"
        if not isinstance(raw, dict):
            raise fail(index, where, f"expected a content block object, got {json_type_name(raw)}")
        kind = raw.get("type")
        if not isinstance(kind, str):
            raise fail(index, f"{where}.type", f"expected a string, got {json_type_name(kind)}")
        block, carry = split_carry(raw, index, "messages")
        out.append((kind, block, carry))
    return out


def _result(index: int, where: str, block: JsonObject, carry: JsonObject) -> ToolResult:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise fail(
            index,
            f"{where}.tool_use_id",
            f"expected a non-empty string, got {json_type_name(call_id)}",
        )
    flags: JsonObject = {}
    raw = block.get("content")
    content: str | tuple[ContentPart, ...]
    if "content" not in block:
        content, flags["no_content"] = "", True
    elif isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = tuple(
            read_part(index, f"{where}.content[{at}]", part, kind)
            for at, (kind, part, _) in enumerate(_blocks(index, raw))
        )
    else:
        raise fail(
            index, f"{where}.content", f"expected a string or an array, got {json_type_name(raw)}"
        )
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise fail(
            index, f"{where}.is_error", f"expected a boolean, got {json_type_name(is_error)}"
        )
    modelled = ("type", "tool_use_id", "content") + (("is_error",) if is_error else ())
    result = bare_result(
        call_id,
        content,
        flagged({k: v for k, v in block.items() if k not in modelled}, flags),
        is_error=is_error,
    )
    if "message" in carry:
        result = restore_fields(
            result, carry["message"], index, f"{where}._forge.message", "messages"
        )
    return result


def _assistant(
    index: int, blocks: list[tuple[str, JsonObject, JsonObject]], extra: JsonObject
) -> TextMessage:
    order, reasoning, parts, calls = [], [], [], []
    for position, (kind, block, carry) in enumerate(blocks):
        where = f"content[{position}]"
        if kind in REASONING_TYPES:
            order.append("r")
            reasoning.append(block)
        elif kind == "tool_use":
            order.append("u")
            call = read_call(index, where, block, carry)
            if "call" in carry:
                call = restore_fields(
                    call, carry["call"], index, f"{where}._forge.call", "messages"
                )
            calls.append(call)
        elif kind == "tool_result":
            raise fail(index, f"{where}.type", "a tool_result block belongs in a user turn")
        else:
            order.append("c")
            parts.append(read_part(index, where, block, kind))
    flags: JsonObject = {}
    letters = "".join(order)
    if letters != _canonical(letters):
        flags["order"] = letters
    message = bare_text(Role.ASSISTANT, _collapsed(parts), flagged(extra, flags))
    return message.model_copy(
        update={
            "tool_calls": tuple(calls) if calls else None,
            "reasoning_details": tuple(reasoning) if reasoning else None,
        }
    )


def _user(
    index: int,
    blocks: list[tuple[str, JsonObject, JsonObject]],
    extra: JsonObject,
    turn_extra: JsonObject,
) -> list[ContextMessage]:
    """A user turn: its tool results, then its other blocks as one message."""
    order, results, parts = [], [], []
    for position, (kind, block, carry) in enumerate(blocks):
        where = f"content[{position}]"
        if kind == "tool_result":
            order.append("r")
            results.append(_result(index, where, block, carry))
        elif kind == "tool_use":
            raise fail(index, f"{where}.type", "a tool_use block belongs in an assistant turn")
        else:
            order.append("c")
            parts.append(read_part(index, where, block, kind))
    if not results:
        return [bare_text(Role.USER, tuple(parts), extra)]
    out: list[ContextMessage] = list(results)
    if parts:
        letters = "".join(order)
        flags: JsonObject = {"order": letters} if letters != _canonical(letters) else {}
        out.append(bare_text(Role.USER, _collapsed(parts), flagged(extra, flags)))
    elif turn_extra:
        first = out[0]
        flags = {**flags_of(first), "turn": turn_extra}
        out[0] = first.model_copy(update={"extra": flagged(first.extra, flags)})
    return out


def read_turn(index: int, raw: object, after_results: bool) -> tuple[list[ContextMessage], bool]:
    """The messages of one turn, and whether the turn holds only tool results."""
    if not isinstance(raw, dict):
        raise fail(index, "", f"expected a message object, got {json_type_name(raw)}")
    turn, carry = split_carry(raw, index, "messages")
    role = turn.get("role")
    if role not in ("user", "assistant"):
        raise fail(index, "role", f"unknown role {shown(role)}; expected user or assistant")
    if "content" not in turn:
        raise fail(index, "content", "a message needs content")
    content = turn["content"]
    turn_extra = {k: v for k, v in turn.items() if k not in ("role", "content")}
    extra = {k: v for k, v in turn_extra.items() if k != "usage" or v is None}
    flags: JsonObject = {}
    if isinstance(content, str):
        if role == "assistant":
            flags["string"] = True
        messages: list[ContextMessage] = [
            bare_text(Role.USER if role == "user" else Role.ASSISTANT, content, extra)
        ]
    elif isinstance(content, list):
        blocks = _blocks(index, content)
        messages = (
            [_assistant(index, blocks, extra)]
            if role == "assistant"
            else _user(index, blocks, extra, turn_extra)
        )
    else:
        raise fail(
            index,
            "content",
            f"expected a string or an array of blocks, got {json_type_name(content)}",
        )
    if role == "user" and after_results:
        flags["own_turn"] = True
    if flags:
        first = messages[0]
        messages[0] = first.model_copy(
            update={"extra": flagged(first.extra, {**flags_of(first), **flags})}
        )
    last = messages[-1]
    if turn.get("usage") is not None and isinstance(last, TextMessage):
        messages[-1] = last.model_copy(update={"usage": read_usage(index, turn["usage"])})
    if "message" in carry:
        messages[-1] = restore_fields(
            messages[-1], carry["message"], index, "_forge.message", "messages"
        )
    pure = role == "user" and all(isinstance(m, ToolResult) for m in messages)
    return messages, pure


def read_system(raw: JsonValue) -> TextMessage:
    if isinstance(raw, str):
        return bare_text(Role.SYSTEM, raw, {})
    if not isinstance(raw, list):
        raise fail(
            0, "", f"expected a string or an array of blocks, got {json_type_name(raw)}", "system"
        )
    parts: list[ContentPart] = []
    carry: JsonObject = {}
    for position, block in enumerate(raw):
        if not isinstance(block, dict):
            raise fail(
                position,
                "",
                f"expected a content block object, got {json_type_name(block)}",
                "system",
            )
        kind = block.get("type")
        if not isinstance(kind, str):
            raise fail(position, "type", f"expected a string, got {json_type_name(kind)}", "system")
        block, found = split_carry(block, position, "system")
        carry = carry or found
        try:
            parts.append(read_part(position, "", block, kind))
        except InvalidMessage as exc:
            raise fail(position, exc.field.lstrip("."), exc.problem, "system") from exc
    message = bare_text(Role.SYSTEM, tuple(parts), {})
    if "message" in carry:
        message = restore_fields(message, carry["message"], 0, "_forge.message", "system")
    return message
