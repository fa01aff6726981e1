"""Tiers: prune first, summarise if still over budget, fall back if still over."""

from __future__ import annotations

import pytest

from forge_app.compaction import resolve_engine
from forge_app.compaction._compactor import is_summary_message
from forge_app.compaction._frame_engine import FrameEngine
from forge_app.compaction._pruning import PRUNED_MARKER
from forge_app.compaction._tiers import TieredEngine
from forge_app.files import read_transcript
from forge_domain import Agent, Compact, Context, Role, TextMessage, ToolResult
from forge_domain.formats import find_violations
from forge_domain.tools import ToolCatalog
from tests.app.engine_sessions import coding_agent, coding_session
from tests.sessions import session_paths

pytestmark = pytest.mark.anyio


def _tiered(**compact: object) -> TieredEngine:
    agent = coding_agent("frame", **compact)
    return TieredEngine(FrameEngine(agent, cwd="/repo"), agent, cwd="/repo")


def _chatty(context: Context) -> Context:
    """The session with long assistant texts, which pruning cannot shrink."""
    return Context(
        [
            TextMessage.assistant("thinking " * 300, m.tool_calls)
            if isinstance(m, TextMessage) and m.tool_calls
            else m
            for m in context
        ]
    )


def _users(context: Context) -> list[str]:
    return [m.text for m in context if m.has_role(TextMessage.user("").role)]


async def test_pruning_alone_when_it_brings_the_context_under_budget():
    fixture = coding_session()

    outcome = await _tiered().compress(fixture)
    actual = (
        outcome.result.engine,
        len(outcome.context),
        _users(outcome.context) == _users(fixture),
        sum(m.text.startswith(PRUNED_MARKER) for m in outcome.context),
        outcome.result.compacted_range,
        find_violations(outcome.context),
    )

    assert actual == ("prune", len(fixture), True, 4, (6, 18), [])


def _unflagged(context: Context) -> Context:
    """The session with its failed results unflagged: only their output says they failed."""
    return Context(
        [
            ToolResult.of(m.call_id, "<returncode>1</returncode>\n" + m.text)
            if isinstance(m, ToolResult) and m.is_error
            else m
            for m in context
        ]
    )


@pytest.mark.parametrize(
    ("inference", "expected"), [("output", 4), ("none", 0)], ids=["output", "none"]
)
async def test_pruning_reads_outcomes_with_the_engines_catalog(inference, expected):
    agent = coding_agent("frame")
    catalog = ToolCatalog.default().model_copy(update={"failure_inference": inference})
    engine = TieredEngine(FrameEngine(agent, cwd="/repo"), agent, cwd="/repo", catalog=catalog)

    outcome = await engine.compress(_unflagged(coding_session()))
    actual = sum(" -> failed" in m.text for m in outcome.context if isinstance(m, ToolResult))

    assert (outcome.result.engine, actual) == ("prune", expected)


async def test_the_summary_tier_runs_when_pruning_is_not_enough():
    fixture = _chatty(coding_session())

    outcome = await _tiered().compress(fixture)
    actual = (
        outcome.result.engine,
        sum(is_summary_message(m) for m in outcome.context),
        int(outcome.context.token_count()) < 2_800,
        find_violations(outcome.context),
    )

    assert actual == ("frame", 1, True, [])


async def test_a_forced_compaction_summarises_even_when_pruning_was_enough():
    outcome = await _tiered().compress(coding_session(), mode="forced")

    assert (outcome.result.engine, sum(is_summary_message(m) for m in outcome.context)) == (
        "frame",
        1,
    )


async def test_the_fallback_meets_a_tight_max_tokens():
    fixture = _chatty(coding_session())

    outcome = await _tiered(max_tokens=400).compress(fixture)
    start, end = outcome.result.compacted_range
    actual = (
        outcome.result.budget_status,
        int(outcome.context.token_count()) <= 400,
        0 <= start <= end < len(fixture),
        find_violations(outcome.context),
    )

    assert actual == ("met", True, True, [])


async def test_nothing_to_do_returns_the_input():
    fixture = Context([TextMessage.system("s"), TextMessage.user("hi")])

    outcome = await _tiered().compress(fixture)

    assert (outcome.context is fixture, outcome.changed()) == (True, False)


@pytest.mark.parametrize("path", session_paths(), ids=lambda path: path.stem)
async def test_a_threshold_below_the_task_never_cuts_the_task_when_the_window_has_room(path):
    # The target is then out of reach; cutting may shorten other texts, but the task is cut
    # only to meet the window (128K here), and a summary is never mistaken for the task.
    context = read_transcript(path).context
    task = next(m for m in context if m.has_role(Role.USER) and not is_summary_message(m))
    agent = Agent(id="a", compact=Compact(token_threshold=max(context[1].approx_tokens // 2, 1)))
    engine = resolve_engine(agent, context_length=agent.context_length)

    outcome = await engine.compress(context, mode="forced")

    kept = [m for m in outcome.context if isinstance(m, TextMessage) and m.text == task.text]
    assert (len(kept), find_violations(outcome.context)) == (1, [])
