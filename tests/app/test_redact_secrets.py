"""RedactSecrets, and secrets kept out of every summary: the frame and the llm engine's request."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.summary import REDACTED, RedactSecrets, SummaryTransformer
from forge_app.summary._redaction import _RULES, hinted_rules, redact
from forge_domain import Compact, Context, Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem, ToolCallItem
from forge_domain.tools import (
    FetchTool,
    GenericTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    Todo,
    TodoChange,
    TodoWriteTool,
)
from tests.app.engine_sessions import coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.app.secret_fakes import SECRET_FAKES, redacted_by_every_rule

KEY = "sk-proj-4fG7hK2mN9pQ1rS5tU8vW3xY6zA0bC"
NOTE = TextItem(text="[omitted: 2 token=abc123def456 notes]", omitted=(("narration", 2),))
FAKES = [pytest.param(text, secret, id=form) for form, text, secret in SECRET_FAKES]


def _summary(*items: TextItem | ToolCallItem) -> ContextSummary:
    return ContextSummary(blocks=(SummaryBlock(role=Role.ASSISTANT, contents=items),))


def _call(tool: ShellTool | FetchTool | GenericTool) -> ToolCallItem:
    return ToolCallItem(id="c1", tool=tool, is_success=True)


def test_redact_secrets_rewrites_texts_and_every_string_a_call_shows():
    fixture = _summary(
        TextItem(text=f"the key is {KEY}"),
        _call(ShellTool(command=f"export OPENAI_API_KEY={KEY} && ./deploy")),
        _call(FetchTool(url="https://bob:hunter22@example.com/x")),
        _call(GenericTool(name="vault", arguments='{"api_key": "abc123def456"}')),
        NOTE,
    )

    actual = RedactSecrets()(fixture)

    expected = _summary(
        TextItem(text=f"the key is {REDACTED}"),
        _call(ShellTool(command=f"export OPENAI_API_KEY={REDACTED} && ./deploy")),
        _call(FetchTool(url=f"https://bob:{REDACTED}@example.com/x")),
        _call(GenericTool(name="vault", arguments=f'{{"api_key": "{REDACTED}"}}')),
        NOTE,
    )
    assert actual == expected


def test_redact_secrets_reaches_strings_inside_nested_models():
    def todo_write(content: str) -> ToolCallItem:
        change = TodoChange(todo=Todo(content=content, status="pending"), kind="added")
        return ToolCallItem(id="t", tool=TodoWriteTool(changes=(change,)), is_success=True)

    def search(query: str) -> ToolCallItem:
        tool = SemSearchTool(queries=(SemanticQuery(query=query, use_case="find it"),))
        return ToolCallItem(id="s", tool=tool, is_success=True)

    fixture = _summary(todo_write(f"rotate {KEY}"), search(f"where is {KEY} used"))

    actual = RedactSecrets()(fixture)

    assert actual == _summary(todo_write(f"rotate {REDACTED}"), search(f"where is {REDACTED} used"))


def test_redact_secrets_returns_a_summary_without_secrets_as_it_is():
    fixture = _summary(TextItem(text="ran the tests"), _call(ShellTool(command="pytest -x")))

    actual = RedactSecrets()(fixture)

    assert actual is fixture


@pytest.mark.parametrize(
    ("transformer", "expected"),
    [
        (SummaryTransformer(), f"export TOKEN={REDACTED}"),
        (SummaryTransformer(redact_secrets=False), "export TOKEN=ghx1234567890"),
    ],
    ids=["default", "off"],
)
def test_summary_transformer_redacts_unless_told_not_to(transformer, expected):
    fixture = _summary(_call(ShellTool(command="export TOKEN=ghx1234567890")))

    actual = transformer(fixture).blocks[0].contents[0]

    assert actual == _call(ShellTool(command=expected))


def _session_with(text: str) -> Context:
    """A session whose compacted span holds ``text`` as a command, an ask and a note."""
    run = ToolCall(id="c1", name="shell", arguments=json.dumps({"command": text}))
    return Context(
        [
            TextMessage.system("You are a careful coding agent."),
            TextMessage.user("Deploy the service."),
            TextMessage.assistant(f"I will run: {text}", (run,)),
            ToolResult.of("c1", "done\n" * 200),
            TextMessage.user(f"Also keep this in mind: {text}"),
            TextMessage.assistant("Noted, all set."),
            TextMessage.user("Now write the release notes."),
            TextMessage.assistant("Writing them."),
        ]
    )


def _frame_summary(text: str, compact: Compact) -> str:
    compactor = Compactor(compact)
    outcome = compactor.compact(_session_with(text), compactor.forced_strategy())
    summaries = [m for m in outcome.context if m.summary_data is not None]
    assert len(summaries) == 1, "the span was not compacted"
    return summaries[0].text + json.dumps(summaries[0].summary_data)


@pytest.mark.parametrize(("text", "secret"), FAKES)
def test_frame_summary_never_keeps_a_secret(text, secret):
    actual = _frame_summary(text, Compact(retention_window=2))

    assert secret not in actual


@pytest.mark.parametrize(("text", "secret"), FAKES)
def test_frame_summary_keeps_secrets_when_redaction_is_off(text, secret):
    actual = _frame_summary(text, Compact(retention_window=2, redact_secrets=False))

    assert secret in actual


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as running:
        yield running


def _llm_session_with(text: str) -> Context:
    session = list(coding_session())
    run = ToolCall(id="leak", name="shell", arguments=json.dumps({"command": text}))
    session[3:3] = [
        TextMessage.assistant(f"Running: {text}", (run,)),
        ToolResult.of("leak", f"ran {text}"),
        TextMessage.user(f"Remember: {text}"),
    ]
    return Context(session)


@pytest.mark.parametrize(("text", "secret"), FAKES)
@pytest.mark.parametrize(
    "reply",
    [Reply.text("## Goal\nDeploy the service.\n## Progress\nDone."), Reply.error(500)],
    ids=["summary", "fallback"],
)
@pytest.mark.anyio
async def test_llm_engine_sends_and_writes_no_secret(server, reply, text, secret):
    server.requests.clear()
    server.script(reply)
    async with server.client() as client:
        engine = LLMEngine(coding_agent(), client=client, cwd="/repo", timeout=5.0)
        outcome = await engine.compress(_llm_session_with(text))

    summary = next(m for m in outcome.context if m.summary_data is not None)
    sent = json.dumps(server.requests)
    actual = (secret in sent, "[REDACTED" in sent, secret in summary.text, len(server.requests))
    assert actual == (False, True, False, 1)


@pytest.mark.parametrize(
    ("redact_secrets", "kept"), [(True, False), (False, True)], ids=["on", "off"]
)
@pytest.mark.anyio
async def test_llm_fallback_honours_redact_secrets(server, redact_secrets, kept):
    server.requests.clear()
    server.script(Reply.error(500))
    async with server.client() as client:
        agent = coding_agent(redact_secrets=redact_secrets)
        engine = LLMEngine(agent, client=client, cwd="/repo", timeout=5.0)
        outcome = await engine.compress(_llm_session_with(f"export OPENAI_API_KEY={KEY}"))

    summary = next(m for m in outcome.context if m.summary_data is not None)
    actual = (outcome.result.engine, KEY in summary.text, KEY in json.dumps(server.requests))
    assert actual == ("frame", kept, False)


def test_redact_secrets_reaches_the_evidence_of_a_failure():
    def failed(evidence: str) -> ToolCallItem:
        return ToolCallItem(
            id="c1", tool=ShellTool(command="./deploy"), is_success=False, evidence=evidence
        )

    fixture = _summary(failed(f"error: bad key {KEY} | exit code 1"))

    actual = RedactSecrets()(fixture)

    assert actual == _summary(failed(f"error: bad key {REDACTED} | exit code 1"))


_PIECES = [
    *sorted({hint for rule in _RULES for hint in rule.hints}),
    "API_KEY",
    "Bearer ",
    "Authorization",
    " ",
    "=",
    ": ",
    '"',
    "x9Kq2LmN8pR4sT6v",
    "\n",
    "https://u",
    "@host",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_redact_gives_what_every_rule_gives(text):
    assert redact(text) == redacted_by_every_rule(text)


@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_hinted_rules_are_the_rules_whose_hint_the_text_holds(text):
    folded = text.lower()
    expected = tuple(rule for rule in _RULES if any(hint in folded for hint in rule.hints))

    assert (hinted_rules(folded), hinted_rules(folded)) == (expected, expected)


@pytest.mark.parametrize(("text", "secret"), [p.values for p in FAKES])
def test_redact_secrets_redacts_a_repeated_string_every_time(text, secret):
    item = TextItem(text=text)
    summary = ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=(item, item)),))

    texts = [i.text for i in RedactSecrets()(summary).blocks[0].contents]

    assert [secret in t for t in texts] == [False, False]
