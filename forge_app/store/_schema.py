"""The store's tables, versioned: each migration moves the schema one version up.

``forge_schema`` holds the version. Opening a store applies the missing
migrations in one transaction; a store whose version is newer than
:data:`SCHEMA_VERSION` is refused (:class:`StoreSchemaTooNew`) and left as it is.

Tables (every name starts with ``forge_``, so a shared PostgreSQL database is fine):

- ``forge_conversations``: one row per conversation, its counters (next message
  sequence number, next ``c`` and ``t`` ref), its ``version`` (one more with each
  write that changes its context), the snapshot of its context after the latest
  compaction and the small runtime state saved every turn;
- ``forge_messages``: append-only, every message in the order it joined the
  conversation (``seq`` from 1), as OpenAI JSON (``body``, what ``export`` writes)
  and as the exact model (``model``), with its searchable text;
- ``forge_archives``: one row per archive ref: ``c`` a span replaced by a summary,
  ``t`` one message replaced in place (a pruned or cut tool output); what it
  replaced, what replaced it, the engine, the ``CompactionResult``;
- ``forge_archive_ranges``: the original messages (``seq`` ranges) each archive stands for;
- ``forge_message_terms``: full-text search, each message's terms (``_terms.py``, one
  rule on both databases) in overlapping parts: an FTS5 table (``ascii`` tokenizer) on
  SQLite, a ``tsvector`` built by our code with a GIN index on PostgreSQL.

Version 1 searched with the databases' own tokenisers (FTS5 ``porter unicode61``, a
generated ``tsvector`` of ``english``); version 2 indexes the terms of every stored
message again and drops those.
"""

from __future__ import annotations

from collections.abc import Callable

from forge_app.errors import StoreCorrupt, StoreSchemaTooNew, StoreUnavailable
from forge_app.store._backend import NO_STORE, Cursor, Database
from forge_app.store._search import index_all_messages
from forge_app.store._url import Dialect

__all__: list[str] = []

SCHEMA_VERSION = 3
"""The schema this version of forge-compact reads and writes."""

_COMMON_V1 = (
    """CREATE TABLE forge_conversations (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        next_seq INTEGER NOT NULL DEFAULT 1,
        next_c INTEGER NOT NULL DEFAULT 1,
        next_t INTEGER NOT NULL DEFAULT 1,
        snapshot TEXT,
        runtime TEXT
    )""",
    """CREATE TABLE forge_archive_ranges (
        archive_id INTEGER NOT NULL,
        conversation_id TEXT NOT NULL,
        lo INTEGER NOT NULL,
        hi INTEGER NOT NULL
    )""",
    "CREATE INDEX forge_archive_ranges_seq ON forge_archive_ranges (conversation_id, lo, hi)",
)

_SQLITE_V1 = (
    *_COMMON_V1,
    """CREATE TABLE forge_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id TEXT NOT NULL REFERENCES forge_conversations (id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        body TEXT NOT NULL,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        UNIQUE (conversation_id, seq)
    )""",
    """CREATE TABLE forge_archives (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        conversation_id TEXT NOT NULL REFERENCES forge_conversations (id),
        ref TEXT NOT NULL,
        kind TEXT NOT NULL,
        created_at TEXT NOT NULL,
        engine TEXT NOT NULL,
        reason TEXT NOT NULL,
        result TEXT,
        replaced TEXT NOT NULL,
        replacement TEXT NOT NULL,
        UNIQUE (conversation_id, ref)
    )""",
    "CREATE VIRTUAL TABLE forge_message_fts USING fts5(text, tokenize = 'porter unicode61')",
)

_POSTGRES_V1 = (
    *_COMMON_V1,
    """CREATE TABLE forge_messages (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES forge_conversations (id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        body TEXT NOT NULL,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (conversation_id, seq)
    )""",
    "CREATE INDEX forge_messages_tsv ON forge_messages USING GIN (tsv)",
    """CREATE TABLE forge_archives (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES forge_conversations (id),
        ref TEXT NOT NULL,
        kind TEXT NOT NULL,
        created_at TEXT NOT NULL,
        engine TEXT NOT NULL,
        reason TEXT NOT NULL,
        result TEXT,
        replaced TEXT NOT NULL,
        replacement TEXT NOT NULL,
        UNIQUE (conversation_id, ref)
    )""",
)

Step = str | Callable[[Cursor, Dialect], None]
"""A statement, or a function run with the migration's cursor (what SQL cannot compute)."""

_SQLITE_V2: tuple[Step, ...] = (
    "CREATE VIRTUAL TABLE forge_message_terms USING fts5(terms, content = '', tokenize = 'ascii')",
    index_all_messages,
    "DROP TABLE forge_message_fts",
)

_POSTGRES_V2: tuple[Step, ...] = (
    """CREATE TABLE forge_message_terms (
        message_id BIGINT NOT NULL REFERENCES forge_messages (id),
        tsv tsvector NOT NULL
    )""",
    index_all_messages,
    "CREATE INDEX forge_message_terms_tsv ON forge_message_terms USING GIN (tsv)",
    "CREATE INDEX forge_message_terms_message ON forge_message_terms (message_id)",
    "DROP INDEX forge_messages_tsv",
    "ALTER TABLE forge_messages DROP COLUMN tsv",
)

_CONVERSATION_VERSION: tuple[Step, ...] = (
    "ALTER TABLE forge_conversations ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
)
"""Version 3: each conversation counts the writes that changed its stored context (an
append, a compaction), so a writer that read an older one is found in its transaction."""

MIGRATIONS: dict[Dialect, tuple[tuple[Step, ...], ...]] = {
    "sqlite": (_SQLITE_V1, _SQLITE_V2, _CONVERSATION_VERSION),
    "postgresql": (_POSTGRES_V1, _POSTGRES_V2, _CONVERSATION_VERSION),
}
"""Per dialect, the steps of migration ``n`` at index ``n - 1``."""


def _tables(db: Database, cursor: Cursor) -> set[str]:
    if db.dialect == "sqlite":
        rows = cursor.run("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    else:
        rows = cursor.run(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    return {str(row[0]) for row in rows}


def migrate(db: Database, *, create: bool = True) -> int:
    """Bring the schema of ``db`` to :data:`SCHEMA_VERSION`; return the version found.

    Raises:
        StoreSchemaTooNew: the store is newer than this code (nothing is changed).
        StoreCorrupt: a SQLite file holding other tables and no forge schema.
        StoreUnavailable: no store there yet and ``create`` is False (nothing is created).
    """
    with db.write() as cursor:
        if db.dialect == "postgresql":
            cursor.run("SELECT pg_advisory_xact_lock(7201126)")
        tables = _tables(db, cursor)
        if "forge_schema" not in tables:
            if db.dialect == "sqlite" and tables:
                raise StoreCorrupt(db.shown, "not a forge-compact session store (other tables)")
            if not create:
                raise StoreUnavailable(db.shown, NO_STORE)
            cursor.run("CREATE TABLE forge_schema (version INTEGER NOT NULL)")
            cursor.run("INSERT INTO forge_schema (version) VALUES (0)")
        rows = cursor.run("SELECT version FROM forge_schema")
        if len(rows) != 1 or not isinstance(rows[0][0], int):
            raise StoreCorrupt(db.shown, "the schema version table is damaged")
        found = rows[0][0]
        if found > SCHEMA_VERSION:
            raise StoreSchemaTooNew(db.shown, found, SCHEMA_VERSION)
        for version, statements in enumerate(MIGRATIONS[db.dialect], start=1):
            if version > found:
                for statement in statements:
                    if callable(statement):
                        statement(cursor, db.dialect)
                    else:
                        cursor.run(statement)
        if found < SCHEMA_VERSION:
            cursor.run("UPDATE forge_schema SET version = ?", (SCHEMA_VERSION,))
    return found
