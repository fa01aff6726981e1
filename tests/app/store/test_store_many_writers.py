"""N processes resume one stored conversation and append and compact at once.

Whatever the interleaving, the conversation as stored at the end names a way back to
every original message: each one is either in its context as it joined, or behind a
ref its context names (``expand``); no original is stored twice, and the seqs run
from 1 without a gap.
"""

from __future__ import annotations

import json
import multiprocessing
import re
from collections import Counter
from pathlib import Path

import anyio
import pytest
import structlog
import structlog.testing

from forge_app.errors import ConversationChanged
from forge_app.files import default_agent
from forge_app.runtime import Orchestrator, ReplayModel, ReplayTools
from forge_app.runtime.plugins import CompactionHandler
from forge_app.store import ConversationRecorder, open_store
from forge_domain import Context, TextMessage
from forge_domain.formats import find_violations

WINDOW = 3_000
ROUNDS = 12
REF = re.compile(r"\[archived: ref ([ct][0-9]+)")
SPAWN = multiprocessing.get_context("forkserver")
"""Writers are forked from a fresh interpreter that imported this module once (not from
the pytest process, whose threads and state they must not inherit)."""
FILLER = "lorem ipsum dolor sit amet " * 20
SEEN = ("conversation_reread", "compaction_reapplied", "compaction_failed")


def _orchestrator(store):
    agent = default_agent().model_copy(update={"context_length": WINDOW})
    return Orchestrator(
        agent, ReplayModel([]), tools=ReplayTools([]), context_length=WINDOW, store=store
    )


def _writer(url: str, tag: str, barrier, out: str) -> None:
    """Resume the shared conversation, then turns (a question and its answer) and a
    forced compaction every third turn; write which concurrency events it met to ``out``."""
    with structlog.testing.capture_logs() as logs:
        _turns(url, tag, barrier)
    met = Counter(str(log["event"]) for log in logs)
    Path(out).write_text(json.dumps({name: met[name] for name in SEEN}))


def _turns(url: str, tag: str, barrier) -> None:
    with open_store(url) as store:
        orchestrator = _orchestrator(store)
        barrier.wait(60)
        conversation = orchestrator.resume("shared")
        handler = conversation.hooks.plugin(CompactionHandler.name)
        for n in range(ROUNDS):
            conversation.append(
                TextMessage.user(f"{tag} question {n} {FILLER}"),
                TextMessage.assistant(f"{tag} answer {n} {FILLER}"),
            )
            orchestrator.persist(conversation)
            if n % 3 == 2:
                anyio.run(handler.compact, conversation, "context_length_exceeded")
        orchestrator.persist(conversation)


def _start(url: str) -> None:
    with open_store(url) as store:
        orchestrator = _orchestrator(store)
        conversation = orchestrator.open("the shared task", conversation_id="shared")
        for n in range(4):
            conversation.append(
                TextMessage.user(f"start question {n} {FILLER}"),
                TextMessage.assistant(f"start answer {n} {FILLER}"),
            )
        orchestrator.persist(conversation)


@pytest.mark.parametrize("writers", [2, 4, 8])
def test_store_many_writers_on_one_conversation_lose_nothing(store_url, writers, tmp_path):
    _start(store_url)
    SPAWN.set_forkserver_preload([__name__])  # when this test starts the fork server
    barrier = SPAWN.Barrier(writers)
    outs = [tmp_path / f"W{k}.json" for k in range(writers)]
    jobs = [
        SPAWN.Process(target=_writer, args=(store_url, f"W{k}", barrier, str(out)))
        for k, out in enumerate(outs)
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(timeout=600)
    assert [job.exitcode for job in jobs] == [0] * writers
    met = sum((Counter(json.loads(out.read_text())) for out in outs), Counter())
    with open_store(store_url) as store:
        originals = store.originals("shared")
        saved = store.load("shared")
        named = {ref for m in saved.messages for ref in REF.findall(m.text)}
        behind_refs = {m.seq for ref in named for m in store.expand("shared", ref)}
    seqs = [m.seq for m in originals]
    texts = Counter(json.loads(m.body)["content"].split(" lorem")[0] for m in originals)
    in_context = Counter(seq for seq in saved.origin if seq is not None)
    unreachable = sorted(set(seqs) - behind_refs - set(in_context))
    expected = 2 + 8 + writers * ROUNDS * 2
    assert (len(seqs), seqs == list(range(1, expected + 1))) == (expected, True)
    assert max(texts.values()) == 1
    assert max(in_context.values()) == 1
    assert unreachable == []
    assert find_violations(Context(saved.messages)) == []
    # the writers did interleave: some found the conversation changed under them
    assert met["conversation_reread"] + met["compaction_reapplied"] > 0, met


def _two_readers(url: str):
    """Two stores on ``url``, each with a recorder that read the same conversation."""
    first, second = open_store(url), open_store(url)
    start = Context([TextMessage.system("s"), *(TextMessage.user(f"m{n}") for n in range(4))])
    ConversationRecorder.start(first, "conv").sync(start)
    readers = [ConversationRecorder.resume(s, s.load("conv")) for s in (first, second)]
    return (first, second), readers, start


def test_store_stale_compaction_is_reapplied_on_what_another_writer_appended(store_url):
    """A compaction made on an older reading keeps the turns another writer appended meanwhile."""
    stores, (mine, other), start = _two_readers(store_url)
    try:
        other.sync(start.append(TextMessage.user("other's turn")))
        after = Context([start[0], TextMessage.user("Summary: m0 to m2."), start[4]])
        compacted = mine.compacted(start, after, engine="frame", reason="manual", result=None)
        stored = stores[0].load("conv")
    finally:
        for store in stores:
            store.close()
    texts = [m.text.split("\n")[0] for m in compacted]
    assert texts == ["s", "Summary: m0 to m2.", "m3", "other's turn"]
    assert [m.text for m in stored.messages] == [m.text for m in compacted]
    assert (stored.version, mine.version, mine.stale) == (3, 3, False)


def test_store_stale_compaction_of_the_same_span_is_refused_and_reread(store_url):
    """Both writers compact the same messages: the second is refused (typed error, nothing
    written) and its next sync hands back the conversation as the first left it."""
    stores, (first, second), start = _two_readers(store_url)
    after = Context([start[0], TextMessage.user("Summary."), start[4]])
    try:
        first.compacted(start, after, engine="frame", reason="manual", result=None)
        with pytest.raises(ConversationChanged, match="another writer compacted"):
            second.compacted(start, after, engine="frame", reason="manual", result=None)
        archives = [a.ref for a in stores[1].archives("conv")]
        resynced = second.sync(start.append(TextMessage.user("next")))
        stored = stores[1].load("conv")
    finally:
        for store in stores:
            store.close()
    assert archives == ["c1"]
    assert [m.text.split("\n")[0] for m in resynced] == ["s", "Summary.", "m3", "next"]
    assert stored.messages == tuple(resynced)
