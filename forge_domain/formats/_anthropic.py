"""Reading and writing Anthropic Messages conversations, losslessly.

Turns map onto the one internal model:

* ``system`` (a string or text blocks) is the first message, a system message;
* an assistant turn is one assistant :class:`TextMessage`: ``text`` (and any other
  block) are its content, ``tool_use`` blocks its :class:`ToolCall` (arguments as JSON
  text), ``thinking``/``redacted_thinking`` blocks are kept whole, signatures and all,
  in ``reasoning_details``;
* a user turn's ``tool_result`` blocks are :class:`ToolResult` messages (``is_error``
  included), and its other blocks one user message after them.

Writing regroups by Anthropic's rules: the results of a call are the first blocks of
the user turn right after it, and a user message after results joins their turn.
Adjacent turns of one role are not merged: the API combines them itself
("consecutive user or assistant turns in your request will be combined into a
single turn"), and keeping them apart keeps every message boundary.

What Anthropic cannot say of a message from another format is carried under
``_forge`` (:mod:`forge_domain.formats._carry`); the layout of a native turn that the
internal model has no field for (block order, a string content, a turn of its own)
is kept in ``extra["_anthropic"]`` and honoured while it still fits the message.
So ``messages_to_anthropic(messages_from_anthropic(x)) == x`` and the reverse.
Malformed input raises :class:`InvalidMessage` naming the turn index and field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from forge_domain._errors import InvalidTranscript
from forge_domain._json import JsonObject, JsonValue, json_type_name
from forge_domain._messages import Content, ContextMessage, Role, TextMessage, ToolResult
from forge_domain.formats._anthropic_blocks import (
    REASONING_TYPES,
    write_call,
    write_part,
    write_usage,
)
from forge_domain.formats._anthropic_read import (
    LAYOUT_KEY,
    LAYOUT_ONLY,
    flagged,
    flags_of,
    read_system,
    read_turn,
)
from forge_domain.formats._carry import add_carry, carried_fields, carry_calls, with_extra

__all__ = ["messages_from_anthropic", "messages_to_anthropic"]


def messages_from_anthropic(messages: object, *, system: JsonValue = None) -> list[ContextMessage]:
    """Read an Anthropic ``messages`` list (and the request's ``system``, if any).

    Raises:
        InvalidMessage: naming ``messages[index]`` (or ``system[index]``) and the field.
        InvalidTranscript: when ``messages`` is not a list.
    """
    if not isinstance(messages, list):
        raise InvalidTranscript([f"expected a list of messages, got {json_type_name(messages)}"])
    out: list[ContextMessage] = [] if system is None else [read_system(system)]
    after_results = False
    for index, raw in enumerate(messages):
        read, after_results = read_turn(index, raw, after_results)
        out.extend(read)
    return out


# -- writing --------------------------------------------------------------------------


def _fits(order: object, letters: str) -> bool:
    return isinstance(order, str) and sorted(order) == sorted(letters)


def _content_blocks(content: Content) -> list[JsonObject]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [write_part(part) for part in content]


def _comparable(message: ContextMessage, back: ContextMessage) -> ContextMessage:
    """``message`` with the layout flags ``back`` was written with (stale ones dropped).

    ``own_turn`` is stale when the message no longer follows a results-only turn; when
    ``back`` has it and ``message`` does not, the difference is carried (a message from
    another format that could not join the results turn).
    """
    stale = "own_turn" if "own_turn" not in flags_of(back) else ""
    flags = {k: v for k, v in flags_of(message).items() if k not in (*LAYOUT_ONLY, stale)}
    flags.update({k: v for k, v in flags_of(back).items() if k in LAYOUT_ONLY})
    extra = flagged({k: v for k, v in message.extra.items() if k != LAYOUT_KEY}, flags)
    return message if extra == message.extra else message.model_copy(update={"extra": extra})


def _carry_message(item: JsonObject, message: ContextMessage, back: ContextMessage) -> None:
    carried = carried_fields(_comparable(message, back), back)
    if carried:
        add_carry(item, "message", carried)


def _result_block(
    message: ToolResult, position: int, turn: JsonObject | None, after: bool
) -> JsonObject:
    """The ``tool_result`` block; ``turn`` is the new turn it opens (None: it joins one).
    ``position`` (the message's) names it in an error."""
    flags = flags_of(message)
    block: JsonObject = {"type": "tool_result", "tool_use_id": message.call_id}
    if not (flags.get("no_content") and message.content == ""):
        content = message.content
        block["content"] = content if isinstance(content, str) else [write_part(p) for p in content]
    if message.is_error:
        block["is_error"] = True
    with_extra(block, message.extra, LAYOUT_KEY)
    alone: JsonObject = {**(turn or {"role": "user"}), "content": [block]}
    back = read_turn(position, alone, after)[0][0]
    _carry_message(block, message, back)
    return block


def _assistant_blocks(message: TextMessage) -> list[JsonObject]:
    reasoning = [
        dict(d) for d in message.reasoning_details or () if d.get("type") in REASONING_TYPES
    ]
    content = _content_blocks(message.content)
    calls: list[JsonObject] = []
    for call in message.tool_calls or ():
        block, spacing = write_call(call)
        if spacing != "default":
            add_carry(block, "spacing", spacing)
        calls.append(block)
    groups = {"r": iter(reasoning), "c": iter(content), "u": iter(calls)}
    letters = "r" * len(reasoning) + "c" * len(content) + "u" * len(calls)
    order = flags_of(message).get("order")
    chosen = order if isinstance(order, str) and _fits(order, letters) else letters
    return [next(groups[letter]) for letter in chosen]


def _text_turn(message: TextMessage) -> JsonObject:
    content: JsonValue
    if message.role == Role.ASSISTANT:
        role = "assistant"
        text = message.content
        plain = not (message.tool_calls or message.reasoning_details)
        if isinstance(text, str) and plain and flags_of(message).get("string"):
            content = text
        else:
            content = list[JsonValue](_assistant_blocks(message))
    else:
        role = "user"
        raw = message.content
        content = raw if isinstance(raw, str) else list[JsonValue](_content_blocks(raw))
    turn: JsonObject = {"role": role, "content": content}
    if message.usage is not None:
        turn["usage"] = write_usage(message.usage)
    return with_extra(turn, message.extra, LAYOUT_KEY)


def _checked_turn(message: TextMessage, position: int, after_results: bool) -> JsonObject:
    turn = _text_turn(message)
    read = read_turn(position, turn, after_results)[0]
    back = read[-1]
    _carry_message(turn, message, back)
    blocks = turn["content"]
    carry_calls(message, back, blocks if isinstance(blocks, list) else [], ("tool_use",))
    return turn


def _joined(
    turn: JsonObject,
    held: list[ContextMessage],
    message: TextMessage,
    position: int,
    after: bool,
) -> bool:
    """Add ``message``'s blocks to the results ``turn`` when that reads back exactly."""
    results = cast(list[JsonObject], turn["content"])  # a results turn this module built
    mine = _content_blocks(message.content)
    if not mine:
        return False
    letters = "r" * len(results) + "c" * len(mine)
    order = flags_of(message).get("order")
    chosen = order if isinstance(order, str) and _fits(order, letters) else letters
    groups = {"r": iter(results), "c": iter(mine)}
    candidate: JsonObject = {**turn, "content": [next(groups[letter]) for letter in chosen]}
    if message.usage is not None:
        candidate["usage"] = write_usage(message.usage)
    with_extra(candidate, message.extra, LAYOUT_KEY)
    read = read_turn(position, candidate, after)[0]
    if read != [*held, _comparable(message, read[-1])]:
        return False
    turn.clear()
    turn.update(candidate)
    return True


def _system_value(message: TextMessage) -> JsonValue:
    raw = message.content
    value: JsonValue = raw if isinstance(raw, str) else list[JsonValue](_content_blocks(raw))
    if not carried_fields(message, read_system(value)):
        return value
    text: JsonObject = {"type": "text", "text": raw if isinstance(raw, str) else ""}
    blocks = [text] if isinstance(raw, str) else _content_blocks(raw) or [text]
    listed = list[JsonValue](blocks)
    add_carry(blocks[0], "message", carried_fields(message, read_system(listed)))
    return listed


def messages_to_anthropic(
    messages: Iterable[ContextMessage],
) -> tuple[JsonValue, list[JsonObject]]:
    """Write internal messages as Anthropic's ``system`` (None when there is none) and turns.

    Raises:
        InvalidMessage: naming the position of a message whose blocks do not read back
            (an opaque block of the wrong turn, a bad unmodelled key).
    """
    system: JsonValue = None
    turns: list[JsonObject] = []
    results: JsonObject | None = None  # the last turn while it holds only tool results
    held: list[ContextMessage] = []  # the messages of that turn
    after = False  # whether that turn itself came right after a results-only turn
    for position, message in enumerate(messages):
        if isinstance(message, TextMessage):
            if position == 0 and message.role == Role.SYSTEM:
                system = _system_value(message)
                continue
            own = bool(flags_of(message).get("own_turn"))
            joinable = message.role == Role.USER and results is not None and not own
            if (
                joinable
                and results is not None
                and _joined(results, held, message, position, after)
            ):
                results, held = None, []
                continue
            turns.append(_checked_turn(message, position, results is not None))
            results, held = None, []
            continue
        own = bool(flags_of(message).get("own_turn"))
        content = None if results is None else results["content"]
        if isinstance(content, list) and not own:
            content.append(_result_block(message, position, None, False))
            held.append(message)
            continue
        after = results is not None
        turn: JsonObject = {"role": "user"}
        extra = flags_of(message).get("turn")
        if isinstance(extra, dict):
            with_extra(turn, extra, LAYOUT_KEY)
        turn["content"] = [_result_block(message, position, turn, after)]
        turns.append(turn)
        results, held = turn, [message]
    return system, turns
