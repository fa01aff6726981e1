"""Context engines: the structural protocol, the base class's defaults, the outcome builder."""

from __future__ import annotations

import anyio
import pytest

from forge_domain import (
    Agent,
    BaseContextEngine,
    Compact,
    CompactionMode,
    CompactionOutcome,
    CompactionResult,
    Context,
    ContextEngine,
    DelegatingEngine,
    JsonObject,
    TextMessage,
    TokenCount,
    Usage,
    close_engine,
    compaction_outcome,
)
from forge_domain.testing import pattern

AGENT = Agent(id="a", context_length=1_000, compact=Compact(retention_window=2, max_tokens=50))


class NullEngine:
    """Never compacts; records what it was told (the whole protocol, no base class)."""

    name = "null"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def update_model(self, context_length: int | None) -> None:
        self.seen.append(f"model:{context_length}")

    def update_from_response(self, usage: Usage) -> None:
        self.seen.append(f"usage:{usage.total_tokens}")

    def should_compress(self, context: Context, token_count: TokenCount) -> bool:
        return False

    def should_compress_preflight(self, context: Context) -> bool:
        return False

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        return compaction_outcome(context, context, None, engine=self.name)

    def on_session_start(self, session_id: str) -> None:
        self.seen.append(f"start:{session_id}")

    def on_session_end(self, session_id: str) -> None:
        self.seen.append(f"end:{session_id}")

    def on_session_reset(self) -> None:
        self.seen.append("reset")

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        return ()

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        return name


class DropFirstAnswer(BaseContextEngine):
    """The smallest engine: a name and ``compress``; everything else is the default."""

    name = "drop"

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        compacted = context.replace_range(2, 2, [TextMessage.user(f"[{mode}]")])
        return compaction_outcome(context, compacted, (2, 2), engine=self.name)


def test_context_engine_is_satisfied_structurally():
    actual = (
        isinstance(NullEngine(), ContextEngine),
        isinstance(DropFirstAnswer(AGENT), ContextEngine),
        isinstance(object(), ContextEngine),
    )
    assert actual == (True, True, False)


def test_context_engine_unchanged_outcome_is_not_a_change():
    context = pattern("suaua")
    outcome = anyio.run(NullEngine().compress, context)
    actual = (outcome.changed(), outcome.context is context)
    assert actual == (False, True)


def test_base_context_engine_needs_compress():
    class Nameless(BaseContextEngine):
        name = "nameless"

    with pytest.raises(TypeError, match="abstract"):
        Nameless(AGENT)  # type: ignore[abstract]  # the point: compress is abstract


def test_base_context_engine_triggers_use_the_agents_threshold_for_the_window():
    engine = DropFirstAnswer(AGENT)
    small = Context([TextMessage.user("x" * 2_796)])
    large = Context([TextMessage.user("x" * 2_800)])
    before = (engine.threshold, engine.should_compress_preflight(large))
    engine.update_model(10_000)

    actual = (
        before,
        engine.threshold,
        engine.compact.token_threshold,
        engine.should_compress(small, small.token_count()),
        engine.should_compress(large, TokenCount.actual(7_000)),
        engine.should_compress_preflight(large),
    )
    assert actual == ((700, True), 7_000, 7_000, False, True, False)


def test_base_context_engine_defaults_offer_no_tools_and_ignore_the_session():
    engine = DropFirstAnswer(AGENT)
    engine.update_from_response(Usage.reported(prompt_tokens=1, completion_tokens=1))
    engine.on_session_start("c1")
    engine.on_session_end("c1")
    engine.on_session_reset()

    with pytest.raises(NotImplementedError, match="drop engine has no tool 'search'"):
        anyio.run(engine.handle_tool_call, "search", {})
    assert engine.tool_schemas() == ()


def test_base_context_engine_subclass_compacts_with_the_mode_it_is_given():
    outcome = anyio.run(lambda: DropFirstAnswer(AGENT).compress(pattern("suaua"), mode="manual"))

    assert (outcome.context[2].text, outcome.result.compacted_range) == ("[manual]", (2, 2))


@pytest.mark.parametrize(
    ("span", "max_tokens", "expected"),
    [
        (None, None, (5, "not_set", None)),
        ((2, 3), None, (4, "not_set", (2, 3))),
        ((2, 3), 1_000, (4, "met", (2, 3))),
        ((2, 3), 1, (4, "exhausted", (2, 3))),
    ],
    ids=["unchanged keeps the input", "no budget", "budget met", "budget exhausted"],
)
def test_compaction_outcome_reports_the_context_it_keeps(span, max_tokens, expected):
    before = pattern("suaua")
    after = before.replace_range(2, 3, [TextMessage.user("[summary]")])

    outcome = compaction_outcome(before, after, span, engine="e", max_tokens=max_tokens)

    result = outcome.result
    actual = (len(outcome.context), result.budget_status, result.compacted_range)
    assert actual == expected


def test_compaction_outcome_carries_sizes_and_summary_figures():
    before = pattern("suaua")
    after = before.replace_range(2, 3, [TextMessage.user("[summary]")])
    usage = Usage.reported(prompt_tokens=10, completion_tokens=2)

    actual = compaction_outcome(
        before, after, (2, 3), engine="llm", summary_usage=usage, coverage=0.5
    ).result

    assert actual == CompactionResult(
        original_tokens=int(before.token_count()),
        compacted_tokens=int(after.token_count()),
        original_messages=5,
        compacted_messages=4,
        compacted_range=(2, 3),
        summarised_range=(2, 3),
        engine="llm",
        summary_usage=usage,
        coverage=0.5,
    )


class ClosableNull(NullEngine):
    """A NullEngine that holds something to release."""

    async def aclose(self) -> None:
        self.seen.append("closed")


def test_delegating_engine_forwards_every_member_to_the_engine_it_wraps():
    inner = ClosableNull()
    wrapper = DelegatingEngine(inner)
    context = pattern("suaua")

    async def drive() -> tuple[object, ...]:
        wrapper.update_model(8_000)
        wrapper.update_from_response(Usage(total_tokens=TokenCount.actual(42)))
        wrapper.on_session_start("s")
        wrapper.on_session_end("s")
        wrapper.on_session_reset()
        outcome = await wrapper.compress(context, mode="forced")
        answer = await wrapper.handle_tool_call("recall", {})
        await wrapper.aclose()
        return (
            wrapper.name,
            isinstance(wrapper, ContextEngine),
            wrapper.should_compress(context, context.token_count()),
            wrapper.should_compress_preflight(context),
            wrapper.tool_schemas(),
            outcome.context is context,
            answer,
        )

    actual = (anyio.run(drive), inner.seen)
    assert actual == (
        ("null", True, False, False, (), True, "recall"),
        ["model:8000", "usage:42", "start:s", "end:s", "reset", "closed"],
    )


def test_close_engine_skips_an_engine_with_nothing_to_release():
    inner = NullEngine()
    anyio.run(close_engine, inner)
    assert inner.seen == []
