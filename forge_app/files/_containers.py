"""Agent logs that wrap a transcript in events: Claude Code session logs and Codex rollouts.

Both are JSONL, one event per line:

* **Claude Code** (``~/.claude/projects/*/SESSION.jsonl``): ``{"type": "user" | "assistant",
  "message": {Anthropic Messages turn}, "uuid", "parentUuid", "sessionId", …}``, plus other
  events (``summary``, ``system``, snapshots …). Events with ``"isSidechain": true`` belong to
  a sub-agent's conversation and are not turns of this one.
* **Codex** (``~/.codex/sessions/…/rollout-*.jsonl``): ``{"timestamp", "type":
  "response_item", "payload": {OpenAI Responses item}}``, plus ``session_meta``,
  ``turn_context``, ``event_msg`` … records.

Reading maps the turns (items) to a transcript in the ``anthropic`` (``responses``) format;
every other line is kept verbatim, as its text. Writing back writes **the container**, never
silently less: the lines of the turns a compaction left as they were, and every other
event, are written back as read (byte for byte); the turns it replaced become new events
wrapping the new turns (Claude Code: ``type``, ``message`` and the session keys of the
event they replace, no ``uuid``; Codex: ``response_item`` with the replaced record's
``timestamp``), at the place of the first turn replaced, followed by the other events that
sat among the replaced turns, in their order. A kept turn whose ``usage`` the compaction
dropped (it measured the context before it) keeps its event, rewritten without it. A
written Claude Code log is a faithful record of the compacted conversation, not a log
Claude Code can resume (its ``parentUuid`` chain is not rebuilt).

Only a JSONL output holds a container: asked for a plain JSON file, the transcript is
written in its plain format when the log held nothing but turns, and refused with a
:class:`ContainerEventsNotWritable` naming the events otherwise.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, get_args

from forge_domain import JsonObject, JsonValue
from forge_domain.formats import Format

__all__ = [
    "CONTAINERS",
    "Container",
    "ContainerEventsNotWritable",
    "ContainerLog",
    "detect_container",
    "read_container",
]

Container: TypeAlias = Literal["claude-code", "codex"]
"""An agent log format that wraps a transcript in events."""
CONTAINERS: Final[tuple[Container, ...]] = get_args(Container)
FORMAT_OF: Final[dict[Container, Format]] = {"claude-code": "anthropic", "codex": "responses"}
"""The transcript format each container carries."""
_CLAUDE_TURNS: Final = ("user", "assistant")
_CLAUDE_SESSION_KEYS: Final = ("sessionId", "cwd", "version", "userType", "gitBranch")


class ContainerEventsNotWritable(ValueError):
    """A log with events other than turns was asked to be written as a plain transcript."""


def _is_claude_turn(record: JsonValue) -> bool:
    return (
        isinstance(record, dict)
        and record.get("type") in _CLAUDE_TURNS
        and "message" in record
        and record.get("isSidechain") is not True
    )


def _is_codex_item(record: JsonValue) -> bool:
    return (
        isinstance(record, dict) and record.get("type") == "response_item" and "payload" in record
    )


def _same_turn(old: JsonValue, new: JsonValue) -> bool:
    """True when ``new`` is the turn ``old``, or ``old`` without its ``usage`` (which a
    compaction drops once the turns before it changed: it measured a context that is gone)."""
    if old == new:
        return True
    if not isinstance(old, dict) or not isinstance(new, dict) or "usage" in new:
        return False
    return "usage" in old and {k: v for k, v in old.items() if k != "usage"} == new


def detect_container(records: list[JsonValue]) -> Container | None:
    """The container ``records`` (the lines of a JSONL file) are, or None for a plain one.

    A Claude Code event has ``type`` user/assistant, a ``message`` and a ``sessionId`` or
    ``uuid``; a Codex record has ``type`` and ``payload``, with ``response_item`` among
    them. A line with a top-level ``role`` is a plain message: such a file is no container.
    """
    dicts = [r for r in records if isinstance(r, dict)]
    if any("role" in r for r in dicts):
        return None
    if any(_is_codex_item(r) for r in dicts) and all(
        "payload" in r or "type" not in r for r in dicts
    ):
        return "codex"
    if any(
        r.get("type") in _CLAUDE_TURNS and "message" in r and ("sessionId" in r or "uuid" in r)
        for r in dicts
    ):
        return "claude-code"
    return None


@dataclass(frozen=True, slots=True)
class ContainerLog:
    """A container as read: every line, and which of them carry the turns."""

    kind: Container
    lines: tuple[str, ...]
    """The non-blank lines of the file, as read."""
    records: tuple[JsonValue, ...]
    """Each line decoded."""
    turn_lines: tuple[int, ...]
    """Indices (into ``lines``) of the lines that carry a turn (an item), in order."""
    numbers: tuple[int, ...] = ()
    """The 1-based line number in the file of each of ``lines``."""
    final_newline: bool = True
    """Whether the file ended with a newline (kept, so an unchanged log is written back
    byte for byte)."""

    @property
    def format(self) -> Format:
        """The transcript format the turns are in."""
        return FORMAT_OF[self.kind]

    def entries(self) -> list[JsonValue]:
        """The turns (items) the log carries, in order."""
        return [self._entry(self.records[i]) for i in self.turn_lines]

    def _entry(self, record: JsonValue) -> JsonValue:
        assert isinstance(record, dict)  # turn lines are objects (_is_claude_turn …)
        return record["message"] if self.kind == "claude-code" else record["payload"]

    def line_of(self, turn: int) -> int:
        """The 1-based line number in the file of turn ``turn``."""
        index = self.turn_lines[turn]
        return self.numbers[index] if self.numbers else index + 1

    def other_events(self) -> Counter[str]:
        """The events that are not turns, by ``type`` (``line`` for a line that is no object)."""
        turns = set(self.turn_lines)
        return Counter(
            str(r.get("type", "untyped")) if isinstance(r, dict) else "line"
            for i, r in enumerate(self.records)
            if i not in turns
        )

    def plain_check(self) -> None:
        """Raise :class:`ContainerEventsNotWritable` unless the log holds turns only."""
        others = self.other_events()
        if others:
            named = ", ".join(f"{kind} x{count}" for kind, count in sorted(others.items()))
            raise ContainerEventsNotWritable(
                f"the {self.kind} log has events other than turns ({named}) that a plain "
                f"{self.format} file cannot hold; write it to a .jsonl file to keep the log"
            )

    def dumps(self, entries: list[JsonValue]) -> str:
        """The log holding ``entries`` as its turns (see the module's notes), as JSONL."""
        old = self.entries()
        prefix = 0
        limit = min(len(old), len(entries))
        while prefix < limit and _same_turn(old[prefix], entries[prefix]):
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and _same_turn(old[-1 - suffix], entries[-1 - suffix]):
            suffix += 1
        lines = list(self.lines)
        shift = len(entries) - len(old)
        for turn in [*range(prefix), *range(len(old) - suffix, len(old))]:
            entry = entries[turn if turn < prefix else turn + shift]
            if entry != old[turn]:  # the same turn without its stale usage: its event, rewritten
                index = self.turn_lines[turn]
                lines[index] = self._rewrap(self.records[index], entry)
        start = self.turn_lines[prefix] if prefix < len(old) else len(lines)
        end = self.turn_lines[len(old) - suffix] if suffix else len(lines)
        template = self.records[start] if start < len(lines) else self._neighbour()
        turns = set(self.turn_lines)
        middle = [lines[i] for i in range(start, end) if i not in turns]
        new = [self._wrap(entry, template) for entry in entries[prefix : len(entries) - suffix]]
        out = [*lines[:start], *new, *middle, *lines[end:]]
        text = "\n".join(out)
        return text + "\n" if self.final_newline else text

    def _rewrap(self, record: JsonValue, entry: JsonValue) -> str:
        assert isinstance(record, dict)  # turn lines are objects (_is_claude_turn …)
        key = "message" if self.kind == "claude-code" else "payload"
        return json.dumps({**record, key: entry}, ensure_ascii=False, allow_nan=False)

    def _neighbour(self) -> JsonValue:
        return self.records[self.turn_lines[-1]] if self.turn_lines else None

    def _wrap(self, entry: JsonValue, template: JsonValue) -> str:
        base = template if isinstance(template, dict) else {}
        record: JsonObject
        if self.kind == "claude-code":
            role = entry.get("role") if isinstance(entry, dict) else None
            record = {"type": role if role in _CLAUDE_TURNS else "user", "message": entry}
            record.update({k: base[k] for k in _CLAUDE_SESSION_KEYS if k in base})
            record["isSidechain"] = False
        else:
            record = {"type": "response_item", "payload": entry}
            if "timestamp" in base:
                record = {"timestamp": base["timestamp"], **record}
        return json.dumps(record, ensure_ascii=False, allow_nan=False)


def read_container(
    kind: Container, text: str, records: list[JsonValue]
) -> tuple[ContainerLog, list[JsonValue]]:
    """The log of ``kind`` whose non-blank lines of ``text`` decoded to ``records``, and
    the turns (items) it carries."""
    numbered = [
        (number, line)
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip(" \t\r")
    ]
    lines = tuple(line for _, line in numbered)
    if len(lines) != len(records):  # the caller split differently: a bug, not bad input
        raise AssertionError(f"{len(lines)} lines for {len(records)} records")
    is_turn = _is_claude_turn if kind == "claude-code" else _is_codex_item
    turn_lines = tuple(i for i, record in enumerate(records) if is_turn(record))
    log = ContainerLog(
        kind,
        lines,
        tuple(records),
        turn_lines,
        tuple(number for number, _ in numbered),
        text.endswith("\n"),
    )
    return log, log.entries()
