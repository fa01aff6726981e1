"""Search on both databases: the shared sessions' probes, and latency at scale.

``probes``: every shared session is replayed with a store at an 8K window (SQLite and
PostgreSQL); then every original must come back from ``export`` byte for byte, and
``history search``'s query (``SessionStore.search``, all conversations, 10 hits) must find

- verbatim six-word snippets of the sessions' messages (:func:`six_word_probes`: per
  session, up to 4 holding a dotted name or a path and 4 others), and
- each Python file name the sessions mention (``functional.py``): a hit whose message
  mentions it.

``scale``: ``--messages`` stored messages (1,000,000 by default: the shared sessions'
message texts over and over, each copy with its own conversation id and a numbered
word), bulk-inserted with the store's own terms (``_terms.py``), then the latency of
``SessionStore.search`` for a set of queries (rare identifiers, common words, phrases,
partial matches, one conversation or all), median and p95.

    python -m benchmarks.store_search probes              # starts its own PostgreSQL
    python -m benchmarks.store_search scale --messages 1000000
    python -m benchmarks.store_search scale --postgres URL --messages 100000 --keep
    python -m benchmarks.store_search latency --sqlite PATH --postgres URL  # kept stores
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import structlog

from benchmarks.store_common import fresh_database, p95
from forge_app.files import default_agent
from forge_app.runtime import Replay
from forge_app.store import SessionStore, open_store
from forge_app.store._records import search_text, stored_row
from forge_app.store._search import PART_SLOTS
from forge_app.store._terms import fts_text, parts, tsvector_text
from forge_domain import Context
from tests.app.store.postgres_server import URL_ENV, start, stop
from tests.sessions import session_paths

WINDOW = 8_000
PY_NAME = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*\.py\b")
DOTTED = re.compile(r"[A-Za-z_]\w*[./]\w")


def _raw(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else data["messages"]  # type: ignore[no-any-return]


def six_word_probes(texts: list[str], per_kind: int = 4) -> list[tuple[int, str]]:
    """Up to ``per_kind`` six-word windows holding a dotted name or path and as many
    others, ``(seq, snippet)``: the window at the middle of evenly spread messages."""
    dotted: list[tuple[int, str]] = []
    plain: list[tuple[int, str]] = []
    step = max(1, len(texts) // (per_kind * 4))
    for index in range(0, len(texts), step):
        words = texts[index].split()
        if len(words) < 6:
            continue
        for at in range(len(words) // 2, len(words) - 5):
            window = " ".join(words[at : at + 6])
            if len(window) > 200:
                continue
            kind = dotted if DOTTED.search(window) else plain
            if len(kind) < per_kind:
                kind.append((index + 1, window))
                break
    return dotted + plain


def found(store: SessionStore, conversation_id: str, seq: int, probe: str) -> bool:
    """True when a search for ``probe`` gives its message, or a first hit that holds it."""
    hits = store.search(probe, limit=10)
    if any((h.conversation_id, h.seq) == (conversation_id, seq) for h in hits):
        return True
    if not hits or hits[0].partial:
        return False
    (first,) = store.originals(hits[0].conversation_id, hits[0].seq, hits[0].seq)
    message = Context.from_openai([json.loads(first.body)])[0]
    return probe in search_text(message)


async def _replay(raw: list[dict[str, Any]], store: SessionStore) -> str:
    agent = default_agent().model_copy(update={"context_length": WINDOW})
    replay = Replay(Context.from_openai(raw), agent, context_length=WINDOW, store=store)
    async for _ in replay.turns():
        pass
    return replay.conversation.id


def probe_store(url: str) -> dict[str, Any]:
    """Replay the shared sessions into ``url``; what export and search give back."""
    result: dict[str, Any] = {"sessions": 0, "originals": 0, "lost": 0, "probes": 0}
    result |= {"probes_found": 0, "py_names": 0, "py_found": 0, "missed": []}
    seen_names: set[str] = set()
    with open_store(url) as store:
        for path in session_paths():
            raw = _raw(path)
            conversation_id = anyio.run(_replay, raw, store)
            exported = store.export(conversation_id)
            result["sessions"] += 1
            result["originals"] += len(raw)
            result["lost"] += sum(1 for a, b in zip(exported, raw, strict=False) if a != b)
            result["lost"] += abs(len(exported) - len(raw))
            texts = [search_text(m) for m in Context.from_openai(raw)]
            for seq, probe in six_word_probes(texts):
                result["probes"] += 1
                if found(store, conversation_id, seq, probe):
                    result["probes_found"] += 1
                else:
                    result["missed"].append(probe)
            for name in sorted({n for text in texts for n in PY_NAME.findall(text)}):
                if name in seen_names:
                    continue
                seen_names.add(name)
                result["py_names"] += 1
                hits = store.search(name, limit=10)
                holders = [store.originals(h.conversation_id, h.seq, h.seq)[0] for h in hits]
                if any(name.lower() in h.body.lower() for h in holders):
                    result["py_found"] += 1
                else:
                    result["missed"].append(name)
    return result


# -- scale -----------------------------------------------------------------------------

CONVERSATION_MESSAGES = 1_000
"""Messages per generated conversation."""
QUERIES = (
    "django.db.models.lookups.Exact",
    "functional.py",
    "order.save()",
    "error",
    "the",
    "Traceback most recent call last",
    "No module named",
    "assert self",
    "zzqq frobnicate",
    "PersonName zebra",
)


def _texts() -> list[str]:
    texts = [
        search_text(m)[:2_000] for path in session_paths() for m in Context.from_openai(_raw(path))
    ]
    return [t for t in texts if t.strip()]


def _rows(total: int, texts: list[str]) -> Iterator[tuple[str, int, str]]:
    for k in range(total):
        conversation = f"bench-{k // CONVERSATION_MESSAGES:05d}"
        yield conversation, k % CONVERSATION_MESSAGES + 1, f"{texts[k % len(texts)]} n{k}"


def build_sqlite(path: Path, total: int, texts: list[str]) -> None:
    """``total`` messages in a new SQLite store, in bulk (one transaction)."""
    open_store(f"sqlite:///{path}").close()
    import sqlite3

    connection = sqlite3.connect(path)
    body = json.dumps({"role": "user", "content": "(benchmark)"})
    model = stored_row(Context.from_openai([json.loads(body)])[0])[2]
    with connection:
        conversations = sorted({f"bench-{k // CONVERSATION_MESSAGES:05d}" for k in range(total)})
        connection.executemany(
            "INSERT INTO forge_conversations (id, created_at, updated_at, next_seq) "
            "VALUES (?, 'now', 'now', ?)",
            [(c, CONVERSATION_MESSAGES + 1) for c in conversations],
        )
        for k, (conversation, seq, text) in enumerate(_rows(total, texts), start=1):
            connection.execute(
                "INSERT INTO forge_messages (id, conversation_id, seq, role, body, model, text) "
                "VALUES (?, ?, ?, 'user', ?, ?, ?)",
                (k, conversation, seq, body, model, text),
            )
            connection.executemany(
                "INSERT INTO forge_message_terms (rowid, terms) VALUES (?, ?)",
                [(k * PART_SLOTS + j, fts_text(part)) for j, part in enumerate(parts(text))],
            )
    connection.close()


def build_postgres(url: str, total: int, texts: list[str]) -> None:
    """``total`` messages in a new PostgreSQL store, in bulk (COPY, index built after)."""
    open_store(url).close()
    body = json.dumps({"role": "user", "content": "(benchmark)"})
    model = stored_row(Context.from_openai([json.loads(body)])[0])[2]
    with psycopg.connect(url) as connection:
        connection.execute("DROP INDEX forge_message_terms_tsv")
        conversations = sorted({f"bench-{k // CONVERSATION_MESSAGES:05d}" for k in range(total)})
        with connection.cursor().copy(
            "COPY forge_conversations (id, created_at, updated_at, next_seq) FROM STDIN"
        ) as copy:
            for c in conversations:
                copy.write_row((c, "now", "now", CONVERSATION_MESSAGES + 1))
        with connection.cursor().copy(
            "COPY forge_messages (conversation_id, seq, role, body, model, text) FROM STDIN"
        ) as copy:
            for conversation, seq, text in _rows(total, texts):
                copy.write_row((conversation, seq, "user", body, model, text))
        first = connection.execute(
            "SELECT min(id), max(id) - min(id) + 1, count(*) FROM forge_messages"
        ).fetchone()
        if first is None or first[1:] != (total, total):  # ids follow the COPY order
            raise RuntimeError(f"unexpected message ids after COPY: {first}")
        with connection.cursor().copy(
            "COPY forge_message_terms (message_id, tsv) FROM STDIN"
        ) as copy:
            for k, (_, _, text) in enumerate(_rows(total, texts)):
                for part in parts(text):
                    copy.write_row((first[0] + k, tsvector_text(part)))
        connection.execute(
            "CREATE INDEX forge_message_terms_tsv ON forge_message_terms USING GIN (tsv)"
        )
        connection.commit()
        connection.autocommit = True
        connection.execute("VACUUM ANALYZE")


def latency(url: str, runs: int) -> dict[str, Any]:
    """Each query ``runs`` times, over all conversations and over one: milliseconds."""
    samples: list[float] = []
    per_query: dict[str, float] = {}
    with open_store(url) as store:
        for query in QUERIES:
            for conversation in (None, "bench-00000"):
                store.search(query, conversation_id=conversation)  # warm
                mine = []
                for _ in range(runs):
                    began = time.perf_counter()
                    store.search(query, conversation_id=conversation)
                    mine.append((time.perf_counter() - began) * 1000)
                samples.extend(mine)
                per_query[f"{query} · {'all' if conversation is None else 'one'}"] = (
                    statistics.median(mine)
                )
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered),
        "p95_ms": p95(ordered),
        "per_query_median_ms": per_query,
    }


def _postgres(args: argparse.Namespace, pg_dir: Path) -> str:
    return fresh_database(args.postgres or start(pg_dir), f"forge_bench_{os.getpid()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("probes", "scale", "latency"))
    parser.add_argument("--sqlite", help="latency: an existing SQLite store (a path)")
    parser.add_argument("--only", choices=("sqlite", "postgresql"), help="scale: one database")
    parser.add_argument("--postgres", default=os.environ.get(URL_ENV))
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the stores built (paths shown)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    if args.what == "latency":
        report = {}
        if args.sqlite:
            report["sqlite"] = latency(f"sqlite:///{args.sqlite}", args.runs)
        if args.postgres:
            report["postgresql"] = latency(args.postgres, args.runs)
        print(json.dumps(report, indent=2))
        return
    work = Path(tempfile.mkdtemp(prefix="forge-search-bench-"))
    work.chmod(0o755)  # the server runs as its own user
    pg_dir = work / "pg"
    pg_dir.mkdir()
    try:
        postgres = _postgres(args, pg_dir)
        sqlite = work / "store.db"
        report: dict[str, Any] = {}
        if args.what == "probes":
            for name, url in (("sqlite", f"sqlite:///{sqlite}"), ("postgresql", postgres)):
                began = time.perf_counter()
                report[name] = probe_store(url) | {"seconds": time.perf_counter() - began}
        else:
            texts = _texts()
            for name, build, url in (
                ("sqlite", lambda: build_sqlite(sqlite, args.messages, texts), str(sqlite)),
                ("postgresql", lambda: build_postgres(postgres, args.messages, texts), postgres),
            ):
                if args.only not in (None, name):
                    continue
                began = time.perf_counter()
                build()
                built = time.perf_counter() - began
                report[name] = {"messages": args.messages, "build_seconds": built}
                report[name] |= latency(
                    url if name == "postgresql" else f"sqlite:///{url}", args.runs
                )
        out = io.StringIO()
        json.dump(report, out, indent=2)
        print(out.getvalue())
    finally:
        if args.keep:
            print(f"kept: {work} (SQLite store.db; PostgreSQL database {postgres})")
        else:
            if not args.postgres:
                stop(pg_dir)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
