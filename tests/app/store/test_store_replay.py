"""The judging property and resuming, on the shared sessions and both databases.

Every shared session is replayed with a store at a small window. Afterwards each
message of the original transcript is either in the final context or given back,
byte for byte, by ``expand`` of a ref the final context names.
"""

from __future__ import annotations

import json
import re
import time

import anyio
import pytest

from forge_app.files import default_agent
from forge_app.runtime import Orchestrator, Replay, ReplayModel, ReplayTools
from forge_app.runtime.plugins import CompactionHandler
from forge_app.store import ArchivingEngine, open_store
from forge_domain import Context, Role, TextMessage, ToolCall, ToolResult
from tests.sessions import session_paths

REF = re.compile(r"\[archived: ref ([ct][0-9]+)")
WINDOW = 6_000


def _raw(path):
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else data["messages"]


def _agent(window=WINDOW):
    return default_agent().model_copy(update={"context_length": window})


async def _replay(raw, store, window=WINDOW, seen_refs=None):
    replay = Replay(Context.from_openai(raw), _agent(window), context_length=window, store=store)
    async for _ in replay.turns():
        if seen_refs is not None:  # every ref any context of the replay named
            seen_refs |= {ref for m in replay.conversation.context for ref in REF.findall(m.text)}
    return replay.conversation


def _canonical(message) -> str:
    return json.dumps(message, ensure_ascii=False)


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
@pytest.mark.anyio
async def test_store_every_original_is_in_context_or_expands_byte_identical(store_url):
    report = {}
    compactions = 0
    seen_refs: set[str] = set()
    with open_store(store_url) as store:
        for path in session_paths():
            raw = _raw(path)
            conversation = await _replay(raw, store, seen_refs=seen_refs)
            compactions += conversation.compactions
            final = {_canonical(m) for m in conversation.context.to_openai()}
            named = {ref for m in conversation.context for ref in REF.findall(m.text)}
            expanded = {m.body for ref in named for m in store.expand(conversation.id, ref)}
            lost = [i for i, m in enumerate(raw) if _canonical(m) not in final | expanded]
            exported = [m.body for m in store.originals(conversation.id)]
            size = store.context_size(conversation.id)
            report[path.name] = (
                lost,
                exported == [_canonical(m) for m in raw],
                size == len(store.load(conversation.id).messages),
            )
    assert report == {path.name: ([], True, True) for path in session_paths()}
    assert compactions > 50  # the window is small enough that most sessions compact often
    assert {ref[0] for ref in seen_refs} == {"c"}  # at 6,000 tokens no output outlives a summary


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
@pytest.mark.anyio
async def test_pruned_outputs_name_refs_that_expand_to_their_original_output(store_url):
    # At 16,000 tokens the pruning tier leaves placeholders in the context the model is sent;
    # each names its ``t`` ref, and the ref gives back the one original tool message.
    path = max(session_paths(), key=lambda p: len(_raw(p)))
    raw = _raw(path)
    seen_refs: set[str] = set()
    with open_store(store_url) as store:
        conversation = await _replay(raw, store, window=16_000, seen_refs=seen_refs)
        pruned = sorted(ref for ref in seen_refs if ref.startswith("t"))
        expanded = [store.expand(conversation.id, ref) for ref in pruned]
    originals = {_canonical(m) for m in raw if m.get("role") == "tool"}
    assert pruned != []
    assert [len(messages) for messages in expanded] == [1] * len(pruned)
    assert all(messages[0].body in originals for messages in expanded)


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
@pytest.mark.anyio
async def test_store_search_and_expand_on_a_shared_session(store_url):
    path = max(session_paths(), key=lambda p: len(_raw(p)))
    raw = _raw(path)
    with open_store(store_url) as store:
        conversation = await _replay(raw, store)
        engine = conversation.hooks.plugin(CompactionHandler.name).engine
        assert isinstance(engine, ArchivingEngine)
        failed = next(
            m
            for m in raw[: len(raw) // 2]
            if m["role"] == "tool" and "Traceback" in str(m["content"])
        )
        words = " ".join(re.findall(r"[A-Za-z]{6,}", str(failed["content"]))[-6:])
        found = engine.search({"query": words, "limit": 10})
        ref = next(
            h.ref
            for h in store.search(words, conversation_id=conversation.id, limit=50)
            if h.ref is not None
        )
        pages, page = [], 1
        while True:
            text = engine.expand({"ref": ref, "page": page})
            pages.append(text)
            if "(more: recall_expand" not in text:
                break
            page += 1
    assert f"ref {ref}" in found
    assert all(len(text) <= engine.page_chars for text in pages)
    assert str(failed["content"]) in "".join(
        p.split("\n", 1)[1].replace("\n[continues on the next page]\n", "").rsplit("\n(more:", 1)[0]
        for p in pages
    )
    assert engine.recall_uses == {"recall_search": 1, "recall_expand": len(pages)}


@pytest.mark.skipif(not session_paths(), reason="the shared sessions are not on this machine")
@pytest.mark.anyio
async def test_store_resume_after_restart_brings_the_state_back(store_url):
    path = next(p for p in session_paths() if "django-15400" in p.name)
    raw = _raw(path)
    with open_store(store_url) as store:
        replay = Replay(Context.from_openai(raw), _agent(), context_length=WINDOW, store=store)
        turns = 0
        async for _ in replay.turns():
            turns += 1
            if replay.conversation.compactions >= 3 and turns >= 20:
                break
        live = replay.conversation
        live_handler = live.hooks.plugin(CompactionHandler.name)
        live_handler.ineffective = 1
        replay.orchestrator.persist(live)
        expected = (
            live.context.to_openai(),
            live.context.usage_floor,
            live.turns,
            live.compactions,
            live_handler.state(),
        )
    with open_store(store_url) as store:  # a new process would do exactly this
        orchestrator = Orchestrator(
            _agent(), ReplayModel([]), tools=ReplayTools([]), context_length=WINDOW, store=store
        )
        resumed = orchestrator.resume(live.id)
        handler = resumed.hooks.plugin(CompactionHandler.name)
        actual = (
            resumed.context.to_openai(),
            resumed.context.usage_floor,
            resumed.turns,
            resumed.compactions,
            handler.state(),
        )
        summaries = [m for m in resumed.context if getattr(m, "summary_data", None)]
        before = len(store.archives(live.id))
        for n in range(8):
            call = ToolCall(id=f"more_{n}", name="bash", arguments='{"command": "ls -R"}')
            resumed.append(
                TextMessage(role=Role.ASSISTANT, content=None, tool_calls=(call,)),
                ToolResult.of(call.id, f"listing {n}\n" + "file.py\n" * 300),
            )
        orchestrator.persist(resumed)
        await handler.compact(resumed, "context_length_exceeded")
        after = [a.ref for a in store.archives(live.id)]
    assert actual == expected
    assert summaries  # the previous summary comes back with its structured data
    assert len(after) > before
    assert len(set(after)) == len(after)


@pytest.mark.anyio
async def test_store_recall_tools_are_offered_only_with_a_store(store_url):
    with open_store(store_url) as store:
        with_store = Orchestrator(_agent(), ReplayModel([]), store=store).open("hello")
        names = [s["function"]["name"] for s in with_store.tools.schemas()]
        result = await with_store.tools.execute(
            ToolCall(id="c1", name="recall_expand", arguments='{"ref": "c404"}')
        )
    plain = Orchestrator(_agent(), ReplayModel([])).open("hello")
    assert names == ["recall_search", "recall_expand"]
    assert plain.tools is None
    assert result.is_error
    assert "has no archive ref 'c404'" in result.text


def test_store_two_replays_of_one_session_are_two_conversations(store_url):
    """Two replays of one session in one store get two conversations."""
    path = next(iter(session_paths()), None)
    if path is None:
        pytest.skip("the shared sessions are not on this machine")
    raw = _raw(path)
    with open_store(store_url) as store:
        first = anyio.run(_replay, raw, store)
        second = anyio.run(_replay, raw, store)
        ids = {c.id for c in store.conversations()}
    assert ids == {first.id, second.id}
    assert len(ids) == 2


class _Guarded:
    """An engine stand-in with the summary cooldown the llm engine keeps (``guard``)."""

    name = "guarded"

    def __init__(self, cooldown_until: float, fallback_streak: int, clock=time.monotonic) -> None:
        from forge_app.compaction.llm._guard import CompactionGuard

        self.guard = CompactionGuard(cooldown_seconds=60.0, clock=clock)
        self.guard.cooldown_until = cooldown_until
        self.guard.fallback_streak = fallback_streak


def test_store_engine_state_carries_the_cooldown_and_recall_counts(store_url):
    from forge_app.store import ConversationRecorder

    with open_store(store_url) as store:
        recorder = ConversationRecorder.start(store, "conv")
        live = ArchivingEngine(_Guarded(time.monotonic() + 30.0, 2), recorder)
        live.recall_uses.update({"recall_search": 3})
        saved = live.state()
        resumed = ArchivingEngine(_Guarded(0.0, 0), recorder)
        resumed.restore(saved)
    remaining = resumed.inner.guard.cooldown_until - time.monotonic()
    assert 25.0 < remaining <= 30.0
    assert resumed.inner.guard.fallback_streak == 2
    assert resumed.recall_uses == {"recall_search": 3}


def test_store_engine_state_reads_the_cooldown_on_the_guards_own_clock(store_url):
    """The cooldown is in the units of the guard's clock (injectable), not ``time``'s."""
    from forge_app.store import ConversationRecorder

    with open_store(store_url) as store:
        recorder = ConversationRecorder.start(store, "conv")
        live = ArchivingEngine(_Guarded(1_030.0, 1, clock=lambda: 1_000.0), recorder)
        saved = live.state()
        resumed = ArchivingEngine(_Guarded(0.0, 0, clock=lambda: 5.0), recorder)
        resumed.restore(saved)
    assert saved["cooldown_remaining"] == 30.0
    assert resumed.inner.guard.cooldown_until == 35.0


@pytest.mark.anyio
async def test_store_failing_during_a_run_stops_it_with_a_typed_error(store_url):
    from structlog.testing import capture_logs

    from forge_app.errors import StoreError
    from forge_app.runtime import FunctionModel, ModelResponse

    def answer(request):
        store.close()  # the database goes away while the model thinks
        return ModelResponse(message=TextMessage(role=Role.ASSISTANT, content="done"))

    store = open_store(store_url)
    orchestrator = Orchestrator(_agent(), FunctionModel(answer), store=store)
    conversation = orchestrator.open("hello")
    with capture_logs() as logs, pytest.raises(StoreError):
        await orchestrator.run(conversation)
    events = [e["event"] for e in logs]
    assert "conversation_not_stored" in events
    assert events.index("conversation_not_stored") < events.index("conversation_ended")
    assert conversation.context.last_message().text == "done"
