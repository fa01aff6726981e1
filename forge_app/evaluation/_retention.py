"""Which facts of a session are still in a (compacted) context.

A fact counts as retained when its text can be found in the context: in the
messages kept word for word or in a summary. Texts are compared with runs of
whitespace folded, on a prefix long enough to identify the fact (a summary cuts
long texts and strips the working directory from paths and commands).

A failure counts only when what shows it (its evidence line, else its exit code)
follows its command closely: within the command and its output (the messages kept
word for word), or a few hundred characters (a summary line, a pruned output's
placeholder). An ``exit code 1`` anywhere else in the context proves nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from forge_app.evaluation._facts import Failure, SessionFacts
from forge_domain import Context, TextMessage

__all__ = ["FactCheck", "Retention", "fact_checks", "retention"]

_SPACES = re.compile(r"\s+")
_CD_PREFIX = re.compile(r"^cd\s+\S+\s*&&\s*")
TASK_CHARS = 200
ASK_CHARS = 80
COMMAND_CHARS = 40
EVIDENCE_CHARS = 60
NEAR_CHARS = 400
"""How far after its command (and its output) a failure's evidence may be."""


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
    """The strings inside a parsed JSON value, in order (iteratively: any depth)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


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
                except (ValueError, RecursionError):
                    parts.append(call.arguments)
    return _fold("\n".join(parts))


def _path_key(path: str) -> str:
    parts = [part for part in path.replace("\\", "/").split("/") if part and part != "."]
    return "/".join(parts[-2:]) if parts else path


def _command_key(command: str) -> str:
    return _CD_PREFIX.sub("", _fold(command))[:COMMAND_CHARS]


def _shown_keys(failure: Failure) -> tuple[str, ...]:
    """The texts any of which shows ``failure`` next to its command."""
    if failure.evidence is not None:
        return (_fold(failure.evidence)[:EVIDENCE_CHARS],)
    if failure.exit_code is not None:
        code = failure.exit_code
        return (f"exit code {code}", f"<returncode>{code}</returncode>")
    return ("failed",)


def _has_failure(text: str, failure: Failure) -> bool:
    """True when the command of ``failure`` is followed closely by what shows it."""
    command = _command_key(failure.command)
    shown = _shown_keys(failure)
    reach = len(_fold(failure.command)) + failure.output_chars + NEAR_CHARS
    start = text.find(command)
    while start >= 0:
        near = text[start : start + reach]
        if any(key in near for key in shown):
            return True
        start = text.find(command, start + 1)
    return False


@dataclass(frozen=True, slots=True)
class FactCheck:
    """One fact of a session and whether a context still holds it."""

    kind: str
    """``task``, ``asks``, ``modified_paths``, ``failures`` or ``last_error``
    (the fields of :class:`Retention`)."""
    text: str
    """The fact as found in the original transcript (a failure: its command and what shows it)."""
    kept: bool
    """True when the context holds it."""


def _failure_text(failure: Failure) -> str:
    return f"{failure.command} → {failure.shown}"


def fact_checks(facts: SessionFacts, context: Context) -> tuple[FactCheck, ...]:
    """Each fact of ``facts``, in the order of :class:`Retention`'s fields, kept or lost."""
    text = _context_text(context)
    checks: list[FactCheck] = []
    if facts.task is not None:
        checks.append(FactCheck("task", facts.task, _fold(facts.task)[:TASK_CHARS] in text))
    checks += [FactCheck("asks", ask, _fold(ask)[:ASK_CHARS] in text) for ask in facts.asks]
    checks += [
        FactCheck("modified_paths", path, _path_key(path) in text) for path in facts.modified_paths
    ]
    checks += [
        FactCheck("failures", _failure_text(f), _has_failure(text, f)) for f in facts.failures
    ]
    last = facts.last_error
    if last is not None:
        checks.append(FactCheck("last_error", _failure_text(last), _has_failure(text, last)))
    return tuple(checks)


def retention(facts: SessionFacts, context: Context) -> Retention:
    """How many facts of each kind ``context`` still holds."""
    checks = fact_checks(facts, context)

    def count(kind: str) -> tuple[int, int]:
        mine = [check for check in checks if check.kind == kind]
        return sum(check.kept for check in mine), len(mine)

    return Retention(
        task=count("task"),
        asks=count("asks"),
        modified_paths=count("modified_paths"),
        failures=count("failures"),
        last_error=count("last_error"),
    )
