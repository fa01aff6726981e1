"""No adapter touches the disk on the event loop (blockbuster, as LangChain's and pydantic-ai's
own test harnesses and ``langgraph dev`` run it).

Engines are built before the loop (a sync fixture, as a user builds an agent at import) with a
custom template directory, which is read then; each test compacts, in the loop, a history whose
summary does not fit, so that the tiered engine's fallback tier (a new compactor) runs too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_app.adapters import HistoryCompactor
from forge_app.compaction import resolve_engine
from forge_app.summary import TEMPLATE_NAME, default_template_dir
from forge_domain import Agent, Compact, Context, TextMessage, ToolCall, ToolResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def template_dir(tmp_path: Path) -> Path:
    source = default_template_dir() / TEMPLATE_NAME
    (tmp_path / TEMPLATE_NAME).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def conversation(turns: int) -> Context:
    messages: list = [TextMessage.system("You are a coder."), TextMessage.user("Fix divide().")]
    for t in range(turns):
        call = ToolCall(id=f"c{t}", name="read_file", arguments=f'{{"path": "src/p{t}.py"}}')
        messages += [TextMessage.assistant(None, (call,)), ToolResult.of(f"c{t}", "x" * 2_000)]
    return Context(messages)


def tight_agent() -> Agent:
    """Retains 12 messages of 500 tokens each at a 2,000-token threshold: the summary tier
    cannot fit, so the fallback compactor runs."""
    return Agent(id="a", compact=Compact(token_threshold=2_000, retention_window=12))


@pytest.fixture(params=["frame", "llm"])
def compactor(request, template_dir: Path) -> HistoryCompactor:
    agent = tight_agent()
    agent = agent.model_copy(
        update={"compact": agent.compact.model_copy(update={"engine": request.param})}
    )
    # the llm engine without a reachable model: its summary fails fast, the frame stands in
    engine = resolve_engine(
        agent.model_copy(update={"model": "m"}),
        template_dir=template_dir,
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        max_retries=0,
    )
    return HistoryCompactor(agent, engine=engine)


async def test_history_compactor_compacts_with_the_fallback_tier_off_the_disk(compactor):
    compacted = await compactor.compact(conversation(12))
    await compactor.aclose()

    assert compacted is not None
    assert int(compacted.token_count()) <= 2_000
