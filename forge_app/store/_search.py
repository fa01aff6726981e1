"""Full-text search over the original messages, the same on SQLite and PostgreSQL.

Text and query are cut into terms by one rule (``_terms.py``); each word of the query
is a phrase of terms (``order.save()`` is ``order save``). Hits come in tiers, newest
message first within each: the whole query as one phrase (exact phrase), then every
word's phrase anywhere in the message. Only when no message holds every word, the
messages holding some of them come back marked ``partial`` (never as the answer).
Each hit carries a bounded plain-text snippet around the match and the newest archive
ref that holds the message (None while it was never compacted).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple, cast

from forge_app.store._backend import BATCH_ROWS, Cursor, Database, Param
from forge_app.store._records import SearchHit
from forge_app.store._terms import (
    SearchQuery,
    fts_phrase,
    fts_text,
    located_terms,
    parse_query,
    parts,
    tsquery_phrase,
    tsvector_text,
)
from forge_app.store._url import Dialect
from forge_app.summary import redact

__all__: list[str] = []

_NEWEST_REF = (
    "(SELECT a.ref FROM forge_archive_ranges r JOIN forge_archives a ON a.id = r.archive_id "
    "WHERE r.conversation_id = h.conversation_id AND r.lo <= h.seq AND r.hi >= h.seq "
    "ORDER BY a.id DESC LIMIT 1)"
)
"""The newest archive that holds hit ``h`` (NULL: never archived)."""
SEARCH_LIMIT = 50
"""Most hits one search returns, whatever it asks for."""
SNIPPET_WORDS = 24
"""About how many words of context a snippet shows."""
SNIPPET_BEFORE = 6
"""Words of a snippet before the match."""
SNIPPET_CHARS = 240
"""Most characters of one snippet."""
PART_SLOTS = 1 << 20
"""SQLite: part ``k`` of message ``id`` is FTS5 row ``id * PART_SLOTS + k`` (the FTS5 table
is contentless), so the rows come newest message first by rowid, without reading a column
(a message's terms past its first million parts, ~190 million terms, are not indexed)."""
_FIRST_BATCH = 64
"""SQLite: FTS5 rows read in the first batch of a search over every conversation."""


def index_messages(cursor: Cursor, dialect: Dialect, rows: Iterable[tuple[int, str]]) -> None:
    """Store the terms of the messages ``(id, searchable text)`` for search."""
    values: list[tuple[Param, Param]] = []
    for message_id, text in rows:
        for k, part in enumerate(parts(text)[:PART_SLOTS]):
            if dialect == "sqlite":
                values.append((message_id * PART_SLOTS + k, fts_text(part)))
            else:
                values.append((message_id, tsvector_text(part)))
    columns, row = (
        ("rowid, terms", "(?, ?)")
        if dialect == "sqlite"
        else ("message_id, tsv", "(?, ?::tsvector)")
    )
    for at in range(0, len(values), BATCH_ROWS):
        chunk = values[at : at + BATCH_ROWS]
        cursor.run(
            f"INSERT INTO forge_message_terms ({columns}) VALUES " + ", ".join([row] * len(chunk)),
            [value for pair in chunk for value in pair],
        )


def index_all_messages(cursor: Cursor, dialect: Dialect) -> None:
    """Store the terms of every stored message (the migration to schema version 2)."""
    last = 0
    while True:
        rows = cursor.run(
            "SELECT id, text FROM forge_messages WHERE id > ? ORDER BY id LIMIT ?",
            (last, BATCH_ROWS),
        )
        if not rows:
            return
        index_messages(cursor, dialect, [(cast(int, i), str(text)) for i, text in rows])
        last = cast(int, rows[-1][0])


def search_messages(
    db: Database,
    query: str,
    *,
    conversation_id: str | None = None,
    limit: int = 10,
    archived_only: bool = False,
    redacted: bool = False,
) -> list[SearchHit]:
    """Original messages matching ``query``: exact phrase first, then all its words;
    else messages holding some of the words, marked ``partial``.

    ``limit`` is capped at :data:`SEARCH_LIMIT`; ``archived_only`` keeps messages
    some archive holds (what compaction took out of the context); ``redacted``
    takes secrets out of the snippets (what goes back to a model).

    Raises:
        InvalidSearchQuery: the query is over the bounds (``_terms.MAX_QUERY_*``).
    """
    parsed = parse_query(query)
    limit = max(1, min(limit, SEARCH_LIMIT))
    if not parsed.phrases:
        return []
    filters = _Filters(conversation_id, archived_only)
    tiers: list[tuple[Sequence[tuple[str, ...]], str, str | None]] = []
    verbatim = _verbatim(parsed)
    if verbatim is not None:
        tiers.append(((parsed.whole,), "INTERSECT", verbatim))
    if len(parsed.phrases) > 1:
        tiers.append(((parsed.whole,), "INTERSECT", None))
    tiers.append((parsed.phrases, "INTERSECT", None))
    rows: list[_Row] = []
    for phrases, combine, like in tiers:
        rows.extend(_select(db, phrases, combine, filters, rows, limit, like))
        if len(rows) >= limit:
            break
    partial = not rows and len(parsed.phrases) > 1
    if partial:
        rows = _select(db, parsed.phrases, "UNION", filters, [], limit)
    return [
        SearchHit(
            conversation_id=row.conversation_id,
            seq=row.seq,
            role=row.role,
            snippet=snippet(redact(row.text) if redacted else row.text, parsed),
            ref=row.ref,
            partial=partial,
        )
        for row in rows[:limit]
    ]


def _verbatim(query: SearchQuery) -> str | None:
    """A ``LIKE`` pattern of the query as typed (lower case), when that says more than its
    terms (``astroid_manager.py`` against ``astroid/manager.py``); ASCII only, where
    ``lower`` is the same on both databases."""
    typed = " ".join(query.text.split()).lower()
    if not typed.isascii() or typed == " ".join(query.whole):
        return None
    escaped = typed.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class _Row(NamedTuple):
    message_id: int
    conversation_id: str
    seq: int
    role: str
    text: str
    ref: str | None


class _Filters(NamedTuple):
    conversation_id: str | None
    archived_only: bool


def _matching(dialect: Dialect, phrase: tuple[str, ...], one: bool) -> tuple[str, Param]:
    """PostgreSQL: the ids of the messages holding ``phrase`` (with repeats: one per part),
    or (``one`` conversation) whether message ``m`` holds it; SQLite: whether message ``m``
    holds it (one FTS5 lookup of its rows)."""
    if dialect == "postgresql" and one:
        return (
            "EXISTS (SELECT 1 FROM forge_message_terms t WHERE t.message_id = m.id "
            "AND t.tsv @@ ?::tsquery)",
            tsquery_phrase(phrase),
        )
    if dialect == "sqlite":
        return (
            "EXISTS (SELECT 1 FROM forge_message_terms WHERE forge_message_terms MATCH ? "
            f"AND rowid >= m.id * {PART_SLOTS} AND rowid < (m.id + 1) * {PART_SLOTS})",
            fts_phrase(phrase),
        )
    return (
        "SELECT message_id FROM forge_message_terms WHERE tsv @@ ?::tsquery",
        tsquery_phrase(phrase),
    )


def _select(
    db: Database,
    phrases: Sequence[tuple[str, ...]],
    combine: str,
    filters: _Filters,
    before: Sequence[_Row],
    limit: int,
    like: str | None = None,
) -> list[_Row]:
    """The newest messages holding every phrase (``INTERSECT``) or any (``UNION``) (and,
    given ``like``, the query as typed), but none of ``before``, at most ``limit`` minus
    those."""
    selects: list[str] = []
    params: list[Param] = []
    for phrase in phrases:
        sql, param = _matching(db.dialect, phrase, filters.conversation_id is not None)
        selects.append(sql)
        params.append(param)
    if db.dialect == "sqlite" or filters.conversation_id is not None:
        # Each message looked up: in one conversation on PostgreSQL, its messages are few
        # and the set of messages holding a common word over every conversation is large.
        joiner = " AND " if combine == "INTERSECT" else " OR "
        where = [f"({joiner.join(selects)})"]
    else:
        where = [f"m.id IN ({f' {combine} '.join(selects)})"]
    if filters.conversation_id is not None:
        where.append("m.conversation_id = ?")
        params.append(filters.conversation_id)
    if filters.archived_only:
        where.append(
            "EXISTS (SELECT 1 FROM forge_archive_ranges r WHERE r.conversation_id = "
            "m.conversation_id AND r.lo <= m.seq AND r.hi >= m.seq)"
        )
    if like is not None:
        where.append("lower(m.text) LIKE ? ESCAPE '\\'")
        params.append(like)
    if before:
        where.append(f"m.id NOT IN ({', '.join('?' * len(before))})")
        params.extend(row.message_id for row in before)
    if db.dialect == "sqlite":
        window = _id_window(db, filters.conversation_id)
        if window is None:
            return []
        return _streamed(db, phrases, combine, where, params, limit - len(before), window)
    params.append(limit - len(before))
    # Newest first: in one conversation its seqs are in the order of the ids, and the
    # (conversation, seq) index reads them newest first without looking at the others.
    newest = "m.seq" if filters.conversation_id is not None else "m.id"
    return _rows(db, where, params, newest)


def _rows(db: Database, where: list[str], params: list[Param], newest: str) -> list[_Row]:
    """The newest messages meeting ``where`` (``params`` end with the limit), with the refs
    of the hits from the same query."""
    found = db.read(
        f"SELECT h.id, h.conversation_id, h.seq, h.role, h.text, {_NEWEST_REF} FROM "
        "(SELECT m.id, m.conversation_id, m.seq, m.role, m.text FROM forge_messages m "
        f"WHERE {' AND '.join(where)} ORDER BY {newest} DESC LIMIT ?) h ORDER BY h.id DESC",
        params,
    )
    return [
        _Row(
            cast(int, i),
            str(conv),
            cast(int, seq),
            str(role),
            str(text),
            None if ref is None else str(ref),
        )
        for i, conv, seq, role, text, ref in found
    ]


def _id_window(db: Database, conversation_id: str | None) -> tuple[int, int] | None:
    """The FTS5 rowids that may hold the conversation's messages (every row without one;
    None: a conversation without messages). Its seqs are in the order of its ids."""
    if conversation_id is None:
        return 0, 2**63 - 1
    rows = db.read(
        "SELECT (SELECT id FROM forge_messages WHERE conversation_id = ? ORDER BY seq LIMIT 1), "
        "(SELECT id FROM forge_messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1)",
        (conversation_id, conversation_id),
    )
    first, last = rows[0]
    if first is None or last is None:
        return None
    return cast(int, first) * PART_SLOTS, (cast(int, last) + 1) * PART_SLOTS - 1


def _streamed(
    db: Database,
    phrases: Sequence[tuple[str, ...]],
    combine: str,
    where: list[str],
    params: list[Param],
    want: int,
    window: tuple[int, int],
) -> list[_Row]:
    """SQLite: FTS5 rows (within ``window``) of the likely rarest phrase (every phrase for
    ``UNION``) newest first, in growing batches; each batch's messages are checked against
    ``where``, until ``want`` are found or the rows run out. (Reading every matching row
    first took 9 s for ``the`` at 1,000,000 messages; looking up each message of one
    conversation 0.4 s for a rare word.)"""
    if combine == "UNION":
        driver = " OR ".join(fts_phrase(phrase) for phrase in phrases)
    else:
        driver = fts_phrase(max(phrases, key=lambda p: (len(p), max(map(len, p)))))
    found: list[_Row] = []
    low, below = window[0], window[1] + 1
    batch = _FIRST_BATCH
    while len(found) < want:
        rowids = db.read(
            "SELECT rowid FROM forge_message_terms WHERE forge_message_terms MATCH ? "
            f"AND rowid >= {low} AND rowid < {below} ORDER BY rowid DESC LIMIT {batch}",
            (driver,),
        )
        ids = list(dict.fromkeys(cast(int, row[0]) // PART_SLOTS for row in rowids))
        if not ids:
            break
        below = ids[-1] * PART_SLOTS  # every part of the messages read is checked below
        found.extend(
            _rows(
                db,
                [*where, f"m.id IN ({', '.join(map(str, ids))})"],
                [*params, want - len(found)],
                "m.id",
            )
        )
        if len(rowids) < batch:
            break
        batch *= 4
    return found


def _first(terms: Sequence[str], phrase: tuple[str, ...]) -> int | None:
    size = len(phrase)
    for at, term in enumerate(terms):
        if term == phrase[0] and tuple(terms[at : at + size]) == phrase:
            return at
    return None


def snippet(text: str, query: SearchQuery) -> str:
    """Plain text around the first place ``text`` holds the query (as typed, else the exact
    phrase, else its first word's phrase found), one line of at most :data:`SNIPPET_CHARS`."""
    text = unicodedata.normalize("NFC", text)
    located = list(located_terms(text))
    terms = [t.term for t in located]
    places = [_first(terms, phrase) for phrase in (query.whole, *query.phrases)]
    at = next((place for place in places if place is not None), None)
    typed = text.lower().find(" ".join(query.text.split()).lower()) if text.isascii() else -1
    if typed >= 0:
        at = next((k for k, t in enumerate(located) if t.end > typed), at)
    if at is None:
        return _bounded(text, 0, len(text))
    lo, hi = max(0, at - SNIPPET_BEFORE), at - SNIPPET_BEFORE + SNIPPET_WORDS
    first = located[lo].start if lo > 0 else 0
    last = located[hi].end if hi < len(located) - 1 else len(text)
    match = located[at].start
    if last - first > SNIPPET_CHARS:
        first = max(first, match - SNIPPET_CHARS // 4)
        last = min(last, first + SNIPPET_CHARS)
    return _bounded(text, first, last)


def _bounded(text: str, first: int, last: int) -> str:
    line = " ".join(text[first:last].split())
    line = ("…" if first > 0 else "") + line + ("…" if last < len(text) else "")
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"
