"""Deadlines are deadlines: a provider that trickles or hangs costs a bounded wall time.

httpx's timeout is per read, so a server sending one byte every 0.2 s never trips it,
and a hung provider costs (retries + 1) x timeout. The summary call of the ``llm``
engine and each turn's provider call of the loop have a total deadline instead.
Each test asserts a bound far from what the provider would take without one (the
dripping body alone takes over a minute), so a slow machine does not make them flaky.
"""

from __future__ import annotations

import time

import pytest

from forge_app.compaction.llm._engine import OVERSIZE_FACTOR, LLMEngine
from forge_app.errors import TurnDeadlineExceeded
from forge_app.runtime._model import OpenAIChatModel
from forge_app.runtime._orchestrator import Orchestrator, RetryPolicy
from forge_domain import Agent
from forge_domain._messages import CHARS_PER_TOKEN
from forge_domain.formats import find_violations
from tests.app.cli_process import forge
from tests.app.engine_sessions import coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

DEADLINE = 1.0
"""The deadline the tests set, in seconds."""
SLACK = 4.0
"""What a loaded machine may add to it (the providers below take over 60 s)."""
SUMMARY = "## Goal\nMake the parser tests pass.\n## Progress\nEdited the parser.\n" * 4


@pytest.fixture
def server():
    with FakeOpenAIServer() as running:
        yield running


def _slow_providers() -> list[Reply]:
    return [Reply.dripping(SUMMARY, every=0.2), Reply.hanging()]


@pytest.mark.parametrize("reply", _slow_providers(), ids=["dripping", "hanging"])
@pytest.mark.anyio
async def test_summary_call_falls_back_to_the_frame_at_its_deadline(server, reply):
    server.script(reply, reply, reply)
    async with server.client(timeout=5.0, max_retries=2) as client:
        engine = LLMEngine(coding_agent(), client=client, timeout=5.0, deadline=DEADLINE)
        started = time.monotonic()
        outcome = await engine.compress(coding_session())
        elapsed = time.monotonic() - started

    actual = (
        outcome.result.engine,
        outcome.result.compacted_range is not None,
        find_violations(outcome.context),
        elapsed < DEADLINE + SLACK,
    )
    assert actual == ("frame", True, [], True), elapsed


@pytest.mark.anyio
async def test_summary_far_over_its_budget_is_refused_for_the_frame(server):
    agent = coding_agent()
    limit = OVERSIZE_FACTOR * agent.compact.summary_budget() * CHARS_PER_TOKEN
    server.script(Reply.text(SUMMARY * (limit // len(SUMMARY) + 2)))
    async with server.client() as client:
        engine = LLMEngine(agent, client=client, timeout=5.0)
        outcome = await engine.compress(coding_session())

    actual = (outcome.result.engine, len(server.requests), find_violations(outcome.context))
    assert actual == ("frame", 1, [])


@pytest.mark.anyio
async def test_summary_within_twice_its_budget_is_used(server):
    server.script(Reply.text(SUMMARY))
    async with server.client() as client:
        engine = LLMEngine(coding_agent(), client=client, timeout=5.0)
        outcome = await engine.compress(coding_session())

    assert outcome.result.engine == "llm"


def _agent() -> Agent:
    return Agent(id="runner", model="main-model", context_length=32_000)


@pytest.mark.parametrize("reply", _slow_providers(), ids=["dripping", "hanging"])
@pytest.mark.anyio
async def test_run_turn_stops_at_its_deadline_with_a_typed_error(server, reply):
    server.script(reply, reply, reply, reply)
    async with server.client(timeout=5.0) as client:
        orchestrator = Orchestrator(
            _agent(),
            OpenAIChatModel(client, "main-model"),
            retry=RetryPolicy(attempts=4, initial_delay=0.0, deadline=DEADLINE),
        )
        conversation = orchestrator.open("Say hello.")
        started = time.monotonic()
        with pytest.raises(TurnDeadlineExceeded) as raised:
            await orchestrator.run(conversation)
        elapsed = time.monotonic() - started

    actual = (
        raised.value.seconds,
        raised.value.exit_code,
        find_violations(conversation.context),
        elapsed < DEADLINE + SLACK,
    )
    assert actual == (DEADLINE, 1, [], True), elapsed


@pytest.mark.anyio
async def test_run_turn_within_its_deadline_answers(server):
    server.script(Reply.text("Hello."))
    async with server.client(timeout=5.0) as client:
        orchestrator = Orchestrator(
            _agent(),
            OpenAIChatModel(client, "main-model"),
            retry=RetryPolicy(deadline=30.0),
        )
        conversation = await orchestrator.chat("Say hello.")

    assert conversation.context[-1].text == "Hello."


RUN_CASES = [
    ("hanging", [Reply.hanging()], ["--turn-deadline", "1"], "deadline of 1 s"),
    ("dripping", [Reply.dripping("hi", every=0.5)], ["--turn-deadline", "1"], "deadline of 1 s"),
    ("truncated-json", [Reply.raw(b'{"choices": [{"message": {"conte')], [], "not JSON"),
    ("html-page", [Reply.raw(b"<html>\n<h1>502</h1>\n</html>", "text/html")], [], "not JSON"),
]


@pytest.mark.parametrize(
    ("replies", "options", "message"), [c[1:] for c in RUN_CASES], ids=[c[0] for c in RUN_CASES]
)
def test_cli_run_on_a_slow_or_unreadable_provider_exits_1_with_one_line(
    tmp_path, replies, options, message
):
    agent = tmp_path / "agent.yaml"
    agent.write_text("agents:\n  - id: x\n    model: fake-model\n")
    with FakeOpenAIServer() as server:
        server.script(*replies * 4)
        started = time.monotonic()
        result = forge(
            "run", agent, "hi", *options,
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"},
        )  # fmt: skip
        elapsed = time.monotonic() - started

    lines = result.stderr.strip().splitlines()
    actual = (result.returncode, len(lines), message in result.stderr, elapsed < 30)
    assert actual == (1, 1, True, True), result.stderr
