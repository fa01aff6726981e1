"""Engines are chosen by name: built-ins, and third parties through real entry-point metadata."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from forge_app.compaction._frame_engine import FrameEngine
from forge_app.compaction._registry import available_engines, resolve_engine
from forge_app.compaction._tiers import TieredEngine
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.errors import EngineUnavailable, UnknownEngine
from forge_app.runtime import CompactionHandler, Conversation, Hooks
from forge_domain import Agent, Compact, ContextEngine
from forge_domain.testing import pattern, pattern_of

PLUGIN = "forge_test_dag_engine"

README = Path(__file__).parents[2] / "README.md"


def _readme_engine_example() -> str:
    """The README's engine plugin example (the Python block that subclasses the base)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    return next(block for block in blocks if "(BaseContextEngine)" in block)


PLUGIN_SOURCE = '''
from forge_domain import CompactionOutcome, CompactionResult


class DagEngine:
    """A third-party engine implementing the whole protocol, without the base class."""

    name = "dag"

    def __init__(self, agent, *, cwd=None):
        self.agent = agent
        self.cwd = cwd

    def update_model(self, context_length):
        pass

    def update_from_response(self, usage):
        pass

    def should_compress(self, context, token_count):
        return False

    def should_compress_preflight(self, context):
        return False

    async def compress(self, context, *, focus=None, mode="automatic"):
        result = CompactionResult(
            original_tokens=0, compacted_tokens=0, original_messages=0, compacted_messages=0
        )
        return CompactionOutcome(context=context, result=result)

    def on_session_start(self, session_id):
        pass

    def on_session_end(self, session_id):
        pass

    def on_session_reset(self):
        pass

    def tool_schemas(self):
        return ()

    async def handle_tool_call(self, name, arguments):
        return "{}"


class LegacyEngine(DagEngine):
    """Written against the first protocol: ``compress(..., force=...)``."""

    name = "legacy"

    def __init__(self, agent):
        super().__init__(agent)
        self.forced = []

    async def compress(self, context, *, focus=None, force=False):
        self.forced.append(force)
        return await super().compress(context, focus=focus)


def not_an_engine(agent):
    return object()
'''


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A distribution on sys.path declaring two ``forge.engines`` entry points."""
    (tmp_path / PLUGIN).mkdir()
    (tmp_path / PLUGIN / "__init__.py").write_text(PLUGIN_SOURCE)
    (tmp_path / "drop_engine.py").write_text(_readme_engine_example())
    dist_info = tmp_path / "forge_test_dag_engine-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: forge-test-dag-engine\nVersion: 1.0\n"
    )
    (dist_info / "entry_points.txt").write_text(
        textwrap.dedent(
            f"""\
            [forge.engines]
            dag = {PLUGIN}:DagEngine
            legacy = {PLUGIN}:LegacyEngine
            drop = drop_engine:DropEngine
            broken = {PLUGIN}:not_an_engine
            missing = {PLUGIN}:NoSuchEngine
            frame = {PLUGIN}:DagEngine
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop(PLUGIN, None)
    sys.modules.pop("drop_engine", None)


def _agent(engine: str, **fields: object) -> Agent:
    return Agent(id="a", model="m", compact=Compact(engine=engine), **fields)


def test_resolve_engine_loads_a_third_party_engine_with_the_options_it_accepts(installed_plugin):
    engine = resolve_engine(_agent("dag"), cwd="/repo", client=None, timeout=3.0)

    actual = (type(engine).__name__, engine.name, engine.cwd, isinstance(engine, ContextEngine))

    assert actual == ("DagEngine", "dag", "/repo", True)


def test_available_engines_lists_built_ins_and_plugins(installed_plugin):
    actual = available_engines()

    assert actual == ("broken", "dag", "drop", "frame", "legacy", "llm", "missing")


def test_a_plugin_cannot_replace_a_built_in(installed_plugin):
    engine = resolve_engine(_agent("frame"))

    assert (type(engine), type(engine.summary)) == (TieredEngine, FrameEngine)


@pytest.mark.parametrize("name", ["broken", "missing"])
def test_resolve_engine_rejects_a_plugin_that_builds_no_engine(installed_plugin, name):
    with pytest.raises(EngineUnavailable) as raised:
        resolve_engine(_agent(name))

    assert raised.value.engine == name


def test_resolve_engine_unknown_name_lists_what_exists():
    with pytest.raises(UnknownEngine) as raised:
        resolve_engine(_agent("nope"))

    assert (raised.value.name, "frame" in raised.value.available) == ("nope", True)


def test_resolve_engine_builds_the_llm_engine_in_tiers():
    engine = resolve_engine(_agent("llm"), api_key="k", base_url="http://127.0.0.1:9/v1")

    assert (engine.name, type(engine), type(engine.summary)) == ("llm", TieredEngine, LLMEngine)


def test_the_plugin_is_gone_after_the_test():
    assert "dag" not in available_engines()


def test_the_readme_engine_plugin_runs_under_the_handler(installed_plugin):
    agent = _agent("drop", context_length=1_000).model_copy(
        update={"compact": Compact(engine="drop", retention_window=2)}
    )
    engine = resolve_engine(agent)
    handler = CompactionHandler(engine, agent)
    hooks = Hooks(builtins=[("compaction", handler)])
    conversation = Conversation(id="c", agent=agent, context=pattern("suauaua"), hooks=hooks)

    result = anyio.run(handler.compact, conversation, "threshold")

    actual = (
        type(engine).__name__,
        result.compacted_range if result else None,
        pattern_of(conversation.context),
        conversation.context[2].text,
    )
    assert actual == ("DropEngine", (2, 4), "suuua", "[3 earlier messages dropped]")


def test_a_plugin_written_for_the_force_flag_still_compacts(installed_plugin):
    agent = _agent("legacy")
    context = pattern("suaua")

    with capture_logs() as logs:
        engine = resolve_engine(agent)
    anyio.run(lambda: engine.compress(context, mode="forced"))
    anyio.run(lambda: engine.compress(context))

    actual = (engine.name, engine.inner.forced, [log["event"] for log in logs])
    assert actual == ("legacy", [True, False], ["engine_protocol_outdated"])
