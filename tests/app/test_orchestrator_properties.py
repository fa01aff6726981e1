"""Properties of the pipeline over generated transcripts (hypothesis)."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.runtime._replay import Replay
from forge_domain import Agent, Compact, Context
from forge_domain.formats import find_violations
from forge_domain.testing import pattern
from tests.app.tiny_engine import TinyEngine

SEGMENTS = ["u", "a", "tr", "Trr", "te", "ua", "tra"]
"""Pieces that keep a transcript provider-valid when joined after ``su``."""

transcripts = st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=25).map(
    lambda parts: pattern("su" + "".join(parts) + "a")
)

EAGER = Agent(
    id="eager",
    compact=Compact(token_threshold=40, retention_window=2, eviction_window=0.5),
)
"""Compacts almost every turn (the pattern messages are a few tokens each)."""
NEVER = Agent(id="never", compact=Compact(token_threshold=10**9))


def replayed(transcript: Context, agent: Agent, engine=None) -> tuple[Context, list[Context]]:
    options = {} if engine is None else {"engine": engine}
    session = Replay(transcript, agent, **options)
    contexts: list[Context] = []

    async def run() -> None:
        async for _ in session.turns():
            contexts.append(session.conversation.context)

    anyio.run(run)
    return session.conversation.context, contexts


@settings(max_examples=30)
@given(transcripts)
def test_every_context_the_pipeline_produces_is_provider_valid(transcript):
    final, contexts = replayed(transcript, EAGER)

    assert [find_violations(c) for c in [*contexts, final]] == [[]] * (len(contexts) + 1)


@settings(max_examples=30)
@given(transcripts)
def test_replay_without_compaction_is_the_identity(transcript):
    final, _ = replayed(transcript, NEVER, engine=TinyEngine)

    assert final.to_openai() == transcript.to_openai()
