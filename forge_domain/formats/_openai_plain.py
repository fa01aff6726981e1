"""The fast path of reading OpenAI messages: the plain shape most messages have.

An optimisation kept for its measured gain (plans/008-performance.md, row 8): it builds
what :func:`~forge_domain.formats._openai.message_from_openai` builds for a plain message,
and returns None for any other, which the general reader then reads.
``tests/domain/test_openai_format_plain.py`` checks that both readers agree.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from forge_domain._messages import ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain._token_estimates import CHARS_PER_TOKEN
from forge_domain._unvalidated import built as _built
from forge_domain._unvalidated import key_sharing as _key_sharing

__all__: list[str] = []  # internal: _plain_message, for openai_format.messages_from_openai

_PLAIN_ROLES = {"system": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT}


def _defaults(model: type[BaseModel], made: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``model`` before its last, ``made``, ones (each a new dict by
    default), with their defaults (required fields: None, for the caller to fill)."""
    fields = model.model_fields
    if tuple(fields)[-len(made) :] != made or any(
        fields[k].default_factory is not dict for k in made
    ):  # pragma: no cover - a model changed: this reader must follow it
        raise TypeError(f"{model.__name__}: fields {made} are not its last, made by dict()")
    return {k: None if f.is_required() else f.default for k, f in fields.items() if k not in made}


_TEXT_DEFAULTS = _key_sharing(
    {**_defaults(TextMessage, ("extra",)), "extra": None, "approx_tokens": None}
)
_RESULT_DEFAULTS = _key_sharing(
    {**_defaults(ToolResult, ("extra",)), "extra": None, "approx_tokens": None}
)
_CALL_DEFAULTS = _key_sharing(
    {**_defaults(ToolCall, ("function_extra", "extra")), "function_extra": None, "extra": None}
)
"""Each shape's fields in order, the made ones (``extra`` …) and the estimate last, each
filled by the reader (:func:`_key_sharing`)."""


_SET_TEXT = {"role", "content"}
_SET_TEXT_CALLS = {"role", "content", "tool_calls"}
_SET_RESULT = {"call_id", "content"}
_SET_CALL = {"id", "name", "arguments"}
"""The fields set of each plain shape, one set per shape shared by every model the reader
builds (about 216 bytes a message less; plans/008-performance.md, round 7a). Nothing changes
a frozen model's fields set in place: pydantic's copies take a copy of it."""


def _plain_message(raw: object) -> ContextMessage | None:
    """``message_from_openai(index, raw)`` for a message of the plain shape most messages
    have, else None (the general reader then reads it, or says what is wrong).

    Plain: a system, user or assistant message with text (or null) content and plain tool
    calls, or a tool result with text content; no other key. Its model holds what the
    validated construction of the fields that differ from their defaults holds (the same
    fields set, a new ``extra``), built without pydantic's validation, which could find
    nothing wrong: every value's type is checked here exactly (``type(x) is str``). About
    1 µs less per message and call than validating (plans/008-performance.md, round 6e).

    The message's token estimate is stored as it is built, from the lengths at hand
    (what its ``approx_tokens`` would compute: the characters of the content, the calls'
    names and arguments, at :data:`CHARS_PER_TOKEN` rounded up), in the ``__dict__`` slot
    its ``cached_property`` fills.
    """
    # Each shape's keys are told by their count and the keys read: a missing key reads as
    # None (or, for content, as ``raw`` itself), which no check below lets through.
    if type(raw) is not dict:
        return None
    role = raw.get("role")
    if role == "tool":
        call_id, content = raw.get("tool_call_id"), raw.get("content")
        if len(raw) != 3 or type(content) is not str or type(call_id) is not str or not call_id:
            return None
        fields = _RESULT_DEFAULTS.copy()
        fields["call_id"], fields["content"], fields["extra"] = call_id, content, {}
        fields["approx_tokens"] = -(-len(content) // CHARS_PER_TOKEN)
        return _built(ToolResult, fields, _SET_RESULT)
    if type(role) is not str or role not in _PLAIN_ROLES:
        return None
    content = raw.get("content", raw)
    if not (content is None or type(content) is str):
        return None
    if len(raw) != 2 and (len(raw) != 3 or "tool_calls" not in raw):
        return None
    chars = 0 if content is None else len(content)
    fields = _TEXT_DEFAULTS.copy()
    fields["role"], fields["content"], fields["extra"] = _PLAIN_ROLES[role], content, {}
    if "tool_calls" not in raw:
        fields["approx_tokens"] = -(-chars // CHARS_PER_TOKEN)
        return _built(TextMessage, fields, _SET_TEXT)
    calls = _plain_calls(raw["tool_calls"])
    if calls is None:
        return None
    for call in calls:
        chars += len(call.name) + len(call.arguments)
    fields["tool_calls"] = calls
    fields["approx_tokens"] = -(-chars // CHARS_PER_TOKEN)
    return _built(TextMessage, fields, _SET_TEXT_CALLS)


def _plain_calls(raw: object) -> tuple[ToolCall, ...] | None:
    """The calls of a plain ``tool_calls`` list (``id``, ``type: function``, a ``function``
    of ``name`` and ``arguments``, nothing else), or None."""
    if type(raw) is not list:
        return None
    calls: list[ToolCall] = []
    for call in raw:
        if type(call) is not dict or len(call) != 3:
            return None
        function, call_id = call.get("function"), call.get("id")
        if type(function) is not dict or len(function) != 2 or call.get("type") != "function":
            return None
        name, arguments = function.get("name"), function.get("arguments")
        if type(call_id) is not str or not call_id or type(name) is not str or not name:
            return None
        if type(arguments) is not str:
            return None
        fields = _CALL_DEFAULTS.copy()
        fields["id"], fields["name"], fields["arguments"] = call_id, name, arguments
        fields["function_extra"], fields["extra"] = {}, {}
        calls.append(_built(ToolCall, fields, _SET_CALL))
    return tuple(calls)
