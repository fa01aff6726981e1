"""No secret reaches a summarising model, nor comes back from one into a summary.

The real ``openai`` client against a loopback server: a model that echoes its input,
and one that writes every secret of the session bare (with no label to recognise).
"""

from __future__ import annotations

import json

import pytest

from forge_app.compaction.llm._engine import LLMEngine
from forge_domain import Context, TextMessage, ToolCall, ToolResult
from tests.app.engine_sessions import coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply
from tests.app.secret_fakes import BARE_SECRET_FAKES, SECRET_FAKES

FAKES = (*SECRET_FAKES, *BARE_SECRET_FAKES)
SECTIONS = "## Goal\nDeploy the service.\n\n## Progress\nDone.\n\n"


def _session() -> Context:
    """The coding session with every fake in a command, its output, the agent's text and a
    user message, and the unlabelled ones in the task too."""
    session = list(coding_session())
    task = " ".join(text for _, text, _ in BARE_SECRET_FAKES)
    session[1] = TextMessage.user(f"Fix the failing tests in the parser; {task}")
    added: list = []
    for number, (_, text, _) in enumerate(FAKES):
        run = ToolCall(id=f"leak{number}", name="shell", arguments=json.dumps({"command": text}))
        added += [
            TextMessage.assistant(f"Running: {text}", (run,)),
            ToolResult.of(f"leak{number}", f"ran {text}"),
            TextMessage.user(f"Remember: {text}"),
        ]
    session[3:3] = added
    return Context(session)


def _echo(body: dict) -> Reply:
    return Reply.text(SECTIONS + body["messages"][0]["content"])


def _bare(body: dict) -> Reply:
    return Reply.text(SECTIONS + "\n".join(f"- {secret}" for _, _, secret in FAKES))


async def _compacted(responder) -> tuple[list[str], list[str], str]:
    with FakeOpenAIServer(responder) as server:
        async with server.client() as client:
            engine = LLMEngine(coding_agent(), client=client, cwd="/repo", timeout=5.0)
            outcome = await engine.compress(_session(), mode="forced")
        sent = json.dumps(server.requests)
    summary = next(m for m in outcome.context if m.summary_data is not None).text
    in_request = [form for form, _, secret in FAKES if secret in sent]
    in_summary = [form for form, _, secret in FAKES if secret in summary]
    return in_request, in_summary, outcome.result.engine


@pytest.mark.anyio
@pytest.mark.parametrize("responder", [_echo, _bare], ids=["echo", "bare"])
async def test_llm_secrets_none_of_24_reaches_the_model_or_the_summary(responder) -> None:
    actual = await _compacted(responder)
    assert (len(FAKES), *actual) == (24, [], [], "llm")
