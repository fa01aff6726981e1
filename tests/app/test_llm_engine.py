"""The llm engine against a real HTTP server on 127.0.0.1 playing the summariser."""

from __future__ import annotations

import json

import anyio
import pytest
from structlog.testing import capture_logs

from forge_app.compaction._compactor import Compactor
from forge_app.compaction._registry import resolve_engine
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.compaction.llm._prompt import (
    END_MARKER,
    SUMMARY_PREFIX,
    VERIFIED_FACTS_HEADING,
    framed,
)
from forge_app.errors import EngineUnavailable, SummaryAuthFailed
from forge_app.evaluation import evaluate
from forge_app.files import read_transcript
from forge_app.summary import SummaryFrame
from forge_app.summary._frame import SUMMARY_PREAMBLE
from forge_domain import (
    Agent,
    Compact,
    Context,
    Role,
    TextMessage,
    TokenCount,
    ToolCall,
    ToolResult,
    Usage,
)
from forge_domain.formats import find_violations
from forge_domain.summary import ContextSummary
from tests.app.engine_sessions import SECRET, coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.sessions import SESSIONS

pytestmark = pytest.mark.anyio

GOOD = """## Goal
Make the parser tests pass.
## Progress
Done: edited src/parser_1.py, src/parser_2.py, src/parser_3.py and src/parser_4.py.
Blocked: `pytest -x` still fails on the tokenizer (its output ends in "line of tool output").
## Relevant files
- src/parser_*.py"""

OMITS_A_FILE = GOOD.replace(" and src/parser_4.py", "")
OMITS_THE_ERROR = GOOD.replace(' (its output ends in "line of tool output")', "")
TASK = "Fix the failing tests in the parser."


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
    running_server.reset()
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
    """The framed summary (a message of its own, or merged ahead of a message's text)."""
    text = next(m.text for m in context if m.text.startswith(SUMMARY_PREFIX))
    return text[: text.index(END_MARKER) + len(END_MARKER)]


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
        (outcome.context[-4].role, outcome.context[-4].text) == (Role.USER, framed(GOOD)),
        framed(GOOD).startswith(SummaryFrame().render(ContextSummary()).split("\n\n")[0]),
        server.requests[0]["model"],
    )

    assert actual == (
        framed(GOOD),
        "llm",
        Usage.reported(prompt_tokens=900, completion_tokens=80),
        1.0,
        (2, len(fixture) - 4),
        [],
        True,
        True,
        True,
        "cheap-model",
    )


def _turns(context: Context) -> str:
    """The turns after the system prompt: ``u`` user, ``a`` assistant, ``r`` a tool result
    (on the user's side for providers that alternate, as Anthropic's ``tool_result``)."""
    return "".join(
        "r" if isinstance(m, ToolResult) else "u" if m.role == Role.USER else "a"
        for m in context
        if isinstance(m, ToolResult) or m.role != Role.SYSTEM
    )


def _more_work(context: Context, rounds: int) -> Context:
    """``context``, a new ask and ``rounds`` tool rounds with big outputs."""
    messages = [*context, TextMessage.user("Now build the docs.")]
    for number in range(rounds):
        call = ToolCall(
            id=f"more{len(context)}_{number}", name="shell", arguments='{"command": "make docs"}'
        )
        messages += [
            TextMessage.assistant(f"Building the docs, try {number}.", (call,)),
            ToolResult.of(f"more{len(context)}_{number}", "built\n" * 400),
        ]
    messages.append(TextMessage.assistant("The docs are built."))
    return Context(messages)


async def test_llm_engine_summary_is_a_user_message_over_two_compactions(server, engine):
    server.script(Reply.text(GOOD), Reply.text(GOOD.replace("Make", "Still make")))

    first = (await engine.compress(coding_session())).context
    second = (await engine.compress(_more_work(first, 4), mode="forced")).context
    actual = (
        [("uu" in _turns(c), "aa" in _turns(c)) for c in (first, second)],
        [
            find_violations(c, dialect)
            for c in (first, second)
            for dialect in ("openai", "anthropic")
        ],
        [c[1].text for c in (first, second)],
        "<previous-summary>" in _prompt(server)
        and "Make the parser tests pass." in _prompt(server),
        _summary_of(second) == framed(GOOD.replace("Make", "Still make")),
        sum(m.text.count(SUMMARY_PREFIX) for m in second),
    )

    assert actual == (
        [(True, False), (True, False)],  # the summary is a user message after the task
        [[], [], [], []],
        [TASK, TASK],
        True,
        True,
        1,
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
        5 / 6,
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


async def test_llm_engine_never_summarises_the_task(server, engine):
    server.script(Reply.text(GOOD), Reply.text(GOOD))
    first = await engine.compress(coding_session())
    longer = first.context.append(*coding_session(rounds=3)[3:])

    second = await engine.compress(longer)
    actual = (
        first.result.compacted_range[0],
        second.result.compacted_range[0],
        [m.text for m in second.context[:2]],
        f"<task>\n{TASK}\n</task>" in _prompt(server),
        find_violations(second.context),
    )

    assert actual == (2, 2, ["You are a careful coding agent.", TASK], True, [])


async def test_llm_engine_reports_which_facts_coverage_checked(server, engine):
    server.script(Reply.text(OMITS_A_FILE))

    with capture_logs() as logs:
        outcome = await engine.compress(coding_session())
    checked = next(log for log in logs if log["event"] == "summary_checked")

    assert (outcome.result.coverage, checked["checked"], checked["missing"]) == (
        5 / 6,
        "task, 4 modified paths, 1 failed operation",
        ["modified path `src/parser_4.py`"],
    )


async def test_llm_engine_fills_in_a_failure_and_its_error_line(server, engine):
    server.script(Reply.text(OMITS_THE_ERROR))

    outcome = await engine.compress(coding_session())

    assert (outcome.result.coverage, _summary_of(outcome.context)) == (
        5 / 6,
        framed(
            f"{OMITS_THE_ERROR}\n\n{VERIFIED_FACTS_HEADING}\n"
            "- Failed: `pytest -x` -> `line of tool output`"
        ),
    )


async def test_llm_engine_checks_no_task_when_an_earlier_summary_holds_it(server, engine):
    server.script(Reply.text(GOOD))
    fixture = coding_session()
    headless = Context([fixture[0], TextMessage.user(framed("## Goal\nold")), *fixture[2:]])

    outcome = await engine.compress(headless)

    assert (outcome.result.coverage, "- Task:" in _summary_of(outcome.context)) == (1.0, False)


async def test_llm_engine_sends_the_frame_and_excerpts_not_the_raw_turns(server, engine):
    server.script(Reply.text(GOOD))
    fixture = coding_session(rounds=12)

    outcome = await engine.compress(fixture)
    prompt = _prompt(server)
    span = fixture[outcome.result.compacted_range[0] : outcome.result.compacted_range[1] + 1]
    actual = (
        "<record>" in prompt,
        "**Update:** `src/parser_1.py`" in prompt,
        "12, 11 earlier failed)" in prompt,
        "[TOOL RESULT s12 (failed)]: env OPENAI_API_KEY=[REDACTED]" in prompt,
        "[TOOL RESULT s1 (failed)]" in prompt,
        len(prompt) < sum(len(m.text) for m in span) / 5,
    )

    assert actual == (True, True, True, True, False, True)


async def test_llm_engine_sends_the_turns_when_they_are_the_smaller_input(server, engine):
    server.script(Reply.text(GOOD))
    chat = [TextMessage.assistant(f"answer {n}: " + "a" * 150) for n in range(6)]
    fixture = Context(
        [
            TextMessage.system("s"),
            TextMessage.user(TASK),
            *[m for n, answer in enumerate(chat) for m in (answer, TextMessage.user(f"ask {n}"))],
            TextMessage.assistant("done"),
        ]
    )

    await engine.compress(fixture, mode="forced")
    prompt = _prompt(server)

    assert ("<turns>" in prompt, "<record>" in prompt, "[ASSISTANT]: answer 0" in prompt) == (
        True,
        False,
        True,
    )


async def test_llm_engine_and_frame_share_one_preamble(server, client, clock):
    engine = LLMEngine(coding_agent(), client=client, cwd="/repo", timeout=0.3, clock=clock)
    server.script(Reply.error(500))

    outcome = await engine.compress(coding_session())
    fallback = _summary_of(outcome.context)
    actual = (
        SUMMARY_PREFIX.endswith(SUMMARY_PREAMBLE),
        SummaryFrame().render(ContextSummary()).splitlines()[1],
        fallback.count(SUMMARY_PREAMBLE),
        "verify with your tools" in fallback,
    )

    assert actual == (True, SUMMARY_PREAMBLE, 1, False)


DJANGO = next((path for path in SESSIONS if path.stem == "msa-deepseek-django-15400"), None)


@pytest.mark.skipif(DJANGO is None, reason="shared sessions not available")
async def test_llm_engine_reports_its_calls_to_the_eval(server, monkeypatch):
    monkeypatch.setenv("FORGE_SUMMARY_BASE_URL", server.base_url)
    monkeypatch.setenv("FORGE_SUMMARY_API_KEY", "k")
    monkeypatch.setattr(server, "responder", lambda body: Reply.text(GOOD, prompt_tokens=1_000))
    agent = coding_agent(retention_window=6).model_copy(update={"context_length": None})
    transcript = read_transcript(DJANGO)

    row = await evaluate(transcript.context, agent, window=16_000)

    assert (row.summary_calls > 0, row.summary_prompt_tokens) == (
        True,
        1_000 * len(server.requests),
    )


async def test_llm_engine_sends_an_earlier_frame_within_the_record_budget(server, engine):
    compactor = Compactor(Compact(retention_window=2))
    session = _more_work(coding_session(8), 6)
    framed_context = compactor.compact(session, compactor.forced_strategy()).context
    frame_text = next(m.text for m in framed_context if m.summary_data is not None)
    server.script(Reply.text(GOOD))

    await engine.compress(_more_work(framed_context, 6), mode="forced")
    previous = _prompt(server).split("<previous-summary>")[1].split("</previous-summary>")[0]
    record_chars = engine.compact.summary_budget() * 4 // 3
    actual = (
        len(frame_text) > record_chars,
        len(previous) <= record_chars + 20,
        "src/parser_8.py" in previous,
    )

    assert actual == (True, True, True)
