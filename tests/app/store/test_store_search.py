"""Search: identifiers, paths and URLs on both databases, one rule, bounded queries, the
migration of a version-1 store, and what comes back to a model (secrets redacted)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from forge_app.errors import InvalidSearchQuery, ToolFailed
from forge_app.store import SCHEMA_VERSION, ArchivingEngine, ConversationRecorder, open_store
from forge_app.store._backend import connect
from forge_app.store._records import search_text, stored_row
from forge_app.store._schema import MIGRATIONS
from forge_app.store._url import parse_store_url
from forge_domain import Context, TextMessage
from tests.app.store.conftest import fresh_postgres_database
from tests.sessions import session_paths

DATA = Path(__file__).parent / "data"
V1_STORE = DATA / "store-v1.db"
"""A SQLite store written by forge-compact at schema version 1 (FTS5 ``porter unicode61``)
from ``store-v1.json``."""

RAW = [
    {"role": "system", "content": "You are a careful engineer."},
    {
        "role": "user",
        "content": "Why does tests/test_functional.py fail? See "
        "https://docs.djangoproject.com/en/4.2/ref/models/lookups/ please.",
    },
    {
        "role": "assistant",
        "content": "The lookup django.db.models.lookups.Exact calls operator.call before "
        "order.save() returns; PersonName.encode is unused.",
    },
    {
        "role": "user",
        "content": "[INST] fix it [/INST] and then [/bold] No module named 'functional'",
    },
    {
        "role": "assistant",
        "content": "Exact lookups: the order of calls matters, save the order first.",
    },
]

PROBES = [
    ("functional.py", [2]),
    ("tests/test_functional.py", [2]),
    ("operator.call", [3]),
    ("order.save()", [3]),
    ("PersonName.encode", [3]),
    ("django.db.models.lookups.Exact", [3]),
    ("https://docs.djangoproject.com/en/4.2/ref/models/lookups/", [2]),
    ("docs.djangoproject.com", [2]),
    ("[/INST]", [4]),
    ("No module named 'functional'", [4]),
    ("lookups", [5, 3, 2]),
]


def _store(url: str, raw=RAW):
    store = open_store(url)
    store.ensure_conversation("conv")
    store.append("conv", list(Context.from_openai(json.loads(json.dumps(raw)))))
    return store


@pytest.mark.parametrize(("query", "seqs"), PROBES, ids=[q for q, _ in PROBES])
def test_search_finds_identifiers_paths_and_urls(store_url, query, seqs):
    with _store(store_url) as store:
        hits = store.search(query)
    assert [(h.seq, h.partial) for h in hits] == [(s, False) for s in seqs]


def test_search_ranks_the_exact_phrase_first_then_newest(store_url):
    with _store(store_url) as store:
        hits = store.search("order save")
        reversed_hits = store.search("save order")
    # message 3 holds "order.save()" (the phrase); message 5 holds both words apart.
    assert [h.seq for h in hits] == [3, 5]
    assert [h.seq for h in reversed_hits] == [5, 3]


def test_search_never_presents_a_substitute_as_a_match(store_url):
    with _store(store_url) as store:
        partial = store.search("PersonName.decode")
        split = store.search("PersonName zebra")
    # "PersonName.decode" is one phrase: no message holds it, and no other message comes
    # back in its place; two words of which one is absent give hits marked partial.
    assert partial == []
    assert [(h.seq, h.partial) for h in split] == [(3, True)]


def test_search_snippets_are_plain_text_around_the_match(store_url):
    long_text = " ".join(f"word{i}" for i in range(400)) + " the needle.in_haystack here"
    with _store(store_url, [*RAW, {"role": "user", "content": long_text}]) as store:
        (hit,) = store.search("needle.in_haystack")
        (lower,) = store.search("functional", conversation_id="conv", limit=1)
    assert hit.snippet.startswith("…word")
    assert "the needle.in_haystack here" in hit.snippet
    assert len(hit.snippet) <= 240
    assert lower.snippet.endswith("No module named 'functional'")


def test_search_finds_a_phrase_anywhere_in_a_long_message(store_url):
    # 2,000 terms; the same word 600 times (PostgreSQL keeps 256 positions per lexeme
    # and part); phrases across each boundary of the stored parts.
    words = [f"w{i}" if i % 3 else "same" for i in range(2_000)]
    with _store(store_url, [{"role": "user", "content": " ".join(words)}]) as store:
        missing = []
        for start in range(0, 2_000 - 64, 37):
            for size in (2, 6, 64):
                phrase = ".".join(words[start : start + size])
                if [h.seq for h in store.search(phrase)] != [1]:
                    missing.append((start, size))
        absent = store.search("w1.w4")
    assert (missing, absent) == ([], [])


def test_search_gives_the_same_hits_on_both_databases(postgres_server, tmp_path):
    results = []
    for url in (f"sqlite:///{tmp_path / 's.db'}", fresh_postgres_database(postgres_server)):
        with _store(url) as store:
            results.append([[(h.seq, h.snippet) for h in store.search(q)] for q, _ in PROBES])
    assert results[0] == results[1]


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("x" * 1_001, "1,001 characters (at most 1,000)"),
        (" ".join(["word"] * 65), "65 words (at most 64)"),
        (".".join("abcdefghijklm" * 5), "65 words"),
    ],
    ids=["characters", "words", "dotted"],
)
def test_search_query_over_the_bounds_is_a_typed_error(store_url, query, problem):
    with _store(store_url) as store, pytest.raises(InvalidSearchQuery) as caught:
        store.search(query)
    assert problem in str(caught.value)


def _v1_postgres(url: str) -> None:
    """The tables and rows forge-compact wrote at schema version 1 (its migration and its
    inserts; the ``tsvector`` column is generated by the database)."""
    db = connect(parse_store_url(url))
    with db.write() as cursor:
        cursor.run("CREATE TABLE forge_schema (version INTEGER NOT NULL)")
        cursor.run("INSERT INTO forge_schema (version) VALUES (1)")
        for statement in MIGRATIONS["postgresql"][0]:
            assert isinstance(statement, str)
            cursor.run(statement)
        cursor.run(
            "INSERT INTO forge_conversations (id, agent, created_at, updated_at, next_seq) "
            "VALUES ('v1-conv', 'coder', 'then', 'then', ?)",
            (len(V1_RAW) + 1,),
        )
        for seq, message in enumerate(Context.from_openai(V1_RAW), start=1):
            cursor.run(
                "INSERT INTO forge_messages (conversation_id, seq, role, body, model, text) "
                "VALUES ('v1-conv', ?, ?, ?, ?, ?)",
                (seq, *stored_row(message)),
            )
    db.close()


V1_RAW = json.loads((DATA / "store-v1.json").read_text())


def _version(url: str) -> tuple[int, set[str]]:
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        (version,) = connection.execute("SELECT version FROM forge_schema").fetchone()
        names = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        connection.close()
        return int(version), names
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT version FROM forge_schema").fetchone()
        columns = connection.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'forge_messages'"
        ).fetchall()
    assert row is not None
    return int(row[0]), {str(c[0]) for c in columns}


def test_search_a_version_1_store_migrates_in_place(store_url, tmp_path):
    if store_url.startswith("sqlite"):
        shutil.copyfile(V1_STORE, store_url.removeprefix("sqlite:///"))
    else:
        _v1_postgres(store_url)
    before = _version(store_url)
    with open_store(store_url) as store:
        hits = [[h.seq for h in store.search(q)] for q in ("functional.py", "order.save()")]
        exported = store.export("v1-conv")
        store.append("v1-conv", [TextMessage(role="user", content="then encode.py broke")])
        added = [h.seq for h in store.search("encode.py")]
    after = _version(store_url)
    assert (before[0], after[0]) == (1, SCHEMA_VERSION) == (1, 3)  # search 2, writers 3
    assert {"forge_message_fts", "tsv"} & before[1]
    assert not {"forge_message_fts", "tsv"} & after[1]
    assert (hits, exported, added) == ([[4, 2], [3]], V1_RAW, [6])


SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUv"


class _Plain:
    name = "plain"


def _archived_secret(store):
    raw = [
        {"role": "system", "content": "You are a careful engineer."},
        {"role": "user", "content": f"deploy with export OPENAI_API_KEY={SECRET} and go"},
        {"role": "assistant", "content": "Deploying with the key now."},
        {"role": "user", "content": "Thanks."},
    ]
    context = Context.from_openai(raw)
    recorder = ConversationRecorder.start(store, "conv")
    recorder.sync(context)
    summary = context[2].model_copy(update={"content": "Summary: deployed."})
    after = Context([context[0], summary, context[3]])
    recorder.compacted(context, after, engine="frame", reason="automatic", result=None)
    return ArchivingEngine(_Plain(), recorder), raw


def test_recall_gives_the_model_originals_with_secrets_redacted(store_url):
    with open_store(store_url) as store:
        engine, raw = _archived_secret(store)
        found = engine.search({"query": "OPENAI_API_KEY deploy"})
        expanded = engine.expand({"ref": "c1"})
        exported = store.export("conv")
    assert "message 2" in found
    assert "[REDACTED]" in found
    assert SECRET not in found
    assert "deploy with export OPENAI_API_KEY=[REDACTED] and go" in expanded
    assert SECRET not in expanded
    assert exported == raw  # a person's export keeps the originals


def test_recall_search_over_the_bounds_is_an_error_the_model_reads(store_url):
    with open_store(store_url) as store:
        engine, _ = _archived_secret(store)
        with pytest.raises(ToolFailed, match="at most 64"):
            engine.search({"query": " ".join(["deploy"] * 70)})


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
def test_search_finds_six_word_snippets_and_file_names_of_the_shared_sessions(store_url):
    from benchmarks.store_search import PY_NAME, found, six_word_probes

    missed, probes, names = [], 0, 0
    with open_store(store_url) as store:
        stored = []
        for path in session_paths():
            data = json.loads(path.read_text())
            raw = data if isinstance(data, list) else data["messages"]
            store.ensure_conversation(path.stem)
            context = Context.from_openai(raw)
            store.append(path.stem, list(context))
            stored.append((path.stem, [search_text(m) for m in context]))
        for conversation_id, texts in stored:
            for seq, probe in six_word_probes(texts):
                probes += 1
                if not found(store, conversation_id, seq, probe):
                    missed.append(probe)
            for name in sorted({n for text in texts for n in PY_NAME.findall(text)}):
                names += 1
                hits = store.search(name, conversation_id=conversation_id, limit=1)
                if not hits or name.lower() not in hits[0].snippet.lower():
                    missed.append(name)
    assert (missed, probes > 80, names > 100) == ([], True, True)
