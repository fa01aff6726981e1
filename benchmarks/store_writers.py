"""The cost of the concurrency check per compaction (schema 2: conversation versions).

Each sample is one compaction stored by :meth:`ConversationRecorder.compacted` on a
fresh conversation of ``--messages`` messages (the first messages of the generated
session, ``benchmarks/generator.py``): a summary replaces the first half (both cut
where no tool result follows). Two cases:

- *in step*: nobody else wrote since the recorder read the conversation: the check
  is the version the row update already counts and returns, compared in Python;
- *stale*: another connection appended one turn (two messages) after the recorder
  read it: the compaction's transaction reads the conversation again and the edit is
  re-applied on it (``_merge.reapply``), then the recorder's view is the merged one.

Only public API is used, so the same command measures the tree before the check
(``PYTHONPATH=<tree>``: its *in step* figure is a compaction without any check; it
has no stale path, where it lost the other writer's turn instead).

    python -m benchmarks.store_writers                   # starts its own PostgreSQL
    python -m benchmarks.store_writers --postgres URL --samples 60 --messages 400
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import structlog

from benchmarks.generator import generate_session
from benchmarks.store_common import fresh_database, machine, p95, postgres_server
from forge_app.store import ConversationRecorder, SessionStore, open_store
from forge_domain import Context, TextMessage, ToolResult
from tests.app.store.postgres_server import URL_ENV


def _sample(
    store: SessionStore, other: SessionStore, n: int, context: Context, *, stale: bool
) -> float:
    """Milliseconds of one stored compaction of ``context`` (conversation ``n``)."""
    conversation = f"bench-{'stale' if stale else 'step'}-{n}"
    recorder = ConversationRecorder.start(store, conversation)
    recorder.sync(context)
    if stale:
        other.append(
            conversation, [TextMessage.user("another writer"), TextMessage.assistant("ok")]
        )
    half = _boundary(context, len(context) // 2)
    after = Context([context[0], TextMessage.user("Summary of the first half."), *context[half:]])
    started = time.perf_counter()
    recorder.compacted(context, after, engine="bench", reason="manual", result=None)
    return (time.perf_counter() - started) * 1000


def _boundary(context: Context, index: int) -> int:
    """The first message at or after ``index`` that is not a tool result (every call
    before it is answered)."""
    return next(i for i in range(index, len(context)) if not isinstance(context[i], ToolResult))


def _stats(values: list[float]) -> str:
    return f"{len(values)} | {statistics.median(values):.2f} | {p95(values):.2f}"


def measure(url: str, context: Context, samples: int, cases: list[str]) -> dict[str, list[float]]:
    """Interleaved samples of each case on the store at ``url``."""
    found: dict[str, list[float]] = {case: [] for case in cases}
    with open_store(url) as store, open_store(url) as other:
        for n in range(samples):
            for case in cases:
                found[case].append(_sample(store, other, n, context, stale=case == "stale"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgres", default=os.environ.get(URL_ENV))
    parser.add_argument("--in-step-only", action="store_true", help="the tree before the check")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    raw = generate_session(args.messages * 2, seed=args.seed)
    whole = Context.from_openai(raw)
    context = Context(whole[: _boundary(whole, args.messages)])
    cases = ["in step"] if args.in_step_only else ["in step", "stale"]
    workdir = Path(tempfile.mkdtemp(prefix="forge-writers-bench-"))
    try:
        with postgres_server(args.postgres) as postgres:
            database = fresh_database(postgres, f"forge_writers_{os.getpid()}")
            sqlite = f"sqlite:///{workdir / 'bench.db'}"
            results = {
                "SQLite": measure(sqlite, context, args.samples, cases),
                "PostgreSQL": measure(database, context, args.samples, cases),
            }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{machine()}; {len(context)} messages per conversation\n")
    print("| database | compaction | n | median ms | p95 ms |")
    print("|---|---|---|---|---|")
    for name, found in results.items():
        for case, values in found.items():
            print(f"| {name} | {case} | {_stats(values)} |")


if __name__ == "__main__":
    main()
