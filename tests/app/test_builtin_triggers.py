"""A command that only asks whether a built-in engine fires gets the engine's answer.

``forge-compact compact`` decides "no trigger fires" with ``BuiltInTriggers`` and builds
no engine (start-up time); it must answer as the engine ``resolve_engine`` builds.
"""

from __future__ import annotations

import pytest

from forge_app.compaction._registry import BUILT_IN, resolve_engine
from forge_app.compaction._tiers import TieredEngine
from forge_app.compaction._triggers import BUILT_IN_ENGINES, BuiltInTriggers
from forge_domain import Agent, BaseContextEngine, Compact, Context, TextMessage


def _agent(engine: str, **compact: object) -> Agent:
    return Agent(id="a", model="m", compact=Compact(engine=engine, **compact))


def _context(messages: int, chars: int) -> Context:
    turns = [TextMessage.user("u" * chars), TextMessage.assistant("a" * chars)]
    return Context(turns[i % 2] for i in range(messages))


CONFIGS = [
    {},
    {"token_threshold": 500},
    {"turn_threshold": 3},
    {"message_threshold": 10},
    {"token_threshold": 50_000, "message_threshold": 5},
]
CONTEXTS = [(2, 10), (6, 200), (12, 100), (40, 400), (400, 1_000)]


@pytest.mark.parametrize("engine", BUILT_IN_ENGINES)
@pytest.mark.parametrize("config", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_built_in_triggers_answer_as_the_built_engine(engine, config):
    agent = _agent(engine, **config)
    built = resolve_engine(agent)
    triggers = BuiltInTriggers(agent)
    contexts = [_context(n, chars) for n, chars in CONTEXTS]

    actual = [triggers.should_compress(c, c.token_count()) for c in contexts]

    assert actual == [built.should_compress(c, c.token_count()) for c in contexts]
    assert (triggers.name, triggers.threshold) == (built.name, built.threshold)


def test_the_built_in_names_are_the_registry_s():
    assert tuple(BUILT_IN) == BUILT_IN_ENGINES


def test_the_tiered_engine_keeps_the_base_triggers():
    """What ``BuiltInTriggers`` relies on: an override here must update it too."""
    kept = [
        getattr(TieredEngine, name) is getattr(BaseContextEngine, name)
        for name in ("should_compress", "should_compress_preflight")
    ]

    assert kept == [True, True]
