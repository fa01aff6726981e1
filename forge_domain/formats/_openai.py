"""Reading and writing OpenAI chat-completions message lists, losslessly.

Every key this module does not model is kept in the model's ``extra`` and written
back unchanged, so ``to_openai(from_openai(x)) == x`` for any list a provider
accepts. A modelled key written explicitly with the value that means "absent"
(``"name": null``, ``"tool_calls": null``, ``"is_error": false`` …) is kept in
``extra`` too; writing never lets ``extra`` override a modelled field. Malformed
input raises :class:`InvalidMessage` naming the index and field.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Final, cast

from forge_domain._errors import InvalidMessage, InvalidTranscript
from forge_domain._json import JsonObject, JsonValue, json_type_name
from forge_domain._messages import (
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
from forge_domain._usage import TokenCount, Usage
from forge_domain.formats._carry import bare_result, with_extra
from forge_domain.formats._carry import shown as shown  # re-exported for the files layer
from forge_domain.formats._openai_plain import _plain_message

__all__ = ["message_from_openai", "message_to_openai"]

TEXT_ROLES: Final = {
    "system": Role.SYSTEM,
    "developer": Role.SYSTEM,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
}
"""The wire roles of a text message (``developer`` is a system message), as OpenAI's chat
and Responses formats spell them."""
_TEXT_KEYS = frozenset(
    {
        "role",
        "content",
        "tool_calls",
        "reasoning_details",
        "reasoning_content",
        "name",
        "droppable",
        "usage",
    }
)
_TOOL_KEYS = frozenset({"role", "tool_call_id", "content", "name", "is_error", "usage"})
_ABSENT: dict[str, JsonValue] = {
    "tool_calls": None,
    "reasoning_details": None,
    "reasoning_content": None,
    "name": None,
    "usage": None,
    "droppable": False,
    "is_error": False,
    "type": None,
    "detail": None,
}
"""Values of modelled keys that the models cannot tell from a missing key."""


def _unmodelled(raw: Mapping[str, JsonValue], modelled: Collection[str]) -> JsonObject:
    """Unknown keys, plus modelled keys spelled out with their "absent" value."""
    return {k: v for k, v in raw.items() if k not in modelled or (k in _ABSENT and v is _ABSENT[k])}


def _parse_parts(index: int, field: str, parts: list[JsonValue]) -> tuple[ContentPart, ...]:
    parsed: list[ContentPart] = []
    for position, part in enumerate(parts):
        where = f"{field}[{position}]"
        if not isinstance(part, dict):
            raise InvalidMessage(
                index, where, f"expected a content part object, got {json_type_name(part)}"
            )
        part_type = part.get("type")
        if part_type == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise InvalidMessage(
                    index, f"{where}.text", f"expected a string, got {json_type_name(text)}"
                )
            extra = {k: v for k, v in part.items() if k not in ("type", "text")}
            parsed.append(TextPart.model_construct(kind="text", text=text, extra=extra))
        elif part_type == "image_url" and isinstance(part.get("image_url"), dict):
            image = cast(JsonObject, part["image_url"])
            url = image.get("url")
            if not isinstance(url, str):
                raise InvalidMessage(
                    index, f"{where}.image_url.url", f"expected a string, got {json_type_name(url)}"
                )
            detail = image.get("detail")
            if detail is not None and not isinstance(detail, str):
                raise InvalidMessage(index, f"{where}.image_url.detail", "expected a string")
            parsed.append(
                ImagePart.model_construct(
                    kind="image",
                    url=url,
                    detail=detail,
                    url_extra=_unmodelled(image, ("url", "detail")),
                    extra={k: v for k, v in part.items() if k not in ("type", "image_url")},
                )
            )
        elif part_type == "image_url":
            raise InvalidMessage(
                index,
                f"{where}.image_url",
                f"expected an object with a url, got {json_type_name(part.get('image_url'))}",
            )
        elif isinstance(part_type, str):
            parsed.append(OtherPart.model_construct(kind="other", raw=dict(part)))
        else:
            raise InvalidMessage(
                index, f"{where}.type", f"expected a string, got {json_type_name(part_type)}"
            )
    return tuple(parsed)


def _parse_content(index: int, raw: JsonValue) -> str | tuple[ContentPart, ...] | None:
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return _parse_parts(index, "content", raw)
    raise InvalidMessage(
        index, "content", f"expected a string, an array of parts or null, got {json_type_name(raw)}"
    )


def _parse_tool_calls(index: int, raw: JsonValue) -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        raise InvalidMessage(index, "tool_calls", f"expected an array, got {json_type_name(raw)}")
    calls: list[ToolCall] = []
    for position, call in enumerate(raw):
        where = f"tool_calls[{position}]"
        if not isinstance(call, dict):
            raise InvalidMessage(index, where, f"expected an object, got {json_type_name(call)}")
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidMessage(
                index, f"{where}.id", f"expected a non-empty string, got {json_type_name(call_id)}"
            )
        call_type = call.get("type")
        if call_type is not None and not isinstance(call_type, str):
            raise InvalidMessage(
                index, f"{where}.type", f"expected a string, got {json_type_name(call_type)}"
            )
        function = call.get("function")
        if not isinstance(function, dict):
            raise InvalidMessage(
                index, f"{where}.function", f"expected an object, got {json_type_name(function)}"
            )
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidMessage(
                index,
                f"{where}.function.name",
                f"expected a non-empty string, got {json_type_name(name)}",
            )
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            raise InvalidMessage(
                index,
                f"{where}.function.arguments",
                f"expected a JSON string, got {json_type_name(arguments)}",
            )
        calls.append(
            ToolCall.model_construct(
                id=call_id,
                name=name,
                arguments=arguments,
                call_type=call_type,
                function_extra={
                    k: v for k, v in function.items() if k not in ("name", "arguments")
                },
                extra=_unmodelled(call, ("id", "type", "function")),
            )
        )
    return tuple(calls)


def _token(raw: JsonValue) -> TokenCount:
    return (
        TokenCount.actual(raw)
        if isinstance(raw, int) and not isinstance(raw, bool)
        else TokenCount()
    )


def _cost(index: int, raw: JsonValue) -> float | None:
    """``usage.cost`` as a float: None unless a number; a number no float holds is an error."""
    if not isinstance(raw, int | float) or isinstance(raw, bool):
        return None
    try:
        cost = float(raw)
    except OverflowError:
        cost = math.inf
    if not math.isfinite(cost):
        shown = repr(raw) if isinstance(raw, float) else "an integer beyond 1.8e308"
        raise InvalidMessage(index, "usage.cost", f"expected a finite number, got {shown}")
    return cost


def _input_output_usage(index: int, raw: JsonObject) -> Usage:
    """Usage in Anthropic's or the Responses API's words (``input_tokens``, ``output_tokens``).

    Anthropic's ``input_tokens`` leave out the cache (``cache_read_input_tokens`` and
    ``cache_creation_input_tokens`` are added); the Responses API's include it and give
    ``total_tokens``.
    """

    def count(value: JsonValue) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    fresh, written = count(raw.get("input_tokens")), count(raw.get("output_tokens"))
    read = count(raw.get("cache_read_input_tokens"))
    created = count(raw.get("cache_creation_input_tokens")) or 0
    prompt = None if fresh is None else fresh + (read or 0) + created
    total = count(raw.get("total_tokens"))
    if total is None and prompt is not None and written is not None:
        total = prompt + written
    details = raw.get("input_tokens_details")
    if read is None and isinstance(details, dict):
        read = count(details.get("cached_tokens"))
    return Usage(
        prompt_tokens=_token(prompt),
        completion_tokens=_token(written),
        total_tokens=_token(total),
        cached_tokens=_token(read),
        cost=_cost(index, raw.get("cost")),
        raw=dict(raw),
    )


def read_usage(index: int, raw: JsonValue) -> Usage:
    """A message's ``usage``: OpenAI's words, or ``input_tokens``/``output_tokens`` (Anthropic,
    Responses); ``index`` is used in error messages."""
    if not isinstance(raw, dict):
        raise InvalidMessage(index, "usage", f"expected an object, got {json_type_name(raw)}")
    if "prompt_tokens" not in raw and ("input_tokens" in raw or "output_tokens" in raw):
        return _input_output_usage(index, raw)
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else raw.get("cached_tokens")
    return Usage(
        prompt_tokens=_token(raw.get("prompt_tokens")),
        completion_tokens=_token(raw.get("completion_tokens")),
        total_tokens=_token(raw.get("total_tokens")),
        cached_tokens=_token(cached),
        cost=_cost(index, raw.get("cost")),
        raw=dict(raw),
    )


def _optional_str(index: int, raw: Mapping[str, JsonValue], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidMessage(index, key, f"expected a string, got {json_type_name(value)}")
    return value


def message_from_openai(index: int, raw: object) -> ContextMessage:
    """Read one OpenAI message; ``index`` is used in error messages."""
    if not isinstance(raw, dict):
        raise InvalidMessage(index, "", f"expected a message object, got {json_type_name(raw)}")
    message = cast(JsonObject, raw)
    role = message.get("role")
    if role == "tool":
        return _tool_from_openai(index, message)
    if not isinstance(role, str) or role not in TEXT_ROLES:
        raise InvalidMessage(
            index,
            "role",
            f"unknown role {shown(role)}; expected system, developer, user, assistant or tool",
        )
    reasoning_details = message.get("reasoning_details")
    if reasoning_details is not None and not (
        isinstance(reasoning_details, list) and all(isinstance(d, dict) for d in reasoning_details)
    ):
        raise InvalidMessage(index, "reasoning_details", "expected an array of objects")
    droppable = message.get("droppable", False)
    if not isinstance(droppable, bool):
        raise InvalidMessage(
            index, "droppable", f"expected a boolean, got {json_type_name(droppable)}"
        )
    raw_calls = message.get("tool_calls")
    return TextMessage.model_construct(
        kind="text",
        role=TEXT_ROLES[role],
        content=_parse_content(index, message.get("content")),
        tool_calls=None if raw_calls is None else _parse_tool_calls(index, raw_calls),
        reasoning_details=None
        if reasoning_details is None
        else tuple(cast(list[JsonObject], reasoning_details)),
        reasoning_content=_optional_str(index, message, "reasoning_content"),
        name=_optional_str(index, message, "name"),
        droppable=droppable,
        usage=None if message.get("usage") is None else read_usage(index, message["usage"]),
        span_usage=None,
        summary_data=None,
        wire_role=role if role == "developer" else None,
        content_absent="content" not in message,
        extra=_unmodelled(message, _TEXT_KEYS),
    )


def _tool_from_openai(index: int, message: JsonObject) -> ToolResult:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidMessage(
            index,
            "tool_call_id",
            f"a tool result needs a non-empty call id, got {json_type_name(call_id)}",
        )
    content = _parse_content(index, message.get("content"))
    if content is None:
        raise InvalidMessage(index, "content", "a tool result needs content, got null")
    is_error = message.get("is_error", False)
    if not isinstance(is_error, bool):
        raise InvalidMessage(
            index, "is_error", f"expected a boolean, got {json_type_name(is_error)}"
        )
    return bare_result(
        call_id,
        content,
        _unmodelled(message, _TOOL_KEYS),
        is_error=is_error,
        name=_optional_str(index, message, "name"),
        usage=None if message.get("usage") is None else read_usage(index, message["usage"]),
    )


def messages_from_openai(
    raw: object, plain: Sequence[ContextMessage | None] | None = None
) -> list[ContextMessage]:
    """Read a whole OpenAI message list; ``plain``: what :func:`plain_messages` read of it,
    when the caller has it already."""
    if not isinstance(raw, list):
        raise InvalidTranscript([f"expected a list of messages, got {json_type_name(raw)}"])
    if plain is None:
        return [_plain_message(item) or message_from_openai(i, item) for i, item in enumerate(raw)]
    return [
        read or message_from_openai(i, item)
        for i, (read, item) in enumerate(zip(plain, raw, strict=True))
    ]


def plain_messages(raw: list[JsonValue], *, taking: bool = False) -> list[ContextMessage | None]:
    """The messages of ``raw`` of the plain shape (a role, text or null content, plain tool
    calls, a tool result with text, no other key), read; None for every other entry.

    A plain message holds only strings, in containers at most three levels below it: the
    transcript reader need not walk it for numbers or depth (plans/008-performance.md).

    ``taking``: each entry read is replaced by None in ``raw``, so its decoded object goes
    as its message is built, not after the last one (for a caller that owns ``raw`` and
    reads the rest with :func:`messages_from_openai` given these messages).
    """
    if not taking:
        return [_plain_message(item) for item in raw]
    read: list[ContextMessage | None] = []
    for index, item in enumerate(raw):
        message = _plain_message(item)
        if message is not None:
            raw[index] = None
        read.append(message)
    return read


def _parts_to_openai(parts: tuple[ContentPart, ...]) -> list[JsonValue]:
    out: list[JsonValue] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append(with_extra({"type": "text", "text": part.text}, part.extra))
        elif isinstance(part, ImagePart):
            image: JsonObject = {"url": part.url}
            if part.detail is not None:
                image["detail"] = part.detail
            with_extra(image, part.url_extra)
            out.append(with_extra({"type": "image_url", "image_url": image}, part.extra))
        else:
            out.append(dict(part.raw))
    return out


def _content_to_openai(content: str | tuple[ContentPart, ...] | None) -> JsonValue:
    if content is None or isinstance(content, str):
        return content
    return _parts_to_openai(content)


def _usage_to_openai(usage: Usage) -> JsonObject:
    if usage.raw is not None:
        return dict(usage.raw)
    out: JsonObject = {
        "prompt_tokens": usage.prompt_tokens.value,
        "completion_tokens": usage.completion_tokens.value,
        "total_tokens": usage.total_tokens.value,
    }
    if usage.cached_tokens.value:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cached_tokens.value}
    if usage.cost is not None:
        out["cost"] = usage.cost
    return out


def tool_call_to_openai(call: ToolCall) -> JsonObject:
    """Write one tool call in OpenAI's shape."""
    out: JsonObject = {"id": call.id}
    if call.call_type is not None:
        out["type"] = call.call_type
    out["function"] = with_extra(
        {"name": call.name, "arguments": call.arguments}, call.function_extra
    )
    with_extra(out, call.extra)
    return out


def message_to_openai(message: ContextMessage) -> JsonObject:
    """Write one message in OpenAI's shape (usage and droppable only when present)."""
    if isinstance(message, ToolResult):
        out: JsonObject = {
            "role": "tool",
            "tool_call_id": message.call_id,
            "content": _content_to_openai(message.content),
        }
        if message.name is not None:
            out["name"] = message.name
        if message.is_error:
            out["is_error"] = True
    else:
        # wire_role and content_absent describe the message as read; a copy whose role or
        # content was changed since is written as it now is.
        wire_role = message.wire_role
        role = message.role.value
        out = {
            "role": wire_role if wire_role and TEXT_ROLES.get(wire_role) == message.role else role
        }
        if not message.content_absent or message.content is not None:
            out["content"] = _content_to_openai(message.content)
        if message.name is not None:
            out["name"] = message.name
        if message.tool_calls is not None:
            out["tool_calls"] = [tool_call_to_openai(call) for call in message.tool_calls]
        if message.reasoning_content is not None:
            out["reasoning_content"] = message.reasoning_content
        if message.reasoning_details is not None:
            out["reasoning_details"] = [dict(d) for d in message.reasoning_details]
        if message.droppable:
            out["droppable"] = True
    if message.usage is not None:
        out["usage"] = _usage_to_openai(message.usage)
    with_extra(out, message.extra)
    return out
