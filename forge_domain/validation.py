"""Provider-validity checks: the invariant compaction must never break.

:func:`find_violations` reports every problem with the index of the message at
fault. The ``openai`` dialect checks what OpenAI's chat-completions API rejects;
``anthropic`` adds what Anthropic's Messages API needs on top (a conversation
that opens with a user turn, tool results in the user turn right after the call).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from forge_domain.context import Context
from forge_domain.errors import InvalidTranscript
from forge_domain.messages import ContextMessage, Role, TextMessage, ToolResult

Dialect = Literal["openai", "anthropic"]
"""Which provider's rules to check."""


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


def _is_empty(message: TextMessage) -> bool:
    if message.tool_calls:
        return False
    content = message.content
    if content is None:
        return True
    if isinstance(content, str):
        return not content or content.isspace()  # as ``not content.strip()``, without a copy
    return len(content) == 0


def _check_tool_pairs(messages: list[ContextMessage]) -> list[Violation]:
    violations: list[Violation] = []
    seen_ids: dict[str, int] = {}
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    in_result_run = False

    def close_run() -> None:
        for call_id, call_index in open_calls.items():
            if call_id not in answered:
                violations.append(
                    Violation(
                        index=call_index,
                        rule="unanswered_tool_call",
                        message=f"tool call {call_id!r} has no tool result before the next message",
                    )
                )
        open_calls.clear()
        answered.clear()

    for index, message in enumerate(messages):
        if isinstance(message, ToolResult):
            if not in_result_run or message.call_id not in open_calls:
                violations.append(
                    Violation(
                        index=index,
                        rule="orphan_tool_result",
                        message=f"tool result for {message.call_id!r} does not answer a call of "
                        "the assistant message right before it",
                    )
                )
            elif message.call_id in answered:
                violations.append(
                    Violation(
                        index=index,
                        rule="duplicate_tool_result",
                        message=f"tool call {message.call_id!r} is answered more than once",
                    )
                )
            else:
                answered.add(message.call_id)
            continue
        close_run()
        in_result_run = False
        if message.tool_calls:
            in_result_run = True
            for call in message.tool_calls:
                if call.id in seen_ids:
                    violations.append(
                        Violation(
                            index=index,
                            rule="duplicate_tool_call_id",
                            message=f"tool call id {call.id!r} was already used at "
                            f"messages[{seen_ids[call.id]}]",
                        )
                    )
                else:
                    seen_ids[call.id] = index
                open_calls.setdefault(call.id, index)
        if message.tool_calls is not None and message.role != Role.ASSISTANT:
            violations.append(
                Violation(
                    index=index,
                    rule="tool_calls_on_non_assistant",
                    message=f"a {message.role.value} message carries tool calls",
                )
            )
    close_run()
    return violations


def _check_messages(messages: list[ContextMessage], dialect: Dialect) -> list[Violation]:
    violations: list[Violation] = []
    conversation_started = False
    first_turn_checked = False
    for index, message in enumerate(messages):
        if isinstance(message, ToolResult):
            conversation_started = True
            continue
        if message.role == Role.SYSTEM:
            if conversation_started:
                violations.append(
                    Violation(
                        index=index,
                        rule="system_not_first",
                        message="system message after the conversation started",
                    )
                )
        else:
            conversation_started = True
            if dialect == "anthropic" and not first_turn_checked and message.role != Role.USER:
                violations.append(
                    Violation(
                        index=index,
                        rule="first_turn_not_user",
                        message="the first non-system message must come from the user",
                    )
                )
            first_turn_checked = True
        if _is_empty(message):
            violations.append(
                Violation(
                    index=index,
                    rule="empty_message",
                    message=f"{message.role.value} message has no content",
                )
            )
    if dialect == "anthropic" and not first_turn_checked:
        violations.append(
            Violation(
                index=max(0, len(messages) - 1),
                rule="no_user_turn",
                message="the conversation has no user or assistant turn",
            )
        )
    return violations


def is_valid(context: Context, dialect: Dialect = "openai") -> bool:
    """Return True when ``context`` breaks no provider rule (``find_violations`` is empty).

    One pass that stops at the first problem and builds no report: the check run
    on every compaction's input, tens of thousands of messages long. The rules are
    those of :func:`find_violations`, which says what is wrong and where.
    """
    seen_ids: set[str] = set()
    unanswered: set[str] | None = None  # ids of the last assistant message's open calls
    started = False
    first_turn = dialect == "anthropic"
    for message in context:
        if isinstance(message, ToolResult):
            if unanswered is None or message.call_id not in unanswered:
                return False  # an orphan, or a second result for one call
            unanswered.discard(message.call_id)
            started = True
            continue
        if unanswered:
            return False  # a call without a result before this message
        unanswered = None
        role = message.role
        if role == Role.SYSTEM:
            if started:
                return False
        else:
            if first_turn and role != Role.USER:
                return False
            first_turn = False
            started = True
        calls = message.tool_calls
        if calls:
            if role != Role.ASSISTANT:
                return False
            unanswered = set()
            for call in calls:
                if call.id in seen_ids:
                    return False
                seen_ids.add(call.id)
                unanswered.add(call.id)
        elif (calls is not None and role != Role.ASSISTANT) or _is_empty(message):
            return False
    return not unanswered and not first_turn


def find_violations(context: Context, dialect: Dialect = "openai") -> list[Violation]:
    """Every provider rule ``context`` breaks, ordered by message index."""
    messages = list(context)
    found = _check_messages(messages, dialect) + _check_tool_pairs(messages)
    return sorted(found, key=lambda violation: violation.index)


def ensure_valid(context: Context, dialect: Dialect = "openai") -> None:
    """Raise :class:`InvalidTranscript` listing every violation, if there is any."""
    if is_valid(context, dialect):
        return
    violations = find_violations(context, dialect)
    if violations:
        raise InvalidTranscript([str(violation) for violation in violations])
