"""The values the store hands back: conversations, archives, original messages, search hits."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import TypeAdapter, ValidationError

from forge_app.errors import UnknownRef
from forge_domain import ContextMessage, JsonObject, TextMessage, ToolResult
from forge_domain.formats import message_from_openai, message_to_openai

__all__: list[str] = []

ArchiveKind = Literal["span", "message"]
"""``span``: messages replaced by a summary (ref ``cN``); ``message``: one message changed in
place, e.g. a pruned or cut tool output (ref ``tN``)."""

REF_PREFIX: dict[ArchiveKind, str] = {"span": "c", "message": "t"}
"""The letter that starts the refs of each kind."""

_MESSAGE = TypeAdapter[ContextMessage](ContextMessage)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
STEM_CHARS = 40
"""Most characters of a conversation id's stem."""


def new_conversation_id(stem: str) -> str:
    """The one rule that names new conversations: ``<stem>-<8 hex digits>``.

    ``stem`` is the transcript's file name without its extension (``stdin`` for standard
    input) or, for a conversation started from a prompt, the agent id; anything but
    letters, digits, ``.``, ``_`` and ``-`` becomes ``-``, and it is cut to
    :data:`STEM_CHARS` (``conversation`` when nothing is left).
    """
    safe = _UNSAFE.sub("-", stem).strip("-")[:STEM_CHARS] or "conversation"
    return f"{safe}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """One stored conversation."""

    id: str
    """The conversation id."""
    agent: str
    """The agent id it ran with (empty when unknown)."""
    created_at: str
    """ISO-8601 UTC time it was first stored."""
    updated_at: str
    """ISO-8601 UTC time of the latest write."""
    messages: int
    """Original messages stored (the append-only transcript)."""
    archives: int
    """Archive refs (compacted spans and changed messages)."""


@dataclass(frozen=True, slots=True)
class Appended:
    """What :meth:`SessionStore.append_versioned` wrote."""

    seqs: tuple[int, ...]
    """The seqs the messages got, in order."""
    version: int
    """The conversation's version after the append."""


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One original message as it joined the conversation."""

    seq: int
    """1-based position in the conversation's original transcript."""
    role: str
    """``system``, ``user``, ``assistant``, ``tool`` …"""
    body: str
    """The OpenAI JSON of the message, as stored (``export`` writes exactly this)."""

    def openai(self) -> JsonObject:
        """The message as an OpenAI message object."""
        value: JsonObject = json.loads(self.body)
        return value


@dataclass(frozen=True, slots=True)
class ArchiveInfo:
    """One archive ref of a conversation."""

    ref: str
    """``c3`` (a span replaced by a summary) or ``t12`` (a message changed in place)."""
    kind: ArchiveKind
    """Which of the two."""
    created_at: str
    """When it was written."""
    engine: str
    """The engine whose compaction wrote it."""
    reason: str
    """Why the compaction ran (``threshold``, ``manual``, ``cut`` …)."""
    seqs: tuple[tuple[int, int], ...]
    """The original messages it stands for, as inclusive ``seq`` ranges."""
    result: JsonObject | None
    """The ``CompactionResult`` of the compaction, as JSON (span refs only)."""
    replaced: tuple[JsonObject, ...]
    """The messages it replaced, as they were in the context (earlier summaries included)."""
    replacement: tuple[JsonObject, ...]
    """What replaced them (the summary, or the placeholder), with the ref named."""

    def original_count(self) -> int:
        """How many original messages it stands for."""
        return sum(hi - lo + 1 for lo, hi in self.seqs)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One message matching a search."""

    conversation_id: str
    """The conversation it belongs to."""
    seq: int
    """Its position in the original transcript."""
    role: str
    """Its role."""
    snippet: str
    """Plain text around the match, one bounded line."""
    ref: str | None
    """The newest archive ref that holds it (None: never compacted, still in the context)."""
    partial: bool = False
    """True: no message holds every word of the query; this one holds some of them."""


def to_ranges(seqs: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sorted distinct ``seqs`` as inclusive ranges: ``1,2,3,7`` -> ``(1, 3), (7, 7)``."""
    ranges: list[tuple[int, int]] = []
    for seq in sorted(set(seqs)):
        if ranges and ranges[-1][1] == seq - 1:
            ranges[-1] = (ranges[-1][0], seq)
        else:
            ranges.append((seq, seq))
    return tuple(ranges)


def from_ranges(ranges: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """The seqs of inclusive ``ranges``."""
    return tuple(seq for lo, hi in ranges for seq in range(lo, hi + 1))


def dump_message(message: ContextMessage) -> str:
    """The exact model of ``message`` as JSON (summary data included)."""
    return _MESSAGE.dump_json(message).decode()


def load_message(model: str, body: str) -> ContextMessage:
    """Read a message back from :func:`dump_message`, else from its OpenAI ``body``."""
    try:
        return _MESSAGE.validate_json(model)
    except ValidationError:
        return message_from_openai(0, json.loads(body))


def openai_json(message: ContextMessage) -> str:
    """The OpenAI JSON of ``message`` (key order as written by ``message_to_openai``)."""
    return json.dumps(message_to_openai(message), ensure_ascii=False)


def search_text(message: ContextMessage) -> str:
    """The words a search should find ``message`` by: its text, and the calls it makes."""
    if isinstance(message, ToolResult):
        return message.text
    parts = [message.text]
    if isinstance(message, TextMessage):
        parts.extend(f"{call.name} {call.arguments}" for call in message.tool_calls or ())
    return "\n".join(part for part in parts if part)


REF_PATTERN = re.compile(r"^([ct])([1-9][0-9]{0,8})$")


@dataclass(frozen=True, slots=True)
class NewArchive:
    """An archive to write: what was replaced and by what (refs are given by the store)."""

    kind: ArchiveKind
    """``span`` or ``message``."""
    seqs: tuple[tuple[int, int], ...]
    """The original messages it stands for (inclusive ranges)."""
    replaced: tuple[ContextMessage, ...]
    """The messages it replaced, as they were in the context."""
    replacement: tuple[ContextMessage, ...]
    """What replaced them (with the ref named)."""
    engine: str
    """The engine that compacted."""
    reason: str
    """Why."""
    result: JsonObject | None = None
    """The compaction's ``CompactionResult`` as JSON."""


def parse_ref(shown: str, conversation_id: str, ref: str) -> tuple[str, int]:
    """``c3`` -> ``("c", 3)``.

    Raises:
        UnknownRef: ``ref`` is not a ``c`` or ``t`` followed by a number.
    """
    match = REF_PATTERN.match(ref.strip())
    if match is None:
        raise UnknownRef(
            shown,
            conversation_id,
            ref,
            f"{ref!r} is not an archive ref (expected c<number> or t<number>, e.g. c3)",
        )
    return match.group(1), int(match.group(2))


StoredRow = tuple[str, str, str, str]
"""The stored columns of a message after its seq: role, body, model, searchable text."""


def stored_row(message: ContextMessage) -> StoredRow:
    """The stored columns of ``message`` after its seq: role, body, model, searchable text."""
    role = "tool" if isinstance(message, ToolResult) else str(message.role)
    return role, openai_json(message), dump_message(message), search_text(message)


def json_list(messages: Sequence[ContextMessage]) -> str:
    return "[" + ", ".join(openai_json(message) for message in messages) + "]"


def conversation_info(row: tuple[object, ...]) -> ConversationInfo:
    cid, agent, created, updated, messages, archives = row
    return ConversationInfo(
        str(cid), str(agent), str(created), str(updated), cast(int, messages), cast(int, archives)
    )


def archive_info(row: tuple[object, ...], seqs: tuple[tuple[int, int], ...]) -> ArchiveInfo:
    _, ref, kind, created, engine, reason, result, replaced, replacement = row
    return ArchiveInfo(
        ref=str(ref),
        kind=cast(ArchiveKind, kind),
        created_at=str(created),
        engine=str(engine),
        reason=str(reason),
        seqs=seqs,
        result=None if result is None else json.loads(str(result)),
        replaced=tuple(json.loads(str(replaced))),
        replacement=tuple(json.loads(str(replacement))),
    )
