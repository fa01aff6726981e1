"""The session store: every conversation's original messages, what compaction replaced, search.

A layer beside ``forge_app.compaction``: it depends on ``forge_domain`` and
``forge_app.errors`` only; the runtime (orchestrator) and the CLI use it.

- :func:`open_store` opens ``sqlite:///PATH`` (the default: a file in WAL mode) or
  ``postgresql://…`` (the ``postgres`` extra), creating or migrating its schema;
- :class:`SessionStore` appends messages, records compactions (one transaction per
  compaction), searches (SQLite FTS5, PostgreSQL text search), expands refs and
  exports the original transcript;
- :class:`ConversationRecorder` keeps one conversation's store in step with its context;
- :class:`ArchivingEngine` wraps any context engine: archives its compactions, names
  the refs in the context, and offers the model ``recall_search`` and ``recall_expand``.
"""

from forge_app.store._engine import RECALL_PAGE_FRACTION, ArchivingEngine
from forge_app.store._recorder import ConversationRecorder
from forge_app.store._records import (
    ArchiveInfo,
    ArchiveKind,
    ConversationInfo,
    SearchHit,
    StoredMessage,
    new_conversation_id,
)
from forge_app.store._schema import SCHEMA_VERSION
from forge_app.store._snapshot import SavedConversation
from forge_app.store._store import SessionStore, open_store
from forge_app.store._url import parse_store_url, redact_url

__all__ = [
    "RECALL_PAGE_FRACTION",
    "SCHEMA_VERSION",
    "ArchiveInfo",
    "ArchiveKind",
    "ArchivingEngine",
    "ConversationInfo",
    "ConversationRecorder",
    "SavedConversation",
    "SearchHit",
    "SessionStore",
    "StoredMessage",
    "new_conversation_id",
    "open_store",
    "parse_store_url",
    "redact_url",
]
