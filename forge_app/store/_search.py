"""Full-text search over the original messages: SQLite FTS5 or PostgreSQL text search.

All the words of the query first, then (when nothing matched) any of them. Hits come
best first (bm25 / ``ts_rank``) with a bounded snippet and the newest archive ref that
holds the message (None while it was never compacted).
"""

from __future__ import annotations

import re
from typing import cast

from forge_app.store._backend import Database, Param
from forge_app.store._records import SearchHit

__all__: list[str] = []

_WORD = re.compile(r"\w+", re.UNICODE)
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
SNIPPET_CHARS = 240
"""Most characters of one snippet."""


def search_messages(
    db: Database,
    query: str,
    *,
    conversation_id: str | None = None,
    limit: int = 10,
    archived_only: bool = False,
) -> list[SearchHit]:
    """Original messages matching ``query`` (all its words, else any), best first.

    ``limit`` is capped at :data:`SEARCH_LIMIT`; ``archived_only`` keeps messages
    some archive holds (what compaction took out of the context).
    """
    words = _WORD.findall(query)
    limit = max(1, min(limit, SEARCH_LIMIT))
    if not words:
        return []
    for joiner in (" ", " OR "):
        hits = _search(db, words, joiner, conversation_id, limit, archived_only)
        if hits or len(words) == 1:
            return hits
    return []


def _search(
    db: Database,
    words: list[str],
    joiner: str,
    conversation_id: str | None,
    limit: int,
    archived_only: bool,
) -> list[SearchHit]:
    where: list[str] = []
    params: list[Param] = []
    if db.dialect == "sqlite":
        params.append(joiner.join(f'"{word}"' for word in words))
        select = (
            "SELECT m.id, m.conversation_id, m.seq, m.role, "
            f"snippet(forge_message_fts, 0, '[', ']', '…', {SNIPPET_WORDS}) AS snippet, "
            "bm25(forge_message_fts) AS score "
            "FROM forge_message_fts f JOIN forge_messages m ON m.id = f.rowid "
            "WHERE forge_message_fts MATCH ?"
        )
        best_first = ""
    else:
        params.append(joiner.lower().join(words))
        select = (
            "SELECT m.id, m.conversation_id, m.seq, m.role, ts_headline('english', m.text, q, "
            f"'StartSel=[, StopSel=], MaxWords={SNIPPET_WORDS}, MinWords=8, MaxFragments=1') "
            "AS snippet, ts_rank(m.tsv, q) AS score "
            "FROM forge_messages m, websearch_to_tsquery('english', ?) q WHERE m.tsv @@ q"
        )
        best_first = " DESC"
    if conversation_id is not None:
        where.append("m.conversation_id = ?")
        params.append(conversation_id)
    if archived_only:
        where.append(
            "EXISTS (SELECT 1 FROM forge_archive_ranges r WHERE r.conversation_id = "
            "m.conversation_id AND r.lo <= m.seq AND r.hi >= m.seq)"
        )
    filters = "".join(f" AND {clause}" for clause in where)
    params.append(limit)
    # The refs of the (at most ``limit``) hits in the same query: the outer query sorts
    # them again by the same keys (the message id breaks ties), so in the same order.
    rows = db.read(
        f"SELECT h.conversation_id, h.seq, h.role, h.snippet, {_NEWEST_REF} FROM "
        f"({select}{filters} ORDER BY score{best_first}, id LIMIT ?) h "
        f"ORDER BY h.score{best_first}, h.id",
        params,
    )
    return [
        SearchHit(
            conversation_id=str(conv),
            seq=cast(int, seq),
            role=str(role),
            snippet=_bounded(str(snippet)),
            ref=None if ref is None else str(ref),
        )
        for conv, seq, role, snippet, ref in rows
    ]


def _bounded(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"
