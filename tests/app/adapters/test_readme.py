"""The README's Python examples for the agent loop and the adapters run as written."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


def block(marker: str) -> str:
    """The README's one Python block that contains ``marker``."""
    (found,) = [text for text in BLOCKS if marker in text]
    return found


def test_readme_orchestrator_loop_runs_offline():
    result = subprocess.run(
        [sys.executable, "-c", block("FunctionModel(scripted)")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=ROOT,
    )

    lines = result.stdout.splitlines()
    assert re.fullmatch(r"preflight: \d+ -> \d+ tokens", lines[0]), result.stdout
    assert lines[-1] == "divide() now checks b. (compactions: 1)"


def test_readme_pydantic_ai_snippet_builds_an_agent(monkeypatch):
    from pydantic_ai import Agent

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # the model is built, never called
    namespace: dict[str, object] = {"Agent": Agent}

    exec(block("ForgeHistoryProcessor("), namespace)

    assert [type(c).__name__ for c in namespace["agent"].root_capability.capabilities].count(
        "ProcessHistory"
    ) == 1


def test_readme_langchain_snippet_builds_an_agent():
    from langchain.agents import create_agent

    sys.path.insert(0, str(ROOT / "examples" / "adapters"))
    try:
        from langchain_agent import ScriptedCoder
    finally:
        sys.path.remove(str(ROOT / "examples" / "adapters"))
    namespace: dict[str, object] = {
        "create_agent": create_agent,
        "model": ScriptedCoder(),
        "tools": [],
    }

    exec(block("ForgeCompactionMiddleware("), namespace)

    assert namespace["middleware"].compactor.agent.compaction_threshold() == 20_000


@pytest.mark.anyio
async def test_readme_agents_sdk_snippet_runs_a_session():
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message

    agent = Agent(name="coder", model=ScriptedModel([[assistant_message("Fixed.")]]))
    runner = type("Runner", (), {})
    runner.run = staticmethod(  # type: ignore[attr-defined]
        lambda agent, text, session: Runner.run(
            agent, text, session=session, run_config=RunConfig(tracing_disabled=True)
        )
    )
    namespace: dict[str, object] = {"Agent": Agent, "Runner": runner, "agent": agent}
    code = compile(block("ForgeSession("), "README", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

    await eval(code, namespace)

    assert (namespace["result"].final_output, len(await namespace["session"].get_items())) == (
        "Fixed.",
        2,
    )
