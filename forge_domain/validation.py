"""Provider-validity checks: the invariant compaction must never break.

One rule set, checked in one pass over the messages (:func:`_scan`), and three
views of it: :func:`find_violations` reports every problem with the index of the
message at fault, :func:`is_valid` stops at the first, :func:`ensure_valid`
raises with them all. The ``openai`` dialect checks what OpenAI's
chat-completions API rejects; ``anthropic`` adds what Anthropic's Messages API
needs on top (a conversation that opens with a user turn). Tool results sit in
the user turn right after their call by construction of the first rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from forge_domain.context import Context
from forge_domain.errors import InvalidTranscript
from forge_domain.messages import Role, TextMessage, ToolResult

Dialect = Literal["openai", "anthropic"]
"""Which provider's rules to check."""

_RULES: Final = {
    "system_not_first": "system message after the conversation started",
    "first_turn_not_user": "the first non-system message must come from the user",
    "empty_message": "{role} message has no content",
    "no_user_turn": "the conversation has no user or assistant turn",
    "duplicate_tool_call_id": "tool call id {call_id!r} was already used at messages[{first}]",
    "tool_calls_on_non_assistant": "a {role} message carries tool calls",
    "unanswered_tool_call": "tool call {call_id!r} has no tool result before the next message",
    "orphan_tool_result": "tool result for {call_id!r} does not answer a call of the "
    "assistant message right before it",
    "duplicate_tool_result": "tool call {call_id!r} is answered more than once",
}
"""Every rule: its name and what a violation says. Violations at one index are
reported in this order; ``first_turn_not_user`` and ``no_user_turn`` are Anthropic's."""
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
    for index, message in enumerate(context):
        if isinstance(message, ToolResult):
            started = True
            call_id = message.call_id
            if call_id in pending:
                del pending[call_id]
                answered.add(call_id)
            else:
                rule = "duplicate_tool_result" if call_id in answered else "orphan_tool_result"
                yield _violation(index, rule, call_id=call_id)
            continue
        for call_id, at in pending.items():
            yield _violation(at, "unanswered_tool_call", call_id=call_id)
        pending.clear()
        answered.clear()
        role = message.role
        if role == Role.SYSTEM:
            if started:
                yield _violation(index, "system_not_first")
        else:
            if not turn_checked:
                turn_checked = True
                if role != Role.USER:
                    yield _violation(index, "first_turn_not_user")
            started = True
        calls = message.tool_calls
        if calls is not None and role != Role.ASSISTANT:
            yield _violation(index, "tool_calls_on_non_assistant", role=role.value)
        if calls:
            for call in calls:
                call_id = call.id
                first = first_use.setdefault(call_id, index)
                if first != index or call_id in pending:
                    yield _violation(index, "duplicate_tool_call_id", call_id=call_id, first=first)
                pending[call_id] = index
        elif _is_empty(message):
            yield _violation(index, "empty_message", role=role.value)
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
