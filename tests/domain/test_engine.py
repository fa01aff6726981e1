"""The ContextEngine protocol is structural: any object with its members satisfies it."""

from __future__ import annotations

import anyio

from forge_domain import (
    CompactionOutcome,
    CompactionResult,
    Context,
    ContextEngine,
    JsonObject,
    TokenCount,
    Usage,
)
from forge_domain.testing import pattern


class NullEngine:
    """Never compacts; records what it was told."""

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
        self, context: Context, *, focus: str | None = None, force: bool = False
    ) -> CompactionOutcome:
        size = context.token_count_approx()
        result = CompactionResult(
            original_tokens=size,
            compacted_tokens=size,
            original_messages=len(context),
            compacted_messages=len(context),
        )
        return CompactionOutcome(context=context, result=result)

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


def test_context_engine_is_satisfied_structurally():
    actual = (isinstance(NullEngine(), ContextEngine), isinstance(object(), ContextEngine))
    assert actual == (True, False)


def test_context_engine_unchanged_outcome_is_not_a_change():
    context = pattern("suaua")
    outcome = anyio.run(NullEngine().compress, context)
    actual = (outcome.changed(), outcome.context is context)
    assert actual == (False, True)
