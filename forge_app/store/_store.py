"""``SessionStore``: conversations, their original messages, archives and search, in one database.

Every write is one transaction. A compaction's archives (the span's originals,
the summary that replaced them, the changed tool outputs) and the conversation's
new snapshot are written together by :meth:`SessionStore.record`: a process
killed or cancelled before it commits leaves the store as it was before the
compaction, after it the store holds the whole compaction.

Writers of one conversation (several processes, several hosts on PostgreSQL)
serialise on the conversation's row, so sequence numbers and refs stay unique, and
each write that changes the conversation's context counts one more ``version``: a
compaction made on an older reading is found in its own transaction (``record``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import cast

from forge_app.errors import ConversationNotFound, StoreError
from forge_app.store._archives import (
    all_archives,
    archived_originals,
    insert_archives,
    new_refs,
    one_archive,
)
from forge_app.store._backend import (
    BATCH_ROWS,
    CONNECT_TIMEOUT,
    OPERATION_DEADLINE,
    Cursor,
    Database,
    Param,
    connect,
)
from forge_app.store._records import (
    Appended,
    ArchiveInfo,
    ArchiveKind,
    ConversationInfo,
    NewArchive,
    SearchHit,
    StoredMessage,
    StoredRow,
    conversation_info,
    parse_ref,
    stored_row,
)
from forge_app.store._schema import migrate
from forge_app.store._search import index_messages, search_messages
from forge_app.store._snapshot import (
    SavedConversation,
    Snapshot,
    context_size,
    load_saved,
    stored_state,
)
from forge_app.store._terms import parts, tsvector_text
from forge_app.store._url import parse_store_url
from forge_domain import ContextMessage, JsonObject

__all__: list[str] = []

_SELECT_CONVERSATIONS = (
    "SELECT c.id, c.agent, c.created_at, c.updated_at, c.next_seq - 1, "
    "(SELECT COUNT(*) FROM forge_archives a WHERE a.conversation_id = c.id) "
    "FROM forge_conversations c"
)
"""The columns :func:`conversation_info` reads, of every conversation."""
_ONE_STATEMENT_CHARS = 200_000
"""PostgreSQL appends messages of at most this much searchable text in one statement
(their search terms are parameters of it too); more take a transaction of batches."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _seq_allocation(count: int, runtime: str | None) -> tuple[str, list[Param]]:
    """The ``SET`` clause that takes ``count`` seqs of a conversation and counts one more
    version (and saves ``runtime`` when given), with its parameters."""
    sets = ["next_seq = next_seq + ?", "version = version + 1", "updated_at = ?"]
    params: list[Param] = [count, _now()]
    if runtime is not None:
        sets.append("runtime = ?")
        params.append(runtime)
    return ", ".join(sets), params


class SessionStore:
    """Sessions in a SQLite file or a PostgreSQL database (see :func:`open_store`)."""

    def __init__(self, db: Database) -> None:
        """Use an open, migrated database (use :func:`open_store`)."""
        self._db = db
        self.url = db.shown
        """The store's URL as shown in errors (password hidden)."""
        self.dialect = db.dialect
        """``sqlite`` or ``postgresql``."""

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> SessionStore:
        """Use as a context manager; closes on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close."""
        self.close()

    # -- conversations ---------------------------------------------------------------

    def ensure_conversation(self, conversation_id: str, agent: str = "") -> bool:
        """Create the conversation unless it exists; True when it was created."""
        with self._db.write() as cursor:
            return self._create(cursor, conversation_id, agent)

    def _create(self, cursor: Cursor, conversation_id: str, agent: str) -> bool:
        now = _now()
        created = cursor.run(
            "INSERT INTO forge_conversations (id, agent, created_at, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id",
            (conversation_id, agent, now, now),
        )
        return bool(created)

    def conversations(self) -> list[ConversationInfo]:
        """Every conversation, most recently updated first."""
        rows = self._db.read(_SELECT_CONVERSATIONS + " ORDER BY c.updated_at DESC, c.id")
        return [conversation_info(row) for row in rows]

    def conversation(self, conversation_id: str) -> ConversationInfo:
        """One conversation.

        Raises:
            ConversationNotFound: no such id.
        """
        rows = self._db.read(_SELECT_CONVERSATIONS + " WHERE c.id = ?", (conversation_id,))
        if not rows:
            raise ConversationNotFound(self.url, conversation_id)
        return conversation_info(rows[0])

    # -- messages --------------------------------------------------------------------

    def append(
        self, conversation_id: str, messages: Sequence[ContextMessage], runtime: str | None = None
    ) -> tuple[int, ...]:
        """Append ``messages`` to the original transcript; their seqs.

        ``runtime`` (JSON), when given, replaces the saved runtime state in the same
        transaction.
        """
        return self.append_versioned(conversation_id, messages, runtime).seqs

    def append_versioned(
        self,
        conversation_id: str,
        messages: Sequence[ContextMessage],
        runtime: str | None = None,
        *,
        create_for: str | None = None,
    ) -> Appended:
        """:meth:`append`, with the conversation's version after it (one more than before
        when ``messages`` is not empty: a writer that knew the version before is in step
        only if the new one is exactly one more).

        With ``create_for`` (an agent id) the conversation is created in the same
        transaction, so a new conversation exists only with its first messages.

        Raises:
            StoreError: ``create_for`` is given and the conversation already exists.
        """
        stored = [stored_row(message) for message in messages]  # each serialised once
        if (
            create_for is None
            and self.dialect == "postgresql"
            and 0 < len(stored) <= BATCH_ROWS
            and sum(len(row[3]) for row in stored) <= _ONE_STATEMENT_CHARS
        ):
            return self._append_in_one_statement(conversation_id, stored, runtime)
        with self._db.write() as cursor:
            if create_for is not None and not self._create(cursor, conversation_id, create_for):
                raise StoreError(
                    self.url, f"conversation {conversation_id!r} already exists; resume it instead"
                )
            return self._append(cursor, conversation_id, stored, runtime)

    def _append_in_one_statement(
        self, conversation_id: str, stored: Sequence[StoredRow], runtime: str | None
    ) -> Appended:
        """PostgreSQL: the seqs and the rows in one statement (atomic, one round trip)."""
        count = len(stored)
        sets, params = _seq_allocation(count, runtime)
        params.extend((conversation_id, count, conversation_id))
        rows_sql = []
        terms_sql: list[str] = []
        terms_params: list[Param] = []
        for k, row in enumerate(stored):
            rows_sql.append(f"({k}, ?::text, ?::text, ?::text, ?::text)")
            params.extend(row)
            for part in parts(row[3]):
                terms_sql.append(f"({k}, ?::tsvector)")
                terms_params.append(tsvector_text(part))
        # The message rows and their search terms (``_terms.py``) in the same statement.
        index = (
            ", terms AS (INSERT INTO forge_message_terms (message_id, tsv) "
            "SELECT ins.id, t.tsv FROM ins, alloc, "
            f"(VALUES {', '.join(terms_sql)}) AS t (k, tsv) WHERE ins.seq = alloc.first + t.k)"
            if terms_sql
            else ""
        )
        rows = self._db.read(
            f"WITH alloc AS (UPDATE forge_conversations SET {sets} WHERE id = ? "
            "RETURNING next_seq - ? AS first, version), "
            "ins AS (INSERT INTO forge_messages (conversation_id, seq, role, body, model, text) "
            "SELECT ?, alloc.first + v.k, v.role, v.body, v.model, v.text FROM alloc, "
            f"(VALUES {', '.join(rows_sql)}) AS v (k, role, body, model, text) "
            f"RETURNING id, seq){index} SELECT ins.seq, alloc.version FROM ins, alloc",
            [*params, *terms_params],
        )
        if not rows:
            raise ConversationNotFound(self.url, conversation_id)
        seqs = tuple(sorted(cast(int, row[0]) for row in rows))
        return Appended(seqs, cast(int, rows[0][1]))

    def _append(
        self,
        cursor: Cursor,
        conversation_id: str,
        stored: Sequence[StoredRow],
        runtime: str | None,
    ) -> Appended:
        """Give the messages of ``stored`` (their :func:`stored_row`) the next seqs (the row
        update locks the conversation) and insert them, a few statements in all however many
        there are."""
        count = len(stored)
        sets, params = _seq_allocation(count, runtime)
        if not count:
            sets = sets.replace("version = version + 1, ", "")
        rows = cursor.run(
            f"UPDATE forge_conversations SET {sets} WHERE id = ? RETURNING next_seq - ?, version",
            (*params, conversation_id, count),
        )
        if not rows:
            raise ConversationNotFound(self.url, conversation_id)
        first, version = cast(int, rows[0][0]), cast(int, rows[0][1])
        seqs = tuple(range(first, first + count))
        for at in range(0, count, BATCH_ROWS):
            chunk = list(zip(seqs[at : at + BATCH_ROWS], stored[at : at + BATCH_ROWS], strict=True))
            values: list[Param] = []
            for seq, row in chunk:
                values.extend((conversation_id, seq, *row))
            cursor.run(
                "INSERT INTO forge_messages (conversation_id, seq, role, body, model, text) VALUES "
                + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)),
                values,
            )
        if count:
            ids = cursor.run(
                "SELECT id FROM forge_messages WHERE conversation_id = ? AND seq >= ? "
                "AND seq <= ? ORDER BY seq",
                (conversation_id, seqs[0], seqs[-1]),
            )
            texts = (row[3] for row in stored)
            index_messages(
                cursor, self.dialect, zip((cast(int, row[0]) for row in ids), texts, strict=True)
            )
        return Appended(seqs, version)

    def save_runtime(self, conversation_id: str, runtime: str) -> None:
        """Replace the saved runtime state (JSON) of the conversation."""
        with self._db.write() as cursor:
            rows = cursor.run(
                "UPDATE forge_conversations SET runtime = ?, updated_at = ? WHERE id = ? "
                "RETURNING id",
                (runtime, _now(), conversation_id),
            )
            if not rows:
                raise ConversationNotFound(self.url, conversation_id)

    def originals(
        self, conversation_id: str, lo: int = 1, hi: int | None = None
    ) -> list[StoredMessage]:
        """The original messages with ``lo <= seq <= hi``, in order."""
        self.conversation(conversation_id)
        rows = self._db.read(
            "SELECT seq, role, body FROM forge_messages WHERE conversation_id = ? "
            "AND seq >= ? AND seq <= ? ORDER BY seq",
            (conversation_id, lo, hi if hi is not None else 2**31 - 1),
        )
        return [StoredMessage(cast(int, s), str(r), str(b)) for s, r, b in rows]

    def export(self, conversation_id: str) -> list[JsonObject]:
        """The original transcript: every message as it joined the conversation."""
        return [message.openai() for message in self.originals(conversation_id)]

    # -- archives --------------------------------------------------------------------

    def record(
        self,
        conversation_id: str,
        kinds: Sequence[ArchiveKind],
        build: Callable[
            [tuple[str, ...], SavedConversation | None],
            tuple[Sequence[NewArchive], Snapshot | None],
        ],
        version: int,
    ) -> tuple[tuple[str, ...], int]:
        """Write archives of ``kinds`` and the new snapshot in one transaction; their refs
        and the conversation's version after it.

        The transaction first takes the conversation's row (every writer of it waits
        here) and counts one more version. ``build`` gets the refs the store gives (one
        per kind, in order) and, when the version found is not ``version`` (another
        writer changed the conversation since the caller read it), the conversation as
        it is now, read in the same transaction (else None). It returns the archives
        (same order) and the snapshot, so that the replacement messages can name their
        refs; it may raise (:class:`ConversationChanged`) to write nothing.
        """
        spans = sum(1 for kind in kinds if kind == "span")
        changed = len(kinds) - spans
        with self._db.write() as cursor:
            now = _now()
            rows = cursor.run(
                "UPDATE forge_conversations SET next_c = next_c + ?, next_t = next_t + ?, "
                "version = version + 1, updated_at = ? WHERE id = ? "
                "RETURNING next_c - ?, next_t - ?, version",
                (spans, changed, now, conversation_id, spans, changed),
            )
            if not rows:
                raise ConversationNotFound(self.url, conversation_id)
            next_c, next_t, after = (cast(int, value) for value in rows[0])
            refs = new_refs(kinds, next_c, next_t)
            fresh = None
            if after != version + 1:
                # the same connection: these reads are inside this transaction
                fresh = load_saved(self._db, self.conversation(conversation_id))
            archives, snapshot = build(tuple(refs), fresh)
            insert_archives(cursor, conversation_id, now, refs, archives)
            if snapshot is not None:
                cursor.run(
                    "UPDATE forge_conversations SET snapshot = ? WHERE id = ?",
                    (snapshot.to_json(), conversation_id),
                )
        return tuple(refs), after

    def archives(self, conversation_id: str) -> list[ArchiveInfo]:
        """Every archive of the conversation, oldest first."""
        self.conversation(conversation_id)
        return all_archives(self._db, conversation_id)

    def search(
        self,
        query: str,
        *,
        conversation_id: str | None = None,
        limit: int = 10,
        archived_only: bool = False,
        redacted: bool = False,
    ) -> list[SearchHit]:
        """Original messages matching ``query``: the exact phrase first, then all its words
        (newest first in each); only when none holds them all, hits marked ``partial``.

        ``limit`` is capped at 50; ``archived_only`` keeps messages some archive holds
        (what compaction took out of the context); ``redacted`` takes secrets out of the
        snippets (for a model).

        Raises:
            InvalidSearchQuery: the query is over the bounds (1,000 characters, 64 words).
        """
        return search_messages(
            self._db,
            query,
            conversation_id=conversation_id,
            limit=limit,
            archived_only=archived_only,
            redacted=redacted,
        )

    def load(self, conversation_id: str) -> SavedConversation:
        """The conversation's context (latest snapshot + later messages) and runtime state.

        Raises:
            ConversationNotFound: no such id.
            StoreCorrupt: the snapshot cannot be read.
        """
        return load_saved(self._db, self.conversation(conversation_id))

    def context_size(self, conversation_id: str) -> int:
        """How many messages :meth:`load` gives, counted without reading them."""
        return context_size(self._db, conversation_id)

    def runtime(self, conversation_id: str) -> JsonObject:
        """The runtime state saved with the latest turn (empty before the first)."""
        return stored_state(self._db, conversation_id)[1]

    def archive(self, conversation_id: str, ref: str) -> ArchiveInfo:
        """The archive ``ref`` of the conversation.

        Raises:
            UnknownRef: no such ref (or not a ref at all).
            ConversationNotFound: no such conversation.
        """
        parse_ref(self.url, conversation_id, ref)
        self.conversation(conversation_id)
        return one_archive(self._db, conversation_id, ref)

    def expand(self, conversation_id: str, ref: str) -> list[StoredMessage]:
        """The original messages archive ``ref`` stands for, byte for byte as they joined."""
        return archived_originals(self._db, conversation_id, self.archive(conversation_id, ref))


def open_store(
    url: str,
    *,
    connect_timeout: int = CONNECT_TIMEOUT,
    deadline: float = OPERATION_DEADLINE,
    create: bool = True,
) -> SessionStore:
    """Open (and create or migrate) the session store at ``url``.

    ``sqlite:///PATH`` (or a bare path) is a local file in WAL mode, created when
    missing; ``postgresql://USER@HOST:PORT/DB`` needs the ``postgres`` extra. Each
    later operation (a read, a write transaction) has ``deadline`` seconds in all.
    Without ``create`` a store that does not exist yet is refused, and nothing is
    created (the read-only ``history`` commands).

    Raises:
        InvalidStoreUrl: the URL names no supported store.
        StoreUnavailable: the server does not answer within the connect timeout, the
            file cannot be opened, no store there yet and ``create`` is False.
        StoreTimeout: an operation (here: the migration) ran past ``deadline``.
        StoreCorrupt: the file is not a session store.
        StoreSchemaTooNew: the store was written by a newer forge-compact.
    """
    db = connect(parse_store_url(url), connect_timeout, deadline, create=create)
    try:
        migrate(db, create=create)
    except BaseException:
        db.close()
        raise
    return SessionStore(db)
