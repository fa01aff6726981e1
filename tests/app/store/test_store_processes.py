"""Several processes on one store, and a process killed in the middle of a compaction."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import time
from pathlib import Path

import anyio
import pytest

from forge_app.files import default_agent
from forge_app.runtime import Orchestrator, Replay, ReplayModel, ReplayTools
from forge_app.runtime.plugins import CompactionHandler
from forge_app.store import open_store
from forge_domain import Context, TextMessage
from forge_domain.formats import find_violations
from tests.sessions import session_paths

WINDOW = 6_000
REF = re.compile(r"\[archived: ref ([ct][0-9]+)")
SPAWN = multiprocessing.get_context("spawn")


def _session(name: str) -> list[dict]:
    path = next(p for p in session_paths() if name in p.name)
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else data["messages"]


def _agent():
    return default_agent().model_copy(update={"context_length": WINDOW})


async def _replay(raw, store, conversation_id=None):
    replay = Replay(Context.from_openai(raw), _agent(), context_length=WINDOW, store=store)
    async for _ in replay.turns():
        pass
    return replay.conversation.id


def _writer(url: str, tag: str, session: str, out: str) -> None:
    """One process: 100 appends to a shared conversation, then a replay of its own."""
    with open_store(url) as store:
        store.ensure_conversation("shared")
        for n in range(100):
            store.append("shared", [TextMessage.user(f"{tag} {n}")])
        conversation_id = anyio.run(_replay, _session(session), store)
    Path(out).write_text(conversation_id)


needs_sessions = pytest.mark.skipif(
    not session_paths(), reason="the shared sessions are not on this machine"
)


@needs_sessions
def test_store_two_processes_write_at_once(store_url, tmp_path):
    open_store(store_url).close()  # create the schema once, as a deployment would
    jobs = [
        SPAWN.Process(
            target=_writer, args=(store_url, tag, "django-15400", str(tmp_path / f"{tag}.id"))
        )
        for tag in ("A", "B")
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(timeout=300)
    assert [job.exitcode for job in jobs] == [0, 0]
    raw = _session("django-15400")
    with open_store(store_url) as store:
        shared = store.originals("shared")
        replays = [(tmp_path / f"{tag}.id").read_text() for tag in ("A", "B")]
        exports = [store.export(cid) == raw for cid in replays]
        refs = [[a.ref for a in store.archives(cid)] for cid in replays]
    texts = [json.loads(m.body)["content"] for m in shared]
    assert [m.seq for m in shared] == list(range(1, 201))
    for tag in ("A", "B"):
        assert [t for t in texts if t.startswith(tag)] == [f"{tag} {n}" for n in range(100)]
    assert exports == [True, True]
    assert all(r and len(set(r)) == len(r) for r in refs)


def _doomed(url: str, session: str, marker: str) -> None:
    """Replay until the third compaction, and hang inside its transaction."""
    from forge_app.store import _store

    original = _store.Snapshot.to_json
    calls = {"n": 0}

    def to_json(self):
        calls["n"] += 1
        if calls["n"] == 3:
            Path(marker).write_text("in the transaction")
            time.sleep(600)
        return original(self)

    _store.Snapshot.to_json = to_json
    with open_store(url) as store:
        anyio.run(_replay, _session(session), store)


@needs_sessions
def test_store_process_killed_mid_compaction_leaves_everything_consistent(store_url, tmp_path):
    marker = tmp_path / "marker"
    job = SPAWN.Process(target=_doomed, args=(store_url, "django-15400", str(marker)))
    job.start()
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and job.is_alive():
        time.sleep(0.05)
    assert marker.exists()
    os.kill(job.pid, signal.SIGKILL)
    job.join(timeout=30)
    raw = _session("django-15400")
    with open_store(store_url) as store:
        (info,) = store.conversations()
        stored = store.export(info.id)
        archives = store.archives(info.id)
        orchestrator = Orchestrator(
            _agent(), ReplayModel([]), tools=ReplayTools([]), context_length=WINDOW, store=store
        )
        resumed = orchestrator.resume(info.id)
        context = resumed.context
        named = {ref for m in context for ref in REF.findall(m.text)}
        in_context = {json.dumps(m, ensure_ascii=False) for m in context.to_openai()}
        expanded = {m.body for ref in named for m in store.expand(info.id, ref)}
        handler = resumed.hooks.plugin(CompactionHandler.name)
        await_result = anyio.run(handler.compact, resumed, "context_length_exceeded")
        refs_after = [a.ref for a in store.archives(info.id)]
    # the two committed compactions are whole, the third left nothing behind
    assert stored == raw[: len(stored)]
    assert len(stored) > 0
    assert len({a.ref for a in archives if a.kind == "span"}) == 2
    assert all(a.seqs and a.replacement for a in archives)
    # the stored conversation is provider-valid and nothing stored is lost
    assert find_violations(context) == []
    lost = [m for m in stored if json.dumps(m, ensure_ascii=False) not in in_context | expanded]
    assert lost == []
    # and it goes on: the next compaction gets fresh refs
    assert await_result is not None
    assert len(refs_after) == len(set(refs_after)) > len(archives)
