"""Real sessions concatenated into one long session: a workload for the speed benchmarks.

Each ``*.json`` of a directory (the shared sessions by default) is read with
:func:`forge_app.read_transcript`, whatever its format, and written back as an OpenAI chat
list. The sessions follow each other in file-name order, again and again until the
session has ``messages`` entries (or ``passes`` passes are done): the first system prompt
is kept, the other sessions' system prompts are left out (their task, the first user
message, opens each one), and every tool-call id is renamed per session and pass
(``s3p1-<id>``) so none repeats. The last session is cut at ``messages`` and, when the cut
leaves a call unanswered, before that assistant turn: the result is provider-valid and at
most ``messages`` long. Deterministic for a directory's contents.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from benchmarks.generator import Message
from forge_app import read_transcript


def read_sessions(directory: Path) -> list[list[Message]]:
    """Every ``*.json`` of ``directory`` in name order, as OpenAI chat lists."""
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise FileNotFoundError(f"no *.json session in {directory}")
    return [read_transcript(path).context.to_openai() for path in paths]


def _renamed(message: Message, prefix: str) -> Message:
    """``message`` with its call ids (or the id it answers) prefixed."""
    out = dict(message)
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = f"{prefix}{message['tool_call_id']}"
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [{**call, "id": f"{prefix}{call['id']}"} for call in calls]
    return out


def _passes(sessions: list[list[Message]], passes: int | None) -> Iterator[Message]:
    """The sessions' messages after the first system prompt, pass after pass (at most
    ``passes``), renamed."""
    first = True
    pass_number = 0
    while passes is None or pass_number < passes:
        for index, session in enumerate(sessions):
            prefix = f"s{index}p{pass_number}-"
            for message in session:
                if message.get("role") == "system" and not first:
                    continue
                first = False
                yield _renamed(message, prefix)
        pass_number += 1


def _valid_cut(messages: list[Message]) -> list[Message]:
    """``messages`` without a trailing assistant turn whose calls are not all answered."""
    for start in range(len(messages) - 1, -1, -1):
        calls = messages[start].get("tool_calls")
        if isinstance(calls, list) and calls:
            answered = len(messages) - start - 1
            return messages if answered >= len(calls) else messages[:start]
        if messages[start].get("role") != "tool":
            return messages
    return messages


def concatenated_session(
    messages: int, sessions: list[list[Message]], *, passes: int | None = None
) -> list[Message]:
    """At most ``messages`` messages of ``sessions`` one after the other (module docstring),
    in at most ``passes`` passes over them (default: as many as ``messages`` needs).

    Raises:
        ValueError: when ``messages`` is under 2 or ``sessions`` hold system prompts only.
    """
    if messages < 2:
        raise ValueError(f"a session needs at least 2 messages, got {messages}")
    if not any(message.get("role") != "system" for session in sessions for message in session):
        raise ValueError("no message to concatenate but system prompts")
    return _valid_cut(list(islice(_passes(sessions, passes), messages)))
