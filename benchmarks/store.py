"""Store overhead per compaction: a 5,000-message session replayed with a store, both databases.

The generated session (``benchmarks/generator.py``) is replayed through the real
orchestrator at a small window, once per database, with a session store. Timers
around the store's two entry points give

- per compaction: the time of :meth:`ConversationRecorder.compacted` (storing what
  joined since the last turn, aligning before and after, writing the archives and the
  snapshot in one transaction), next to the time of the compaction itself;
- per turn: the time of :meth:`Orchestrator.persist` (appending the turn's messages
  and the runtime state in one transaction);

and the whole replay's wall time against the same replay without a store.

    python -m benchmarks.store                       # starts its own PostgreSQL server
    python -m benchmarks.store --postgres URL        # or uses this one
    python -m benchmarks.store --messages 2000 --window 16000 --runs 1
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import structlog

from benchmarks.generator import generate_session
from benchmarks.store_common import fresh_database, machine, p95, postgres_server
from forge_app.files import default_agent
from forge_app.runtime import Orchestrator, Replay
from forge_app.store import ArchivingEngine, ConversationRecorder, open_store
from forge_domain import Context
from tests.app.store.postgres_server import URL_ENV


class _Timers:
    """Wraps a method so that each call's wall time is kept."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: type, name: str, label: str) -> None:
        original = getattr(owner, name)
        samples = self.samples.setdefault(label, [])

        if inspect.iscoroutinefunction(original):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    samples.append(time.perf_counter() - started)

            setattr(owner, name, timed_async)
        else:

            def timed(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    samples.append(time.perf_counter() - started)

            setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, original))

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


async def _replay(raw: list[dict[str, object]], window: int, url: str | None) -> int:
    agent = default_agent().model_copy(update={"context_length": window})
    context = Context.from_openai(raw)
    if url is None:
        replay = Replay(context, agent, context_length=window)
        async for _ in replay.turns():
            pass
        return replay.conversation.compactions
    with open_store(url) as store:
        replay = Replay(context, agent, context_length=window, store=store)
        async for _ in replay.turns():
            pass
        return replay.conversation.compactions


def measure(raw: list[dict[str, object]], window: int, url: str | None) -> dict[str, Any]:
    timers = _Timers()
    if url is not None:
        timers.wrap(ConversationRecorder, "compacted", "store_per_compaction")
        timers.wrap(Orchestrator, "persist", "store_per_turn")
        timers.wrap(ArchivingEngine, "compress", "compaction_with_store")
    started = time.perf_counter()
    try:
        compactions = anyio.run(_replay, raw, window, url)
    finally:
        timers.restore()
    return {"wall": time.perf_counter() - started, "compactions": compactions, **timers.samples}


def _row(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"| {name} | {len(ms)} | {statistics.median(ms):.2f} | {p95(ms):.2f} | {max(ms):.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3, help="replays per setup (best kept)")
    parser.add_argument("--postgres", default=os.environ.get(URL_ENV))
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    raw = generate_session(args.messages, seed=args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="forge-store-bench-"))
    try:
        with postgres_server(args.postgres) as postgres:
            runs: dict[str, list[dict[str, Any]]] = {"none": [], "sqlite": [], "postgresql": []}
            for run in range(args.runs):  # interleaved, so that a busy moment hits every setup
                runs["none"].append(measure(raw, args.window, None))
                runs["sqlite"].append(
                    measure(raw, args.window, f"sqlite:///{workdir / f'bench-{run}.db'}")
                )
                database = fresh_database(postgres, f"forge_bench_{os.getpid()}_{run}")
                runs["postgresql"].append(measure(raw, args.window, database))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    baseline = min(runs.pop("none"), key=lambda r: r["wall"])
    results = {name: min(found, key=lambda r: r["wall"]) for name, found in runs.items()}
    print(machine())
    print(
        f"session: {args.messages:,} generated messages (seed {args.seed}), window "
        f"{args.window:,} tokens; best of {args.runs} replay(s) per database\n"
    )
    print("| database | figure | n | median ms | p95 ms | max ms |")
    print("|---|---|---|---|---|---|")
    for name, result in results.items():
        for label in ("store_per_compaction", "compaction_with_store", "store_per_turn"):
            print(_row(f"{name} | {label.replace('_', ' ')}", result[label]))
    print()
    print("| run | compactions | replay wall s | vs no store |")
    print("|---|---|---|---|")
    print(f"| no store | {baseline['compactions']} | {baseline['wall']:.2f} | 1.00x |")
    for name, result in results.items():
        ratio = result["wall"] / baseline["wall"]
        print(f"| {name} | {result['compactions']} | {result['wall']:.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
