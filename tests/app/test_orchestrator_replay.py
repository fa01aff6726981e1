"""Replay: a recorded transcript through the real event pipeline."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path

import pytest

from forge_app.files._agents import load_agent
from forge_app.runtime._hookspecs import hookimpl
from forge_app.runtime._replay import Replay, replay
from forge_domain import Agent, Compact, Context, Role
from forge_domain.formats import find_violations
from forge_domain.testing import pattern
from tests.app.tiny_engine import TinyEngine

DEMO = Path(__file__).parents[2] / "forge_app" / "demo"
NEVER = Agent(id="never", compact=Compact(token_threshold=10**9))
"""An agent whose compaction never fires."""


def responses(context: Context) -> int:
    return sum(1 for m in context if m.has_role(Role.ASSISTANT))


def demo_session() -> Context:
    return Context.from_openai(json.loads((DEMO / "session.json").read_text()))


@pytest.mark.parametrize(
    "letters",
    ["sua", "sutra", "sutrua", "sTrrua", "sutrtrtrauaua", "suTrrtra", "sutea"],
    ids=["answer", "one-call", "two-users", "parallel", "long", "mixed", "failed-call"],
)
@pytest.mark.anyio
async def test_replay_without_compaction_reproduces_the_transcript(letters):
    transcript = pattern(letters)
    session = Replay(transcript, NEVER, engine=TinyEngine)

    turns = [turn async for turn in session.turns()]

    actual = (session.conversation.context.to_openai(), [t.turn for t in turns])
    expected = (
        transcript.to_openai(),
        list(range(1, responses(transcript) + 1)),
    )
    assert actual == expected


class Events:
    def __init__(self) -> None:
        self.names: list[str] = []

    @hookimpl
    def forge_on_compaction_end(self, reason) -> None:
        self.names.append(f"compacted:{reason}")

    @hookimpl
    def forge_on_end(self, reason) -> None:
        self.names.append(f"end:{reason}")


@pytest.mark.anyio
async def test_replay_of_a_real_session_compacts_through_the_pipeline():
    transcript = demo_session()
    agent = load_agent(DEMO / "agent.yaml")
    events = Events()

    turns = [turn async for turn in replay(transcript, agent, plugins=[("events", events)])]

    compactions = [c for t in turns for c in t.compactions]
    last = turns[-1]
    actual = (
        len(turns),
        len(compactions) >= 1,
        all(c.compacted_tokens < c.original_tokens for c in compactions),
        last.recorded_messages,
        int(last.tokens) < last.recorded_tokens,
        events.names[-1],
        len(events.names) - 1 == len(compactions),
    )
    expected = (
        responses(transcript),
        True,
        True,
        len(transcript),
        True,
        "end:final_answer",
        True,
    )
    assert actual == expected


@pytest.mark.anyio
async def test_replay_final_context_is_provider_valid():
    session = Replay(demo_session(), load_agent(DEMO / "agent.yaml"))

    sizes = [int(turn.tokens) async for turn in session.turns()]

    assert (find_violations(session.conversation.context), max(sizes) < 7_400) == ([], True)


@pytest.mark.anyio
async def test_replay_keeps_no_request_past_its_turn():
    """Each request goes to the listeners as it is sent; a summary sent earlier and
    compacted away since is not kept alive by the replay (nor are the requests)."""
    session = Replay(demo_session(), load_agent(DEMO / "agent.yaml"))
    recording = {id(m) for m in session.transcript}
    sent: list[weakref.ref[object]] = []
    requests: list[int] = []

    def listen(context: Context) -> None:
        requests.append(len(context))
        sent.extend(weakref.ref(m) for m in context if id(m) not in recording)

    session.on_request(listen)
    turns = [turn async for turn in session.turns()]
    gc.collect()

    final = {id(m) for m in session.conversation.context}
    kept = [ref() for ref in sent if ref() is not None and id(ref()) not in final]
    compactions = sum(1 for t in turns for c in t.compactions if c.compacted_range)
    assert (len(requests), session.model.requests, compactions > 1, kept) == (
        len(turns),
        len(turns),
        True,
        [],
    )
