"""What a conversation needs to resume: its context after the latest compaction, and later.

The snapshot written with each compaction lists the context by reference: an
original message by its ``seq``, a message a compaction wrote (a summary, a pruned
output with its ref) in full with the originals it stands for. Every message
stored after it follows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import cast

from forge_app.errors import ConversationNotFound, StoreCorrupt
from forge_app.store._backend import Database
from forge_app.store._records import (
    ConversationInfo,
    dump_message,
    from_ranges,
    load_message,
    to_ranges,
)
from forge_domain import ContextMessage, ForgeDomainError, JsonObject, JsonValue

__all__: list[str] = []


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A conversation's context after a compaction, by reference to its originals.

    Each entry is an original ``seq`` (the message kept as it joined) or a message
    written by a compaction with the originals it stands for.
    """

    entries: tuple[int | tuple[ContextMessage, tuple[tuple[int, int], ...]], ...]
    """The context, in order."""
    base_seq: int
    """The last original message when it was taken; later ones follow the entries."""
    usage_floor: int
    """The context's ``usage_floor``."""

    def to_json(self) -> str:
        """The snapshot as stored."""
        entries: list[object] = []
        for entry in self.entries:
            if isinstance(entry, int):
                entries.append(entry)
            else:
                message, ranges = entry
                entries.append({"model": dump_message(message), "seqs": [list(r) for r in ranges]})
        return json.dumps(
            {"base_seq": self.base_seq, "usage_floor": self.usage_floor, "entries": entries}
        )


@dataclass(frozen=True, slots=True)
class SavedConversation:
    """What :meth:`SessionStore.load` gives back to resume a conversation."""

    info: ConversationInfo
    """The conversation."""
    messages: tuple[ContextMessage, ...]
    """Its context: the latest snapshot, then every message appended after it."""
    lineage: tuple[tuple[int, ...], ...]
    """For each message, the original seqs it stands for."""
    origin: tuple[int | None, ...]
    """For each message, its seq when it is that original unchanged, else None."""
    usage_floor: int
    """The context's ``usage_floor``."""
    last_seq: int
    """The newest original message ``messages`` accounts for: read with them, since another
    process may append after ``info`` was read."""
    runtime: JsonObject = field(default_factory=dict)
    """The runtime state saved with the latest turn (turns, usage, loop guard, engine)."""
    version: int = 0
    """The conversation's version when the snapshot was read (every later message read is
    newer, so a write made on this reading and checked against it is never wrongly in step)."""


def load_saved(db: Database, info: ConversationInfo) -> SavedConversation:
    """The conversation's context (latest snapshot + later messages) and runtime state.

    Raises:
        ConversationNotFound: no such id.
        StoreCorrupt: the snapshot cannot be read.
    """
    conversation_id = info.id
    snapshot, runtime, version = _state(db, conversation_id)
    try:
        messages, lineage, origin, base_seq, usage_floor = _entries(db, conversation_id, snapshot)
    except (KeyError, TypeError, ValueError, ForgeDomainError) as exc:
        raise _unreadable(db, conversation_id, exc) from exc
    rows = db.read(
        "SELECT seq, model, body FROM forge_messages WHERE conversation_id = ? AND seq > ? "
        "ORDER BY seq",
        (conversation_id, base_seq),
    )
    last_seq = base_seq
    for seq, model, body in rows:
        last_seq = cast(int, seq)
        messages.append(load_message(str(model), str(body)))
        lineage.append((last_seq,))
        origin.append(last_seq)
    return SavedConversation(
        info=info,
        messages=tuple(messages),
        lineage=tuple(lineage),
        origin=tuple(origin),
        usage_floor=usage_floor,
        last_seq=last_seq,
        runtime=runtime,
        version=version,
    )


def stored_state(db: Database, conversation_id: str) -> tuple[JsonObject | None, JsonObject]:
    """The conversation's snapshot (None before its first compaction) and runtime state.

    Raises:
        ConversationNotFound: no such id.
        StoreCorrupt: either is not JSON.
    """
    snapshot, runtime, _ = _state(db, conversation_id)
    return snapshot, runtime


def _state(db: Database, conversation_id: str) -> tuple[JsonObject | None, JsonObject, int]:
    """:func:`stored_state` and the conversation's version, read in one statement."""
    rows = db.read(
        "SELECT snapshot, runtime, version FROM forge_conversations WHERE id = ?",
        (conversation_id,),
    )
    if not rows:
        raise ConversationNotFound(db.shown, conversation_id)
    snapshot_text, runtime_text, version = rows[0]
    try:
        snapshot = json.loads(str(snapshot_text)) if snapshot_text is not None else None
        runtime = json.loads(str(runtime_text)) if runtime_text is not None else {}
    except json.JSONDecodeError as exc:
        raise StoreCorrupt(db.shown, f"conversation {conversation_id!r}: {exc}") from exc
    return snapshot, runtime, cast(int, version)


def context_size(db: Database, conversation_id: str) -> int:
    """How many messages :func:`load_saved` gives, counted without reading them.

    Raises:
        ConversationNotFound: no such id.
        StoreCorrupt: the snapshot cannot be read.
    """
    snapshot, _ = stored_state(db, conversation_id)
    try:
        entries, base_seq, _ = _outline(snapshot)
    except (KeyError, TypeError) as exc:
        raise _unreadable(db, conversation_id, exc) from exc
    rows = db.read(
        "SELECT COUNT(*) FROM forge_messages WHERE conversation_id = ? AND seq > ?",
        (conversation_id, base_seq),
    )
    return len(entries) + cast(int, rows[0][0])


def _unreadable(db: Database, conversation_id: str, exc: Exception) -> StoreCorrupt:
    return StoreCorrupt(
        db.shown, f"conversation {conversation_id!r}: unreadable snapshot ({exc!r:.200})"
    )


def _outline(snapshot: JsonObject | None) -> tuple[list[JsonValue], int, int]:
    """The entries of ``snapshot``, its base seq and its usage floor (none, 0, 0 without one)."""
    if snapshot is None:
        return [], 0, 0
    entries = snapshot["entries"]
    base_seq, usage_floor = snapshot["base_seq"], snapshot["usage_floor"]
    if not isinstance(entries, list):
        raise TypeError("entries must be a list")
    if not isinstance(base_seq, int) or not isinstance(usage_floor, int):
        raise TypeError("base_seq and usage_floor must be integers")
    return entries, base_seq, usage_floor


def _entries(
    db: Database, conversation_id: str, snapshot: JsonObject | None
) -> tuple[list[ContextMessage], list[tuple[int, ...]], list[int | None], int, int]:
    """The messages of ``snapshot`` with their lineage and origin, its base seq and floor."""
    messages: list[ContextMessage] = []
    lineage: list[tuple[int, ...]] = []
    origin: list[int | None] = []
    entries, base_seq, usage_floor = _outline(snapshot)
    wanted = [entry for entry in entries if isinstance(entry, int)]
    by_seq = _models(db, conversation_id, wanted)
    for entry in entries:
        if isinstance(entry, int):
            messages.append(by_seq[entry])
            lineage.append((entry,))
            origin.append(entry)
        else:
            item = cast(JsonObject, entry)
            ranges = cast(list[list[int]], item["seqs"])
            messages.append(load_message(str(item["model"]), "{}"))
            lineage.append(from_ranges(ranges))
            origin.append(None)
    return messages, lineage, origin, base_seq, usage_floor


def _models(db: Database, conversation_id: str, seqs: list[int]) -> dict[int, ContextMessage]:
    if not seqs:
        return {}
    found: dict[int, ContextMessage] = {}
    for lo, hi in to_ranges(seqs):
        for seq, model, body in db.read(
            "SELECT seq, model, body FROM forge_messages WHERE conversation_id = ? "
            "AND seq >= ? AND seq <= ?",
            (conversation_id, lo, hi),
        ):
            found[cast(int, seq)] = load_message(str(model), str(body))
    missing = [seq for seq in seqs if seq not in found]
    if missing:
        raise StoreCorrupt(
            db.shown, f"conversation {conversation_id!r}: snapshot names missing {missing[:5]}"
        )
    return found
