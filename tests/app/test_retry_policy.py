"""A turn's provider call tried again: the waits of ``RetryPolicy``, which errors are tried
again, and a replay that leaves no garbage in reference cycles per turn."""

from __future__ import annotations

import gc

import anyio
import pytest

from forge_app.errors import ModelCallFailed, ProviderUnavailable
from forge_app.runtime import Replay
from forge_app.runtime import _retry as retry_module
from forge_app.runtime._model import FunctionModel, ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import Orchestrator, RetryPolicy
from forge_domain import Agent, Compact, Context, TextMessage
from tests.app.tiny_engine import TinyEngine

AGENT = Agent(id="retry", model="m", system_prompt="be brief", max_turns=5)


def test_each_wait_is_drawn_from_zero_to_the_capped_exponential(monkeypatch):
    """Full jitter: uniform between 0 and ``initial_delay * 2 ** (attempt - 1)``, at most
    ``max_delay``."""
    monkeypatch.setattr(retry_module.random, "uniform", lambda low, high: (low, high))
    policy = RetryPolicy(attempts=8, initial_delay=0.5, max_delay=8.0)
    assert [policy.wait(n) for n in range(1, 8)] == [
        (0.0, 0.5),
        (0.0, 1.0),
        (0.0, 2.0),
        (0.0, 4.0),
        (0.0, 8.0),
        (0.0, 8.0),
        (0.0, 8.0),
    ]


def test_waits_stay_between_zero_and_their_ceiling_at_any_attempt():
    policy = RetryPolicy(initial_delay=0.25, max_delay=3.0)
    waits = [(n, policy.wait(n)) for n in (1, 2, 3, 5, 60, 5_000) for _ in range(50)]
    ceilings = {1: 0.25, 2: 0.5, 3: 1.0, 5: 3.0, 60: 3.0, 5_000: 3.0}
    outside = [(n, w) for n, w in waits if not 0.0 <= w <= ceilings[n]]
    assert (outside, RetryPolicy(initial_delay=0.0).wait(3)) == ([], 0.0)


@pytest.mark.anyio
async def test_the_call_is_tried_again_after_the_policy_s_wait_until_it_answers(monkeypatch):
    waited: list[int] = []
    monkeypatch.setattr(RetryPolicy, "wait", lambda self, attempt: waited.append(attempt) or 0.0)
    failures = [ProviderUnavailable("m", "overloaded", 503)] * 3

    def flaky(request: ModelRequest) -> ModelResponse:
        if failures:
            raise failures.pop()
        return ModelResponse(message=TextMessage.assistant("finally"))

    model = FunctionModel(flaky)
    orchestrator = Orchestrator(AGENT, model, retry=RetryPolicy(attempts=4), engine=TinyEngine)

    conversation = await orchestrator.chat("go")

    assert (conversation.context[-1].text, len(model.requests), waited) == (
        "finally",
        4,
        [1, 2, 3],
    )


@pytest.mark.anyio
async def test_a_refusal_that_is_not_transient_is_not_tried_again(monkeypatch):
    waited: list[int] = []
    monkeypatch.setattr(RetryPolicy, "wait", lambda self, attempt: waited.append(attempt) or 0.0)

    def refusing(request: ModelRequest) -> ModelResponse:
        raise ModelCallFailed("m", "bad request", 400)

    model = FunctionModel(refusing)
    orchestrator = Orchestrator(AGENT, model, retry=RetryPolicy(attempts=4), engine=TinyEngine)

    with pytest.raises(ModelCallFailed):
        await orchestrator.chat("go")

    assert (len(model.requests), waited) == (1, [])


def _chat(messages: int) -> Context:
    raw: list[dict[str, object]] = [{"role": "system", "content": "be brief"}]
    for n in range(messages // 2):
        raw.append({"role": "user", "content": f"question {n} " + "word " * (n % 40)})
        raw.append({"role": "assistant", "content": f"answer {n} " + "text " * (n % 90)})
    return Context.from_openai(raw)


def _cyclic_garbage_of_a_replay(messages: int) -> int:
    """Objects a replay of a ``messages``-message chat leaves in reference cycles (or held
    by them only; the chat itself is held here)."""
    chat = _chat(messages)

    async def run() -> None:
        agent = Agent(id="chat", model="m", compact=Compact(token_threshold=2_000))
        async for _ in Replay(chat, agent, context_length=4_000).records():
            pass

    anyio.run(run)  # lazy imports and caches first
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        anyio.run(run)
        return gc.collect()
    finally:
        if was_enabled:
            gc.enable()


def test_a_replay_leaves_no_cyclic_garbage_per_turn():
    """What a replay leaves in cycles is its conversation's (its plugin manager holding its
    last context), not one thing per turn: 150 turns more leave fewer than 150 objects
    more (a retrying object per model call left about 35 objects a turn)."""
    more_turns = 150
    grown = _cyclic_garbage_of_a_replay(100 + 2 * more_turns) - _cyclic_garbage_of_a_replay(100)
    assert grown < more_turns
