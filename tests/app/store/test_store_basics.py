"""The store on both databases: originals, refs, search, expand, typed errors."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
from pathlib import Path

import pytest

from forge_app.errors import (
    ConversationNotFound,
    InvalidStoreUrl,
    StoreCorrupt,
    StoreError,
    StoreSchemaTooNew,
    StoreUnavailable,
    UnknownRef,
)
from forge_app.store import SCHEMA_VERSION, ConversationRecorder, open_store
from forge_domain import Context, TextMessage

RAW = [
    {"role": "system", "content": "You are a careful engineer."},
    {"role": "user", "content": "Fix the failing build, please."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "make all"}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "make: *** No rule to make target 'all'.  Stop.\nexit code 2",
    },
    {
        "role": "assistant",
        "content": "The Makefile has no \u00e9 'all' target.",
        "x_custom": [1, 2],
    },
]


def _context() -> Context:
    return Context.from_openai(json.loads(json.dumps(RAW)))


def test_store_export_gives_back_every_original_byte_identical(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv", "coder")
        seqs = store.append("conv", list(_context()))
        exported = [m.body for m in store.originals("conv")]
    expected = [json.dumps(m, ensure_ascii=False) for m in RAW]
    assert (seqs, exported) == ((1, 2, 3, 4, 5), expected)


def test_store_reopened_keeps_what_was_written(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
    with open_store(store_url) as store:
        actual = (store.export("conv"), [c.id for c in store.conversations()])
    assert actual == (RAW, ["conv"])


def test_store_search_finds_the_error_text_with_a_snippet(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
        hits = store.search("no rule to make target", conversation_id="conv")
    assert [(h.seq, h.role, h.ref, h.partial) for h in hits] == [(4, "tool", None, False)]
    assert hits[0].snippet == "make: *** No rule to make target 'all'. Stop. exit code 2"


def test_store_search_without_words_or_matches_is_empty(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
        actual = (store.search("!!! ???"), store.search("zebra"), store.search('"make" OR ('))
    assert actual[:2] == ([], [])
    assert sorted((h.seq, h.partial) for h in actual[2]) == [(3, True), (4, True)]


def test_store_search_without_all_words_gives_hits_marked_partial(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
        hits = store.search("makefile zebra")
    assert [(h.seq, h.partial) for h in hits] == [(5, True)]


def _compacted(store, conversation_id="conv"):
    """A recorder that stored RAW and archived messages 1-3 under one summary."""
    recorder = ConversationRecorder.start(store, conversation_id)
    before = _context()
    recorder.sync(before)
    summary = before[1].model_copy(update={"content": "Summary: make failed (no target)."})
    after = Context([before[0], summary, before[4]])
    return recorder, recorder.compacted(
        before, after, engine="frame", reason="automatic", result=None
    )


def test_store_compaction_names_its_ref_and_expand_gives_the_originals(store_url):
    with open_store(store_url) as store:
        _, named = _compacted(store)
        archive = store.archive("conv", "c1")
        expanded = [m.body for m in store.expand("conv", "c1")]
        hits = store.search("rule target", conversation_id="conv", archived_only=True)
    assert named[1].text.endswith(
        "[archived: ref c1, 3 original messages — recall_expand shows them]"
    )
    assert (archive.kind, archive.seqs, archive.original_count()) == ("span", ((2, 4),), 3)
    assert expanded == [json.dumps(m, ensure_ascii=False) for m in RAW[1:4]]
    assert [(h.seq, h.ref) for h in hits] == [(4, "c1")]


def test_store_refs_are_unique_per_conversation(store_url):
    with open_store(store_url) as store:
        _compacted(store, "a")
        _compacted(store, "b")
        refs = {cid: [a.ref for a in store.archives(cid)] for cid in ("a", "b")}
    assert refs == {"a": ["c1"], "b": ["c1"]}


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("c9", "has no archive ref 'c9'"),
        ("t1", "has no archive ref 't1'"),
        ("x1", "is not an archive ref"),
        ("c0", "is not an archive ref"),
        ("", "is not an archive ref"),
    ],
    ids=["unknown-c", "unknown-t", "bad-letter", "zero", "empty"],
)
def test_store_unknown_ref_is_a_typed_error(store_url, ref, problem):
    with open_store(store_url) as store:
        _compacted(store)
        with pytest.raises(UnknownRef, match=problem) as caught:
            store.expand("conv", ref)
        still = [m.seq for m in store.expand("conv", "c1")]
    assert (caught.value.ref, caught.value.conversation_id, still) == (ref, "conv", [2, 3, 4])


def test_store_unknown_conversation_is_a_typed_error(store_url):
    with open_store(store_url) as store, pytest.raises(ConversationNotFound, match="'nope'"):
        store.export("nope")


def test_store_existing_conversation_cannot_be_started_again(store_url):
    with open_store(store_url) as store:
        ConversationRecorder.start(store, "conv").sync(Context([TextMessage.user("hi")]))
        with pytest.raises(StoreError, match="already exists; resume it"):
            ConversationRecorder.start(store, "conv")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mysql://host/db", "unsupported scheme 'mysql'"),
        ("sqlite://", "needs a file path"),
        ("", "empty store URL"),
        ("redis://u:secret@h/0", "unsupported scheme"),
    ],
    ids=["mysql", "sqlite-no-path", "empty", "password-hidden"],
)
def test_store_bad_url_is_a_typed_error(url, problem):
    with pytest.raises(InvalidStoreUrl, match=problem) as caught:
        open_store(url)
    assert "secret" not in str(caught.value)


def test_store_missing_directory_is_unavailable(tmp_path):
    with pytest.raises(StoreUnavailable, match="does not exist"):
        open_store(f"sqlite:///{tmp_path / 'no' / 'such' / 's.db'}")


def test_store_corrupt_file_is_a_typed_error_and_left_untouched(tmp_path):
    path = tmp_path / "s.db"
    junk = b"this is not a database, just text " * 200
    path.write_bytes(junk)
    with pytest.raises(StoreCorrupt, match="not a readable SQLite session store"):
        open_store(f"sqlite:///{path}")
    assert path.read_bytes() == junk


def test_store_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path):
    """Refused before anything is written: not switched to WAL, no -wal or -shm file."""
    path = tmp_path / "other.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE users (id INTEGER)")
    connection.commit()
    connection.close()
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with pytest.raises(StoreCorrupt, match="not a forge-compact session store"):
        open_store(str(path))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def _bump_schema(url: str) -> None:
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        connection.execute("UPDATE forge_schema SET version = ?", (SCHEMA_VERSION + 1,))
        connection.commit()
        connection.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("UPDATE forge_schema SET version = %s", (SCHEMA_VERSION + 1,))


def test_store_newer_schema_is_refused_and_data_kept(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
    _bump_schema(store_url)
    with pytest.raises(StoreSchemaTooNew, match="newer than this forge-compact supports") as caught:
        open_store(store_url)
    assert (caught.value.found, caught.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
    assert (_schema_version(store_url), _message_count(store_url)) == (SCHEMA_VERSION + 1, 5)


def test_store_refused_postgres_port_is_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreUnavailable, match="refused") as caught:
        open_store(f"postgresql://forge:hunter2@127.0.0.1:{port}/db", connect_timeout=2)
    assert "hunter2" not in str(caught.value)
    assert "***" in str(caught.value)


def test_store_silent_postgres_server_times_out():
    """A server that accepts connections and never answers: bounded by the connect timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(listener.accept()[0])
        except OSError:
            return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    try:
        with pytest.raises(StoreUnavailable, match="no answer within 1s"):
            open_store(f"postgresql://forge@127.0.0.1:{port}/db", connect_timeout=1)
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def test_store_bare_path_is_sqlite(tmp_path: Path):
    with open_store(str(tmp_path / "plain.db")) as store:
        assert store.dialect == "sqlite"
    assert (tmp_path / "plain.db").is_file()


def test_store_change_it_did_not_see_is_archived_and_named(store_url):
    """A message cut outside a compaction (the handler's last-resort cut) is found at the
    next sync: archived as a ``t`` ref and named; what was appended after it is stored."""
    with open_store(store_url) as store:
        recorder = ConversationRecorder.start(store, "conv")
        before = _context()
        recorder.sync(before)
        cut = before[3].model_copy(update={"content": "make: *** No rule [… 40 chars cut …]"})
        answer = TextMessage.user("And now?")
        after = recorder.sync(Context([*before[:3], cut, before[4], answer]))
        archive = store.archive("conv", "t1")
        originals = [m.body for m in store.expand("conv", "t1")]
        exported = store.export("conv")
    assert after[3].text == "make: *** No rule [… 40 chars cut …] [archived: ref t1]"
    assert (archive.kind, archive.reason, archive.seqs) == ("message", "changed", ((4, 4),))
    assert originals == [json.dumps(RAW[3], ensure_ascii=False)]
    assert exported == [*RAW, {"role": "user", "content": "And now?"}]


@pytest.mark.parametrize("summarised", [1, 3], ids=["cut-kept", "cut-summarised"])
def test_store_compaction_after_an_unseen_cut_keeps_the_cut_ref(store_url, summarised):
    """A cut the recorder did not see (the window fit), then a compaction before the next
    sync: the cut is archived as ``t1`` and its note survives in the compacted context,
    the recorder's state, the stored snapshot and the span archive that replaced it."""
    with open_store(store_url) as store:
        recorder = ConversationRecorder.start(store, "conv")
        before = _context()
        recorder.sync(before)
        cut = before[3].model_copy(update={"content": "make: *** No rule [… 40 chars cut …]"})
        cut_context = Context([*before[:3], cut, before[4]])
        summary = before[1].model_copy(update={"content": "Summary: make failed (no target)."})
        after = Context([before[0], summary, *cut_context[1 + summarised :]])
        named = recorder.compacted(
            cut_context, after, engine="frame", reason="automatic", result=None
        )
        loaded = store.load("conv").messages
        replaced = store.archive("conv", "c1").replaced
        refs = [a.ref for a in store.archives("conv")]
    noted = "make: *** No rule [… 40 chars cut …] [archived: ref t1]"
    texts = [m.text for m in named]
    assert refs == ["t1", "c1"]
    assert (noted in texts) == (summarised == 1)
    assert ([m.text for m in recorder.known], [m.text for m in loaded]) == (texts, texts)
    if summarised == 3:
        assert replaced[-1]["content"] == noted


def _schema_version(url: str) -> int:
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        (version,) = connection.execute("SELECT version FROM forge_schema").fetchone()
        connection.close()
        return int(version)
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT version FROM forge_schema").fetchone()
    assert row is not None
    return int(row[0])


def test_store_schema_is_versioned_and_reopening_migrates_nothing(store_url):
    with open_store(store_url) as store:
        store.ensure_conversation("conv")
        store.append("conv", list(_context()))
    first = _schema_version(store_url)
    with open_store(store_url) as store:
        exported = store.export("conv")
    assert (first, _schema_version(store_url), exported) == (SCHEMA_VERSION, SCHEMA_VERSION, RAW)


def _message_count(url: str) -> int:
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        (count,) = connection.execute("SELECT COUNT(*) FROM forge_messages").fetchone()
        connection.close()
        return int(count)
    import psycopg

    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT COUNT(*) FROM forge_messages").fetchone()
    assert row is not None
    return int(row[0])


def test_store_recall_tools_log_each_use(store_url):
    from structlog.testing import capture_logs

    from forge_app.store import ArchivingEngine

    class _Plain:
        name = "plain"

    with open_store(store_url) as store:
        recorder, _ = _compacted(store)
        engine = ArchivingEngine(_Plain(), recorder)
        with capture_logs() as logs:
            engine.search({"query": "no rule to make target"})
            engine.expand({"ref": "c1"})
    events = [(e["event"], e.get("hits"), e.get("ref")) for e in logs]
    assert events == [("recall_searched", 1, None), ("recall_expanded", None, "c1")]
    assert engine.recall_uses == {"recall_search": 1, "recall_expand": 1}


def _set_snapshot(url: str, text: str) -> None:
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        connection.execute("UPDATE forge_conversations SET snapshot = ?", (text,))
        connection.commit()
        connection.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("UPDATE forge_conversations SET snapshot = %s", (text,))


@pytest.mark.parametrize(
    ("snapshot", "problem"),
    [
        ('{"entries": [99], "base_seq": 5, "usage_floor": 0}', "snapshot names missing"),
        ('{"entries": []}', "unreadable snapshot"),
        ('{"entries": [{"model": "{}", "seqs": []}], "base_seq": 0, "usage_floor": 0}', "unread"),
        ("not json", "conversation 'conv'"),
    ],
    ids=["missing-message", "missing-keys", "bad-message", "not-json"],
)
def test_store_damaged_snapshot_is_a_typed_error_and_originals_stay(store_url, snapshot, problem):
    with open_store(store_url) as store:
        _compacted(store)
        _set_snapshot(store_url, snapshot)
        with pytest.raises(StoreCorrupt, match=problem):
            store.load("conv")
        exported = store.export("conv")
    assert exported == RAW
