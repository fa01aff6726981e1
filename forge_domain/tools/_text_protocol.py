"""Text-protocol agents: actions written in the assistant's text, observations sent as user turns.

mini-swe-agent 1.x, SWE-agent 0.x and OpenHands' prompt-based mode call no tools: the
assistant writes its action in its text (one fenced ``bash`` block, a bare fenced ACI
command such as ``edit 1:1``, or ``<function=terminal>…</function>``) and the harness
answers with a user message holding the output. A summary treats such a pair like a tool
call and its result (:func:`text_turns`):

* the **action** of an assistant message (:func:`text_action`) is its one command fence
  (``bash``/``sh``/``shell`` blocks, else bare ones; several mean none was run: the
  harness rejects them) or its one ``<function=…>`` block, made into a :class:`ToolCall`
  the catalog classifies: SWE-agent's commands by name (:data:`TEXT_PROTOCOL_COMMANDS`),
  anything else as ``bash``;
* a user message right after it is an **observation** of that action when it looks like
  one (:func:`looks_like_observation`: ``<returncode>``, ``OBSERVATION``, ``[File: …]``,
  ``EXECUTION RESULT``, SWE-agent's ``(Current directory: …)`` prompt …) or when the action
  ends the assistant's message (the harness answers what it was given last).

A user message that answers no action is a person's, and stays a user text; but one that
looks like an observation at the very start of the messages answers an action from before
them (a compaction's span can start between an action and its answer).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from forge_domain._messages import ContextMessage, Role, TextMessage, ToolCall
from forge_domain.tools._defaults import TEXT_PROTOCOL_COMMANDS

__all__ = [
    "OBSERVATION_STARTS",
    "AnsweredAction",
    "TextAction",
    "TextTurns",
    "answers_text_action",
    "looks_like_observation",
    "text_action",
    "text_turns",
]

OBSERVATION_STARTS = (
    "<returncode>",
    "<output>",
    "observation",
    "[file:",
    "execution result",
    "your command ran successfully",
    "the last command",
)
"""How observations of text-protocol agents begin (compared case-insensitively)."""

_SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "mswea_bash_command"})
_FENCE = re.compile(r"^(`{3,})([\w-]*)[ \t]*\n(.*?)\n?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?</parameter>", re.DOTALL)
_SWE_AGENT_PROMPT = re.compile(r"\(Current directory: [^)\n]*\)\s*(?:bash-\$)?\s*$")


@dataclass(frozen=True, slots=True)
class TextAction:
    """The action an assistant wrote in its text."""

    call: ToolCall
    """The action as a tool call (no id), for the catalog to classify."""
    narration: str
    """The assistant's text without the action."""
    ends_message: bool
    """Nothing but white space follows the action in the message."""


@dataclass(frozen=True, slots=True)
class AnsweredAction:
    """An assistant's text action and the user message that answered it."""

    action: TextAction
    """What the assistant did."""
    observation: int | None
    """The index of the user message holding the output; None when the messages end first."""
    marked: bool
    """The observation looks like one (:func:`looks_like_observation`); False when only its
    place says so."""


@dataclass(frozen=True, slots=True)
class TextTurns:
    """The text-protocol turns of a run of messages."""

    answered: dict[int, AnsweredAction]
    """Per index of an assistant message with a text action: the action and its answer."""
    orphans: tuple[int, ...]
    """User messages that answer an action from before the run (at its start only)."""


def looks_like_observation(text: str) -> bool:
    """Return True when a user message reads like a harness's output, not a person's words."""
    head = text.lstrip()[:40].casefold()
    return head.startswith(OBSERVATION_STARTS) or _SWE_AGENT_PROMPT.search(text[-200:]) is not None


def _command_call(command: str) -> ToolCall:
    """A fenced command as a call: a SWE-agent command by its name, else a ``bash`` call."""
    first_line = command.split("\n", 1)[0]
    name = first_line.split(None, 1)[0] if first_line.strip() else ""
    if name in TEXT_PROTOCOL_COMMANDS:
        argument = TEXT_PROTOCOL_COMMANDS[name]
        try:
            words = shlex.split(first_line)
        except ValueError:
            words = first_line.split()
        arguments = {argument: words[1]} if argument is not None and len(words) > 1 else {}
        return ToolCall(id="", name=name, arguments=json.dumps(arguments))
    return ToolCall(id="", name="bash", arguments=json.dumps({"command": command}))


NO_TURNS = TextTurns({}, ())
"""The turns of a run of messages without text-protocol actions."""


def text_action(text: str) -> TextAction | None:
    """The action written in an assistant's ``text``, or None when it holds none (or more
    than one, which a harness refuses to run)."""
    has_function = "<function=" in text
    if not has_function and "```" not in text:
        return None  # no function block, no fence: no action (most texts of a chat)
    functions = list(_FUNCTION.finditer(text)) if has_function else []
    if functions:
        if len(functions) != 1:
            return None
        match = functions[0]
        parameters = {key: value for key, value in _PARAMETER.findall(match.group(2))}
        call = ToolCall(id="", name=match.group(1), arguments=json.dumps(parameters))
    else:
        fences = list(_FENCE.finditer(text)) if "```" in text else []
        commands = [f for f in fences if f.group(2).casefold() in _SHELL_LANGUAGES]
        commands = commands or [f for f in fences if not f.group(2)]
        if len(commands) != 1:
            return None
        match = commands[0]
        call = _command_call(match.group(3).strip("\n"))
    narration = (text[: match.start()].rstrip() + "\n\n" + text[match.end() :].strip()).strip()
    return TextAction(call, narration, not text[match.end() :].strip())


def answers_text_action(assistant: TextMessage, newer: TextMessage | None) -> bool:
    """True when :func:`text_turns` reads ``assistant`` (an assistant message without tool
    calls) as a text-protocol action of the span, given ``newer``, the span's next
    non-system text message after it (None: it is the span's last): a user message
    answering the action, or nothing when the action ends the message. For a walk of
    the span newest first that needs only whether it has turns."""
    if newer is not None and newer.role == Role.ASSISTANT:
        return False
    action = text_action(assistant.text)
    if action is None:
        return False
    return action.ends_message or (newer is not None and looks_like_observation(newer.text))


def text_turns(messages: Sequence[ContextMessage]) -> TextTurns:
    """The text-protocol turns of ``messages`` (see the module docstring): each assistant
    action a user message answers, or that ends ``messages`` (its answer comes later), and
    the observations whose action came before ``messages`` (a span that starts between an
    action and its answer)."""
    answered: dict[int, AnsweredAction] = {}
    orphans: list[int] = []
    previous: int | None = None  # the last assistant message without tool calls
    seen = False  # an assistant or user message came before
    system, speaks = Role.SYSTEM, Role.ASSISTANT  # (an enum's member is slow to look up)
    for index, message in enumerate(messages):
        if not isinstance(message, TextMessage):
            continue
        role = message.role
        if role == system:
            continue
        first, seen = not seen, True
        if role == speaks:
            previous = None if message.tool_calls else index
            continue
        if previous is None:  # only a span's first message can be an orphan observation
            if first and looks_like_observation(message.text):
                orphans.append(index)
            continue
        marked = looks_like_observation(message.text)
        assistant, previous = previous, None
        action = text_action(messages[assistant].text)
        if action is not None and (marked or action.ends_message):
            answered[assistant] = AnsweredAction(action, index, marked)
    if previous is not None:
        action = text_action(messages[previous].text)
        if action is not None and action.ends_message:
            answered[previous] = AnsweredAction(action, None, marked=False)
    return TextTurns(answered, tuple(orphans))
