"""Provider-validity checks: the invariant compaction must never break.

One rule set, checked in one pass over the messages (:func:`_scan`), and three
views of it: :func:`find_violations` reports every problem with the index of the
message at fault, :func:`is_valid` stops at the first, :func:`ensure_valid`
raises with them all. The ``openai`` dialect checks what OpenAI's
chat-completions API rejects; ``anthropic`` adds what Anthropic's Messages API
needs on top (a conversation that opens with a user turn, a user turn's
``tool_result`` blocks before its other blocks, thinking blocks signed). Tool results sit in
the user turn right after their call by construction of the first rule. The
content-part and call-type rules are chat completions' own: the ``anthropic`` and
``responses`` dialects (transcripts read from those formats, whose blocks and items
are written back as read) do not check them, nor does ``shared``, which the engines
check (a transcript's format rules are checked when it is read; compaction adds no
parts but a summary's text).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Final, Literal

from pydantic import BaseModel, ConfigDict

from forge_domain._errors import InvalidTranscript
from forge_domain._messages import ContentPart, ImagePart, Role, TextMessage, TextPart, ToolResult
from forge_domain.formats._anthropic_read import LAYOUT_KEY
from forge_domain.formats._carry import shown

if TYPE_CHECKING:  # only annotations: the core imports this package (Context.from_openai)
    from forge_domain._context import Context

Dialect = Literal["openai", "anthropic", "responses", "shared"]
"""Which provider's rules to check; ``shared``: the rules every format has (calls and
results, system messages, empty messages), the ones compaction could break."""

_RULES: Final = {
    "no_messages": "the conversation has no messages",
    "system_not_first": "system message after the conversation started",
    "first_turn_not_user": "the first non-system message must come from the user",
    "empty_message": "{role} message has no content",
    "no_user_turn": "the conversation has no user or assistant turn",
    "duplicate_tool_call_id": "tool call id {call_id} was already used at messages[{first}]",
    "tool_calls_on_non_assistant": "a {role} message carries tool calls",
    "tool_call_type": "tool_calls[{position}].type: expected 'function', got {call_type}",
    "content_part_type": "content[{position}].type: {part_type} is not accepted in a {role} "
    "message (expected {allowed})",
    "empty_text_part": "content[{position}].text: empty text part",
    "unanswered_tool_call": "tool call {call_id} has no tool result before the next message",
    "orphan_tool_result": "tool result for {call_id} does not answer a call of the "
    "assistant message right before it",
    "duplicate_tool_result": "tool call {call_id} is answered more than once",
    "result_after_content": "tool_result blocks must come first in their user turn",
    "thinking_without_signature": "a thinking block has no signature (Anthropic rejects it)",
}
"""Every rule: its name and what a violation says. Violations at one index are
reported in this order; ``first_turn_not_user``, ``no_user_turn`` and the last two (the
block rules, read from the layout an Anthropic transcript was read with) are Anthropic's
(OpenAI answers a request made only of system messages)."""
_PART_TYPES: Final = {
    "system": ("text",),
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
    "tool": ("text",),
}
"""The content part types OpenAI's chat completions accept in each role's messages."""
_RANK: Final = {rule: rank for rank, rule in enumerate(_RULES)}


class Violation(BaseModel):
    """One broken rule, located by message index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    """Index of the message at fault."""
    rule: str
    """Short rule name (``unanswered_tool_call``, ``orphan_tool_result`` …)."""
    message: str
    """What is wrong, for people."""

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.message}"


def _violation(index: int, rule: str, **details: object) -> Violation:
    if "call_id" in details:  # ids come from the input: quoted and cut
        details["call_id"] = shown(details["call_id"])
    return Violation(index=index, rule=rule, message=_RULES[rule].format(**details))


def _is_empty(message: TextMessage) -> bool:
    if message.tool_calls:
        return False
    content = message.content
    if content is None:
        return True
    if isinstance(content, str):
        return not content or content.isspace()  # as ``not content.strip()``, without a copy
    return len(content) == 0


def _part_type(part: ContentPart) -> object:
    if isinstance(part, TextPart):
        return "text"
    if isinstance(part, ImagePart):
        return "image_url"
    return part.raw.get("type")


def _part_violations(index: int, role: str, parts: tuple[ContentPart, ...]) -> Iterator[Violation]:
    """Parts OpenAI rejects: a type the role does not take, an empty text."""
    allowed = _PART_TYPES[role]
    for position, part in enumerate(parts):
        part_type = _part_type(part)
        if part_type not in allowed:
            yield _violation(
                index,
                "content_part_type",
                position=position,
                part_type=shown(part_type),
                role=role,
                allowed=", ".join(allowed),
            )
        elif isinstance(part, TextPart) and not part.text:
            yield _violation(index, "empty_text_part", position=position)


def _block_violations(index: int, message: TextMessage) -> Iterator[Violation]:
    """Anthropic's block rules: results before other blocks, thinking with its signature."""
    layout = message.extra.get(LAYOUT_KEY)
    if message.role == Role.USER and isinstance(layout, dict) and "order" in layout:
        yield _violation(index, "result_after_content")
    for detail in message.reasoning_details or ():
        if detail.get("type") == "thinking" and not isinstance(detail.get("signature"), str):
            yield _violation(index, "thinking_without_signature")


def _scan(context: Context, dialect: Dialect) -> Iterator[Violation]:
    """The violations of ``context`` in one pass, as found (not in report order).

    The rules: each tool call is answered exactly once by the run of tool results
    right after its message, and a result answers a call of that message; a call
    id is used once; only assistant messages carry tool calls (even an empty list);
    no message is empty; system messages only before the first turn or result. An
    ``unanswered_tool_call`` is found when its run of results ends.
    """
    first_use: dict[str, int] = {}  # call id -> index of the message that used it first
    pending: dict[str, int] = {}  # the last message's calls not answered yet -> its index
    answered: set[str] = set()  # the last message's calls answered so far
    started = False  # a turn or a tool result has been seen
    turn_checked = dialect != "anthropic"  # whether the first turn needs no (more) check
    parts_checked = dialect == "openai"  # chat completions' part and call types
    if not len(context):
        yield _violation(0, "no_messages")
        return
    system, user, assistant = Role.SYSTEM, Role.USER, Role.ASSISTANT  # (slow to look up)
    anthropic = dialect == "anthropic"
    for index, message in enumerate(context):
        if type(message) is not TextMessage and isinstance(message, ToolResult):
            started = True
            if parts_checked and not isinstance(message.content, str):
                yield from _part_violations(index, "tool", message.content)
                if not message.content:  # OpenAI refuses an empty array (a string may be empty)
                    yield _violation(index, "empty_message", role="tool")
            call_id = message.call_id
            if call_id in pending:
                del pending[call_id]
                answered.add(call_id)
            else:
                rule = "duplicate_tool_result" if call_id in answered else "orphan_tool_result"
                yield _violation(index, rule, call_id=call_id)
            continue
        if pending:
            for call_id, at in pending.items():
                yield _violation(at, "unanswered_tool_call", call_id=call_id)
            pending.clear()
        if answered:
            answered.clear()
        role = message.role
        if role == system:
            if started:
                yield _violation(index, "system_not_first")
        else:
            if not turn_checked:
                turn_checked = True
                if role != user:
                    yield _violation(index, "first_turn_not_user")
            started = True
        content = message.content
        if parts_checked and content is not None and not isinstance(content, str):
            yield from _part_violations(index, role.value, content)
        calls = message.tool_calls
        if calls is not None and role != assistant:
            yield _violation(index, "tool_calls_on_non_assistant", role=role.value)
        if calls:
            for position, call in enumerate(calls):
                if parts_checked and call.call_type not in (None, "function"):
                    yield _violation(
                        index, "tool_call_type", position=position, call_type=shown(call.call_type)
                    )
                call_id = call.id
                first = first_use.setdefault(call_id, index)
                if first != index or call_id in pending:
                    yield _violation(index, "duplicate_tool_call_id", call_id=call_id, first=first)
                pending[call_id] = index
        elif _is_empty(message):
            yield _violation(index, "empty_message", role=role.value)
        if anthropic:
            yield from _block_violations(index, message)
    for call_id, at in pending.items():
        yield _violation(at, "unanswered_tool_call", call_id=call_id)
    if not turn_checked:
        yield _violation(max(0, len(context) - 1), "no_user_turn")


def find_violations(context: Context, dialect: Dialect = "openai") -> list[Violation]:
    """Every provider rule ``context`` breaks, ordered by message index (then by rule)."""
    return sorted(_scan(context, dialect), key=lambda found: (found.index, _RANK[found.rule]))


def is_valid(context: Context, dialect: Dialect = "openai") -> bool:
    """Return True when ``context`` breaks no provider rule: the scan stops at the first."""
    return next(_scan(context, dialect), None) is None


def ensure_valid(context: Context, dialect: Dialect = "openai") -> None:
    """Raise :class:`InvalidTranscript` listing every violation, if there is any."""
    violations = find_violations(context, dialect)
    if violations:
        raise InvalidTranscript([str(violation) for violation in violations])
