"""Which facts of a session are still in a (compacted) context.

A fact counts as retained when its text can be found in the context: in the
messages kept word for word or in a summary. Texts are compared with runs of
whitespace folded, on a prefix long enough to identify the fact (a summary cuts
long texts and strips the working directory from paths and commands).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from forge_app.evaluation._facts import Failure, SessionFacts
from forge_domain import Context, TextMessage

__all__ = ["Retention", "retention"]

_SPACES = re.compile(r"\s+")
_CD_PREFIX = re.compile(r"^cd\s+\S+\s*&&\s*")
TASK_CHARS = 200
ASK_CHARS = 80
COMMAND_CHARS = 40
EVIDENCE_CHARS = 60


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class Retention:
    """Found / total per kind of fact (a kind with no facts counts as fully retained)."""

    task: tuple[int, int]
    asks: tuple[int, int]
    modified_paths: tuple[int, int]
    failures: tuple[int, int]
    last_error: tuple[int, int]

    def ratio(self, kind: str) -> float:
        """The share of facts of ``kind`` found (1.0 when there are none)."""
        found, total = getattr(self, kind)
        return 1.0 if total == 0 else found / total


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _context_text(context: Context) -> str:
    """Every text of ``context``: contents, and tool calls' names and argument strings."""
    parts: list[str] = []
    for message in context:
        parts.append(message.text)
        if isinstance(message, TextMessage):
            for call in message.tool_calls or ():
                parts.append(call.name)
                try:
                    parts.extend(_strings(json.loads(call.arguments)))
                except ValueError:
                    parts.append(call.arguments)
    return _fold("\n".join(parts))


def _path_key(path: str) -> str:
    parts = [part for part in path.replace("\\", "/").split("/") if part and part != "."]
    return "/".join(parts[-2:]) if parts else path


def _command_key(command: str) -> str:
    return _CD_PREFIX.sub("", _fold(command))[:COMMAND_CHARS]


def _has_failure(text: str, failure: Failure) -> bool:
    return (
        _command_key(failure.command) in text and _fold(failure.evidence)[:EVIDENCE_CHARS] in text
    )


def retention(facts: SessionFacts, context: Context) -> Retention:
    """How many facts of each kind ``context`` still holds."""
    text = _context_text(context)
    task = facts.task is not None and _fold(facts.task)[:TASK_CHARS] in text
    asks = sum(_fold(ask)[:ASK_CHARS] in text for ask in facts.asks)
    paths = sum(_path_key(path) in text for path in facts.modified_paths)
    failures = sum(_has_failure(text, failure) for failure in facts.failures)
    last = facts.last_error
    return Retention(
        task=(int(task), int(facts.task is not None)),
        asks=(asks, len(facts.asks)),
        modified_paths=(paths, len(facts.modified_paths)),
        failures=(failures, len(facts.failures)),
        last_error=(
            int(last is not None and _fold(last)[:EVIDENCE_CHARS] in text),
            int(last is not None),
        ),
    )
