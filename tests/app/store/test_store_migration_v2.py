"""A store made by schema version 1 (before conversations had a version) migrates in place."""

from __future__ import annotations

import pytest

from forge_app.store import SCHEMA_VERSION, ConversationRecorder, open_store
from forge_app.store import _schema as schema
from forge_app.store._backend import connect
from forge_app.store._records import stored_row
from forge_app.store._url import parse_store_url
from forge_domain import Context, TextMessage

MESSAGES = [
    TextMessage.system("be brief"),
    TextMessage.user("first question"),
    TextMessage.assistant("first answer"),
    TextMessage.user("second question"),
]


def _version_1_store(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables of version 1 (its migration as it stands), holding one conversation
    written row by row as version 1 wrote it."""
    with monkeypatch.context() as patch:
        patch.setattr(schema, "SCHEMA_VERSION", 1)
        patch.setattr(schema, "MIGRATIONS", {k: v[:1] for k, v in schema.MIGRATIONS.items()})
        open_store(url).close()
    db = connect(parse_store_url(url))
    try:
        with db.write() as cursor:
            cursor.run(
                "INSERT INTO forge_conversations (id, agent, created_at, updated_at, next_seq) "
                "VALUES ('conv', 'default', 't0', 't0', ?)",
                (len(MESSAGES) + 1,),
            )
            for seq, message in enumerate(MESSAGES, start=1):
                cursor.run(
                    "INSERT INTO forge_messages (conversation_id, seq, role, body, model, text) "
                    "VALUES ('conv', ?, ?, ?, ?, ?)",
                    (seq, *stored_row(message)),
                )
            if db.dialect == "sqlite":
                cursor.run(
                    "INSERT INTO forge_message_fts (rowid, text) "
                    "SELECT id, text FROM forge_messages"
                )
            columns = _columns(db.dialect, cursor)
    finally:
        db.close()
    assert "version" not in columns


def _columns(dialect: str, cursor) -> set[str]:
    if dialect == "sqlite":
        return {str(row[1]) for row in cursor.run("PRAGMA table_info(forge_conversations)")}
    rows = cursor.run(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_name = 'forge_conversations' AND table_schema = current_schema()"
    )
    return {str(row[0]) for row in rows}


def test_store_version_1_migrates_to_conversation_versions(store_url, monkeypatch):
    _version_1_store(store_url, monkeypatch)
    with open_store(store_url) as store:
        saved = store.load("conv")
        recorder = ConversationRecorder.resume(store, saved)
        context = Context(saved.messages).append(TextMessage.assistant("second answer"))
        recorder.sync(context)
        summary = TextMessage.user("Summary: two questions.")
        recorder.compacted(
            context,
            Context([context[0], summary, context[-1]]),
            engine="frame",
            reason="manual",
            result=None,
        )
        after = store.load("conv")
        rows = store._db.read("SELECT version FROM forge_schema")
    assert (saved.messages, saved.version) == (tuple(MESSAGES), 0)
    assert (after.version, recorder.version, len(after.messages)) == (2, 2, 3)
    assert rows == [(SCHEMA_VERSION,)] == [(3,)]
