"""The archive tables: writing a compaction's archives, reading them back, their originals.

``forge_archives`` holds one row per ref, ``forge_archive_ranges`` the ``seq`` ranges of
original messages each stands for. Writes run inside the caller's transaction
(:meth:`SessionStore.record`); each write and each read is a fixed number of statements
however many archives and ranges there are.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import cast

from forge_app.errors import UnknownRef
from forge_app.store._backend import BATCH_ROWS, Cursor, Database, Param
from forge_app.store._records import (
    REF_PREFIX,
    ArchiveInfo,
    ArchiveKind,
    NewArchive,
    StoredMessage,
    archive_info,
    json_list,
)

__all__: list[str] = []

_SELECT_ARCHIVES = (
    "SELECT id, ref, kind, created_at, engine, reason, result, replaced, replacement "
    "FROM forge_archives WHERE conversation_id = ?"
)
"""The columns :func:`archive_info` reads, of one conversation's archives."""


def new_refs(kinds: Sequence[ArchiveKind], next_c: int, next_t: int) -> list[str]:
    """The refs of new archives of ``kinds``: each kind numbered on from its next number."""
    following = {"span": next_c, "message": next_t}
    refs: list[str] = []
    for kind in kinds:
        refs.append(f"{REF_PREFIX[kind]}{following[kind]}")
        following[kind] += 1
    return refs


def insert_archives(
    cursor: Cursor,
    conversation_id: str,
    now: str,
    refs: Sequence[str],
    archives: Sequence[NewArchive],
) -> None:
    """Insert ``archives`` (named ``refs``) and their ranges: a few multi-row statements."""
    ids: dict[str, int] = {}
    for at in range(0, len(refs), BATCH_ROWS):
        values: list[Param] = []
        chunk = list(zip(refs[at : at + BATCH_ROWS], archives[at : at + BATCH_ROWS], strict=True))
        for ref, archive in chunk:
            values.extend(
                (
                    conversation_id,
                    ref,
                    archive.kind,
                    now,
                    archive.engine,
                    archive.reason,
                    None if archive.result is None else json.dumps(archive.result),
                    json_list(archive.replaced),
                    json_list(archive.replacement),
                )
            )
        inserted = cursor.run(
            "INSERT INTO forge_archives (conversation_id, ref, kind, created_at, engine, "
            "reason, result, replaced, replacement) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
            + " RETURNING id, ref",
            values,
        )
        ids.update((str(ref), cast(int, archive_id)) for archive_id, ref in inserted)
    ranges = [
        (ids[ref], lo, hi)
        for ref, archive in zip(refs, archives, strict=True)
        for lo, hi in archive.seqs
    ]
    for at in range(0, len(ranges), BATCH_ROWS):
        chunk_ranges = ranges[at : at + BATCH_ROWS]
        cursor.run(
            "INSERT INTO forge_archive_ranges (archive_id, conversation_id, lo, hi) VALUES "
            + ", ".join(["(?, ?, ?, ?)"] * len(chunk_ranges)),
            [
                v
                for archive_id, lo, hi in chunk_ranges
                for v in (archive_id, conversation_id, lo, hi)
            ],
        )


def all_archives(db: Database, conversation_id: str) -> list[ArchiveInfo]:
    """Every archive of the conversation, oldest first."""
    rows = db.read(_SELECT_ARCHIVES + " ORDER BY id", (conversation_id,))
    ranges = _ranges(db, conversation_id)
    return [archive_info(row, ranges.get(cast(int, row[0]), ())) for row in rows]


def one_archive(db: Database, conversation_id: str, ref: str) -> ArchiveInfo:
    """The archive ``ref`` of the conversation.

    Raises:
        UnknownRef: no such ref.
    """
    rows = db.read(_SELECT_ARCHIVES + " AND ref = ?", (conversation_id, ref.strip()))
    if not rows:
        raise UnknownRef(db.shown, conversation_id, ref)
    archive_id = cast(int, rows[0][0])
    return archive_info(rows[0], _ranges(db, conversation_id, archive_id).get(archive_id, ()))


def archived_originals(
    db: Database, conversation_id: str, archive: ArchiveInfo
) -> list[StoredMessage]:
    """The original messages of each range of ``archive`` in turn, each range in seq order."""
    # CROSS JOIN keeps SQLite's join order (ranges, then messages by seq): left to itself
    # it scans every message of the conversation and looks each up in the ranges.
    rows = db.read(
        "SELECT m.seq, m.role, m.body FROM forge_archives a CROSS JOIN forge_archive_ranges r "
        "CROSS JOIN forge_messages m WHERE a.conversation_id = ? AND a.ref = ? "
        "AND r.conversation_id = a.conversation_id AND r.archive_id = a.id "
        "AND m.conversation_id = r.conversation_id AND m.seq >= r.lo AND m.seq <= r.hi",
        (conversation_id, archive.ref),
    )
    by_seq = {cast(int, s): StoredMessage(cast(int, s), str(r), str(b)) for s, r, b in rows}
    seqs = sorted(by_seq)
    return [
        by_seq[seq]
        for lo, hi in archive.seqs
        for seq in seqs[bisect_left(seqs, lo) : bisect_right(seqs, hi)]
    ]


def _ranges(
    db: Database, conversation_id: str, archive_id: int | None = None
) -> dict[int, tuple[tuple[int, int], ...]]:
    sql = "SELECT archive_id, lo, hi FROM forge_archive_ranges WHERE conversation_id = ?"
    params: list[Param] = [conversation_id]
    if archive_id is not None:
        sql += " AND archive_id = ?"
        params.append(archive_id)
    found: dict[int, list[tuple[int, int]]] = {}
    for archive, lo, hi in db.read(sql + " ORDER BY lo", params):
        found.setdefault(cast(int, archive), []).append((cast(int, lo), cast(int, hi)))
    return {key: tuple(value) for key, value in found.items()}
