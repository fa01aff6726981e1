"""The llm engine against a real HTTP server on 127.0.0.1 playing the summariser."""

from __future__ import annotations

import json

import anyio
import pytest

from forge_app.compaction._registry import resolve_engine
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.compaction.llm._prompt import SUMMARY_PREFIX, VERIFIED_FACTS_HEADING, framed
from forge_app.errors import EngineUnavailable, SummaryAuthFailed
from forge_domain import Agent, Context, TextMessage, TokenCount, Usage
from forge_domain.validation import find_violations
from tests.app.engine_sessions import SECRET, coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.sessions import SESSIONS

pytestmark = pytest.mark.anyio

GOOD = """## Goal
Make the parser tests pass.
## Progress
Done: edited src/parser_1.py, src/parser_2.py, src/parser_3.py and src/parser_4.py.
Blocked: `pytest -x` still fails on the tokenizer.
## Relevant files
- src/parser_*.py"""

OMITS_A_FILE = GOOD.replace(" and src/parser_4.py", "")


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def running_server():
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def server(running_server):
    running_server.requests.clear()
    return running_server


@pytest.fixture
async def client(server):
    async with server.client() as opened:
        yield opened


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def engine(client, clock):
    return LLMEngine(coding_agent(), client=client, cwd="/repo", timeout=5.0, clock=clock)


def _summary_of(context: Context) -> str:
    return next(m.text for m in context if m.text.startswith(SUMMARY_PREFIX))


def _prompt(server: FakeOpenAIServer, number: int = -1) -> str:
    return server.requests[number]["messages"][0]["content"]


async def test_llm_engine_splices_a_good_summary(server, engine):
    server.script(Reply.text(GOOD, prompt_tokens=900, completion_tokens=80))
    fixture = coding_session()

    outcome = await engine.compress(fixture)
    result = outcome.result
    actual = (
        _summary_of(outcome.context),
        result.engine,
        result.summary_usage,
        result.coverage,
        result.compacted_range,
        find_violations(outcome.context),
        outcome.context[-3:] == fixture[-3:],
        server.requests[0]["model"],
    )

    assert actual == (
        framed(GOOD),
        "llm",
        Usage.reported(prompt_tokens=900, completion_tokens=80),
        1.0,
        (3, len(fixture) - 4),
        [],
        True,
        "cheap-model",
    )


async def test_llm_engine_never_sends_secrets(server, engine):
    server.script(Reply.text(GOOD))

    await engine.compress(coding_session())

    assert (SECRET in json.dumps(server.requests[0]), "[REDACTED]" in _prompt(server)) == (
        False,
        True,
    )


async def test_llm_engine_updates_the_previous_summary(server, engine):
    server.script(Reply.text(GOOD), Reply.text(GOOD + "\n- docs/tokenizer.md"))
    first = (await engine.compress(coding_session())).context
    longer = first.append(*coding_session(rounds=3)[3:])

    second = await engine.compress(longer)
    prompt = _prompt(server)
    actual = (
        "UPDATE it, do not start over" in prompt,
        f"<previous-summary>\n{GOOD}\n</previous-summary>" in prompt,
        sum(m.text.startswith(SUMMARY_PREFIX) for m in second.context),
        "- docs/tokenizer.md" in _summary_of(second.context),
        find_violations(second.context),
    )

    assert actual == (True, True, 1, True, [])


async def test_llm_engine_passes_the_focus_topic(server, engine):
    server.script(Reply.text(GOOD))

    await engine.compress(coding_session(), focus="the tokenizer")

    assert 'FOCUS TOPIC: "the tokenizer"' in _prompt(server)


async def test_llm_engine_fills_in_a_file_the_summary_omitted(server, engine):
    server.script(Reply.text(OMITS_A_FILE))

    outcome = await engine.compress(coding_session())

    assert (outcome.result.coverage, _summary_of(outcome.context)) == (
        0.8,
        framed(f"{OMITS_A_FILE}\n\n{VERIFIED_FACTS_HEADING}\n- Modified file: `src/parser_4.py`"),
    )


FAILURES = [
    ("server_error", Reply.error(500)),
    ("unavailable", Reply.error(503)),
    ("rate_limited", Reply.error(429)),
    ("empty", Reply.text("")),
    ("no_content", Reply(content=None, tool_calls=(("x", "read", "{}"),))),
    ("malformed", Reply.text("Sure! The user fixed some things.")),
    ("timeout", Reply.text(GOOD, delay=1.0)),
]


@pytest.mark.parametrize("reply", [c[1] for c in FAILURES], ids=[c[0] for c in FAILURES])
async def test_llm_engine_falls_back_to_the_frame(server, client, clock, reply):
    engine = LLMEngine(coding_agent(), client=client, cwd="/repo", timeout=0.3, clock=clock)
    server.script(reply)
    fixture = coding_session()

    outcome = await engine.compress(fixture)
    summary = _summary_of(outcome.context)
    actual = (
        outcome.result.engine,
        outcome.result.summary_usage,
        "summarising model was unavailable" in summary,
        "**Update:** `src/parser_4.py`" in summary,
        find_violations(outcome.context),
        engine.guard.fallback_streak,
        engine.guard.is_cooling_down(),
    )

    assert actual == ("frame", None, True, True, [], 1, True)


@pytest.mark.parametrize("status", [401, 403])
async def test_llm_engine_aborts_on_refused_credentials(server, engine, status):
    server.script(Reply.error(status))

    with pytest.raises(SummaryAuthFailed) as raised:
        await engine.compress(coding_session())

    assert (raised.value.status, raised.value.model) == (status, "cheap-model")


async def test_llm_engine_cools_down_and_keeps_compacting_with_the_frame(server, engine, clock):
    server.script(Reply.error(500), Reply.text(GOOD))
    fixture = coding_session()
    over = TokenCount.actual(3_000)

    await engine.compress(fixture)
    cooling = await engine.compress(fixture)
    still_compacts = engine.should_compress(fixture, over)
    clock.now += 61
    recovered = await engine.compress(fixture)
    actual = (
        len(server.requests),
        cooling.result.engine,
        cooling.changed(),
        still_compacts,
        recovered.result.engine,
    )

    assert actual == (2, "frame", True, True, "llm")


async def test_llm_engine_forced_compaction_ignores_the_cooldown(server, engine):
    server.script(Reply.error(500), Reply.text(GOOD))

    await engine.compress(coding_session())
    forced = await engine.compress(coding_session(), mode="forced")

    assert (len(server.requests), forced.result.engine) == (2, "llm")


async def test_llm_engine_cancelled_mid_call_leaves_everything_unchanged(server, engine):
    server.script(Reply.text(GOOD, delay=2.0))
    fixture = coding_session()
    outcomes = []

    with anyio.move_on_after(0.3) as scope:
        outcomes.append(await engine.compress(fixture))

    assert (scope.cancelled_caught, outcomes, engine.guard.fallback_streak) == (True, [], 0)


async def test_llm_engine_nothing_to_compact_calls_no_model(server, engine):
    fixture = Context([TextMessage.system("s"), TextMessage.user("hi")])

    outcome = await engine.compress(fixture)

    assert (outcome.changed(), server.requests) == (False, [])


def test_llm_engine_needs_a_model():
    with pytest.raises(EngineUnavailable):
        LLMEngine(Agent(id="nomodel"))


async def test_llm_engine_in_tiers_is_not_called_when_pruning_is_enough(server, client):
    engine = resolve_engine(coding_agent(), client=client, cwd="/repo")

    outcome = await engine.compress(coding_session())

    assert (outcome.result.engine, server.requests) == ("prune", [])


async def test_llm_engine_in_tiers_reads_real_outputs_when_forced(server, client):
    engine = resolve_engine(coding_agent(), client=client, cwd="/repo")
    server.script(Reply.text(GOOD))

    outcome = await engine.compress(coding_session(), mode="forced")

    assert (
        outcome.result.engine,
        "line of tool output" in _prompt(server),
        "[tool output pruned" in _prompt(server),
        find_violations(outcome.context),
    ) == ("llm", True, False, [])


SESSIONS = sorted(SESSIONS.glob("*.json"))


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
async def test_llm_engine_real_sessions_stay_valid_and_shrink(server, client, monkeypatch, path):
    monkeypatch.setattr(server, "responder", lambda body: Reply.text(GOOD))
    fixture = Context.from_openai(json.loads(path.read_text()))
    engine = resolve_engine(coding_agent(), client=client, context_length=200_000)

    outcome = await engine.compress(fixture, mode="forced")

    assert (
        find_violations(outcome.context),
        outcome.result.compacted_tokens <= outcome.result.original_tokens,
    ) == ([], True)


async def test_llm_engine_builds_and_closes_its_own_client(server, monkeypatch):
    monkeypatch.setenv("SUMMARY_KEY", "k")
    agent = coding_agent().model_copy(
        update={"api_key_env": "SUMMARY_KEY", "base_url": server.base_url}
    )
    engine = resolve_engine(agent, max_retries=0)
    server.script(Reply.text(GOOD))

    outcome = await engine.compress(coding_session(), mode="forced")
    await engine.aclose()

    assert (outcome.result.engine, server.requests[0]["model"]) == ("llm", "cheap-model")


async def test_llm_engine_without_an_api_key_aborts(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    engine = LLMEngine(coding_agent(), base_url=server.base_url)

    with pytest.raises(SummaryAuthFailed):
        await engine.compress(coding_session())


async def test_llm_engine_reads_its_endpoint_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("FORGE_SUMMARY_BASE_URL", server.base_url)
    monkeypatch.setenv("FORGE_SUMMARY_API_KEY", "k")
    engine = LLMEngine(coding_agent(), max_retries=0)
    server.script(Reply.text(GOOD))

    outcome = await engine.compress(coding_session())
    await engine.aclose()

    assert outcome.result.engine == "llm"
