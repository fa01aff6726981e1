"""A scripted run against the loopback OpenAI server: the model recalls a compacted error.

The agent's window is small, so the failed command's output is compacted away;
the model then calls ``recall_search`` and ``recall_expand`` (the real ``openai``
client, real HTTP) and gets the exact error text back.
"""

from __future__ import annotations

import json
import re

import pytest

from forge_app.errors import ToolFailed
from forge_app.files import default_agent
from forge_app.runtime import OpenAIChatModel, Orchestrator, ToolRegistry
from forge_app.store import open_store
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

ERROR = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/tests/test_widgets.py", line 3, in <module>\n'
    "    from widgets.core import frobnicate\n"
    "ImportError: cannot import name 'frobnicate' from 'widgets.core' "
    "(/srv/app/widgets/core.py)\nexit code 1"
)
WINDOW = 4_000


def bash(command: str) -> str:
    """Run a shell command."""
    if command == "pytest tests/test_widgets.py":
        raise ToolFailed(ERROR)
    return f"$ {command}\n" + "\n".join(f"src/module_{n}.py: 120 lines" for n in range(60))


def _respond(body: dict) -> Reply:
    messages = body["messages"]
    last = messages[-1]
    text = json.dumps(messages)
    if last["role"] == "tool" and str(last["content"]).startswith("ref c"):
        return Reply.text("Found it: the import of frobnicate fails.")
    if last["role"] == "tool" and "match 'frobnicate widgets'" in str(last["content"]):
        ref = re.search(r"ref (c[0-9]+|t[0-9]+)", str(last["content"]))
        assert ref is not None
        return Reply.calls(("x1", "recall_expand", json.dumps({"ref": ref.group(1)})))
    if "[archived: ref c" in text:
        return Reply.calls(("s1", "recall_search", '{"query": "frobnicate widgets", "limit": 3}'))
    turn = sum(1 for m in messages if m["role"] == "assistant")
    command = "pytest tests/test_widgets.py" if turn == 0 else f"find src -name '*{turn}*'"
    return Reply.calls((f"b{turn}", "bash", json.dumps({"command": command})))


@pytest.mark.anyio
async def test_store_model_recalls_the_exact_error_of_a_compacted_command(store_url):
    agent = default_agent().model_copy(update={"context_length": WINDOW, "max_turns": 40})
    with FakeOpenAIServer(_respond) as server, open_store(store_url) as store:
        orchestrator = Orchestrator(
            agent,
            OpenAIChatModel(server.client(), "gpt-test"),
            tools=ToolRegistry([bash]),
            context_length=WINDOW,
            store=store,
        )
        conversation = await orchestrator.chat("Make the widget tests pass.")
        requests = server.requests
        archives = store.archives(conversation.id)
    searched = next(
        i for i, r in enumerate(requests) if r["messages"][-1].get("tool_call_id") == "s1"
    )
    expanded = requests[-1]["messages"][-1]
    assert expanded["tool_call_id"] == "x1"
    assert ERROR in expanded["content"]  # verbatim, newlines and quotes included
    assert all(ERROR not in str(m.get("content")) for m in requests[searched]["messages"])
    assert [s["function"]["name"] for s in requests[0]["tools"]] == [
        "bash",
        "recall_search",
        "recall_expand",
    ]
    assert conversation.context.last_message().text.startswith("Found it")
    assert any(ERROR in str(m.get("content")) for r in requests[:searched] for m in r["messages"])
    assert any(a.kind == "span" for a in archives)
