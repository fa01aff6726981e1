"""Search and expand read a fixed number of queries, and give what the per-row reads gave.

``search`` used to look up each hit's ref with one query per hit, and ``expand`` to read
each range of an archive with its own query. The references below are that code (``ref_of``
as it was, ``originals`` per range); the shared sessions replayed into a store, and
archives with odd ranges, must give exactly the same values.
"""

from __future__ import annotations

import json

import anyio
import pytest

from forge_app.files import default_agent
from forge_app.runtime import Replay
from forge_app.store import SessionStore, open_store
from forge_app.store._backend import connect
from forge_app.store._records import NewArchive
from forge_app.store._schema import migrate
from forge_app.store._search import SEARCH_LIMIT
from forge_app.store._url import parse_store_url
from forge_domain import Context, TextMessage
from tests.sessions import session_paths

WINDOW = 6_000
QUERIES = ("error", "def test", "Traceback most recent call", "the", "assert self", "zzqq none")


def _raw(path):
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else data["messages"]


async def _replay(raw, store):
    agent = default_agent().model_copy(update={"context_length": WINDOW})
    replay = Replay(Context.from_openai(raw), agent, context_length=WINDOW, store=store)
    async for _ in replay.turns():
        pass
    return replay.conversation.id


def _reference_ref_of(db, conversation_id, seq):
    rows = db.read(
        "SELECT a.ref FROM forge_archive_ranges r JOIN forge_archives a ON a.id = r.archive_id "
        "WHERE r.conversation_id = ? AND r.lo <= ? AND r.hi >= ? ORDER BY a.id DESC LIMIT 1",
        (conversation_id, seq, seq),
    )
    return str(rows[0][0]) if rows else None


def _reference_expand(store, conversation_id, ref):
    """``expand`` as it was: the originals of each range, one query per range."""
    return [
        message
        for lo, hi in store.archive(conversation_id, ref).seqs
        for message in store.originals(conversation_id, lo, hi)
    ]


def _counting(url):
    """A store whose every read is counted (``reads[0]``)."""
    db = connect(parse_store_url(url))
    migrate(db)
    reads = [0]
    read = db.read

    def counted(sql, params=()):
        reads[0] += 1
        return read(sql, params)

    db.read = counted  # a counting wrapper around the real connection
    return SessionStore(db), reads


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
def test_store_search_and_expand_give_what_the_per_hit_and_per_range_reads_gave(store_url):
    paths = sorted(session_paths(), key=lambda p: len(_raw(p)))[-3:]
    reference_db = connect(parse_store_url(store_url))
    mismatches = []
    searches = expands = 0
    with open_store(store_url) as store:
        ids = [anyio.run(_replay, _raw(path), store) for path in paths]
        for query in QUERIES:
            for conversation_id in (None, *ids):
                for archived_only in (False, True):
                    for limit in (3, SEARCH_LIMIT):
                        args = (query, conversation_id, limit, archived_only)
                        actual = store.search(
                            query,
                            conversation_id=conversation_id,
                            limit=limit,
                            archived_only=archived_only,
                        )
                        searches += bool(actual)
                        refs = [
                            _reference_ref_of(reference_db, h.conversation_id, h.seq)
                            for h in actual
                        ]
                        if [h.ref for h in actual] != refs:
                            mismatches.append(("search", args))
        for conversation_id in ids:
            for archive in store.archives(conversation_id):
                expands += 1
                actual = store.expand(conversation_id, archive.ref)
                if actual != _reference_expand(store, conversation_id, archive.ref):
                    mismatches.append(("expand", conversation_id, archive.ref))
    reference_db.close()
    assert (mismatches, searches > 60, expands > 50) == ([], True, True)


def _needle_store(store, messages, archives):
    """A conversation of ``messages`` texts and span archives over ``archives`` ranges."""
    store.ensure_conversation("c")
    store.append("c", [TextMessage.user(text) for text in messages])

    def build(refs, fresh):
        new = [
            NewArchive(
                kind="span", seqs=seqs, replaced=(), replacement=(), engine="t", reason="manual"
            )
            for seqs in archives
        ]
        return new, None

    refs, _ = store.record("c", ["span"] * len(archives), build, version=1)
    return refs


@pytest.mark.parametrize(
    "seqs",
    [
        ((1, 2), (5, 6)),
        ((5, 6), (1, 2)),
        ((1, 3), (2, 4)),
        ((2, 2), (2, 2)),
        ((4, 9), (20, 25), (1, 1)),
        ((30, 40),),
        (),
    ],
    ids=["two", "unsorted", "overlapping", "duplicated", "past-the-end", "no-messages", "empty"],
)
def test_store_expand_of_odd_ranges_is_each_range_in_turn(store_url, seqs):
    with open_store(store_url) as store:
        (ref,) = _needle_store(store, [f"message {k}" for k in range(1, 11)], [seqs])
        actual = store.expand("c", ref)
        expected = _reference_expand(store, "c", ref)
    assert actual == expected


def test_store_search_and_expand_reads_do_not_grow_with_hits_or_ranges(store_url):
    store, reads = _counting(store_url)
    with store:
        texts = [f"needle {k}" if k % 2 else f"hay {k}" for k in range(1, 121)]
        many = tuple((k, k) for k in range(1, 121, 2))  # 60 ranges, one needle each
        one, scattered, _ = _needle_store(store, texts, [((1, 120),), many, ((1, 5), (9, 9))])
        counts = {}
        for limit in (1, 5, SEARCH_LIMIT):
            reads[0] = 0
            hits = store.search("needle", conversation_id="c", limit=limit)
            counts[f"search {len(hits)} hits"] = reads[0]
        for ref in (one, scattered):
            ranges = len(store.archive("c", ref).seqs)
            reads[0] = 0
            store.expand("c", ref)
            counts[f"expand {ranges} ranges"] = reads[0]
    # SQLite reads the conversation's id window, then FTS5 rows newest first, then the
    # messages of those rows: three reads however many hits (one query on PostgreSQL).
    search_reads = 3 if store.dialect == "sqlite" else 1
    assert counts == {
        "search 1 hits": search_reads,
        "search 5 hits": search_reads,
        "search 50 hits": search_reads,
        "expand 1 ranges": 4,
        "expand 60 ranges": 4,
    }
