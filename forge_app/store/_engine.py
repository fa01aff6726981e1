"""``ArchivingEngine``: any context engine, plus the session store.

It wraps the conversation's engine (the seam the handler and the tools already
use), so nothing else changes when a store is configured:

- every compaction the wrapped engine makes is archived before it is applied
  (:meth:`ConversationRecorder.compacted`), and the context it returns names the
  refs of what it replaced; if the store cannot write, the compaction fails and
  the conversation stays as it was;
- the model is offered two tools, ``recall_search`` and ``recall_expand``, over
  this conversation's archived history; each use is logged (``recall_searched``,
  ``recall_expanded``) and counted in :attr:`ArchivingEngine.recall_uses`;
- the engine's state (recall counts, the summary model's cooldown) is saved with
  each turn and restored on resume.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import structlog

from forge_app.errors import InvalidSearchQuery, ToolFailed
from forge_app.store._recall import message_block, paginate, render_hits, render_page
from forge_app.store._recorder import ConversationRecorder
from forge_domain import (
    CompactionMode,
    CompactionOutcome,
    Context,
    ContextEngine,
    DelegatingEngine,
    JsonObject,
)
from forge_domain._messages import CHARS_PER_TOKEN

__all__: list[str] = []

_log = structlog.get_logger("forge_app")

RECALL_PAGE_FRACTION = 0.1
"""A page of ``recall_expand`` holds at most this fraction of the model's window."""
MIN_PAGE_CHARS = 2_000
"""The smallest page, whatever the window."""
DEFAULT_WINDOW = 128_000
"""The window assumed when the model's is unknown."""
PAGE_FRAME_CHARS = 200
"""Characters of a page kept for its header and the pointer to the next page."""
SEARCH_RESULTS = 10
"""Most hits ``recall_search`` returns."""
SEARCH = "recall_search"
EXPAND = "recall_expand"

_SCHEMAS: tuple[JsonObject, ...] = (
    {
        "type": "function",
        "function": {
            "name": SEARCH,
            "description": (
                "Search this conversation's archived history: messages that compaction "
                "summarised or pruned. Returns refs and snippets; read one with recall_expand."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to find."},
                    "limit": {
                        "type": "integer",
                        "description": f"Most results (1-{SEARCH_RESULTS}).",
                        "default": 5,
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": EXPAND,
            "description": (
                "Show the original messages behind an archive ref named in the context "
                "(e.g. c3 for a summarised span, t7 for a pruned tool output), one page at a time."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "ref": {"type": "string", "description": "The ref, e.g. c3 or t7."},
                    "page": {"type": "integer", "description": "1-based page.", "default": 1},
                },
                "required": ["ref"],
                "additionalProperties": False,
            },
        },
    },
)


@runtime_checkable
class _Cooldown(Protocol):
    cooldown_until: float
    fallback_streak: int
    clock: Callable[[], float]


def _guard(engine: object) -> _Cooldown | None:
    """The summary-call cooldown of ``engine`` (or of the engine it wraps), if it has one."""
    for candidate in (engine, getattr(engine, "summary", None)):
        guard = getattr(candidate, "guard", None)
        if isinstance(guard, _Cooldown):
            return guard
    return None


class ArchivingEngine(DelegatingEngine):
    """A :class:`~forge_domain.ContextEngine` that archives ``inner``'s compactions and offers
    the recall tools; every other member is forwarded to ``inner``."""

    def __init__(self, inner: ContextEngine, recorder: ConversationRecorder) -> None:
        """Wrap ``inner`` for the conversation ``recorder`` stores."""
        super().__init__(inner)
        self.recorder = recorder
        self.window: int | None = None
        self.recall_uses: Counter[str] = Counter()
        """Calls of each recall tool so far."""
        recorder.engine_state = self.state

    # -- the recall tools ------------------------------------------------------------

    @property
    def page_chars(self) -> int:
        """Most characters one ``recall_expand`` answer holds (header included)."""
        window = self.window or DEFAULT_WINDOW
        return max(MIN_PAGE_CHARS, int(window * RECALL_PAGE_FRACTION) * CHARS_PER_TOKEN)

    def tool_schemas(self) -> tuple[JsonObject, ...]:
        """The wrapped engine's tools and the two recall tools."""
        return (*self.inner.tool_schemas(), *_SCHEMAS)

    async def handle_tool_call(self, name: str, arguments: JsonObject) -> str:
        """Answer a recall tool; anything else goes to the wrapped engine.

        Raises:
            ToolFailed: bad arguments or a page out of range (the model sees why).
            UnknownRef: the ref names no archive of this conversation.
        """
        if name == SEARCH:
            return self.search(arguments)
        if name == EXPAND:
            return self.expand(arguments)
        return await self.inner.handle_tool_call(name, arguments)

    def search(self, arguments: JsonObject) -> str:
        """``recall_search(query, limit)``: bounded hits with refs and snippets."""
        query = arguments.get("query")
        limit = arguments.get("limit", 5)
        if not isinstance(query, str) or not query.strip():
            raise ToolFailed("recall_search needs a non-empty string 'query'")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolFailed(f"recall_search 'limit' must be a positive integer, got {limit!r}")
        recorder = self.recorder
        try:
            hits = recorder.store.search(
                query,
                conversation_id=recorder.conversation_id,
                limit=min(limit, SEARCH_RESULTS),
                archived_only=True,
                redacted=True,
            )
        except InvalidSearchQuery as exc:
            raise ToolFailed(f"recall_search {exc}") from exc
        self.recall_uses[SEARCH] += 1
        _log.info(
            "recall_searched",
            conversation_id=recorder.conversation_id,
            query=query[:200],
            hits=len(hits),
        )
        return render_hits(query, hits)

    def expand(self, arguments: JsonObject) -> str:
        """``recall_expand(ref, page)``: one page of the originals behind ``ref``."""
        ref = arguments.get("ref")
        page = arguments.get("page", 1)
        if not isinstance(ref, str):
            raise ToolFailed("recall_expand needs a string 'ref' such as 'c3'")
        if not isinstance(page, int) or isinstance(page, bool):
            raise ToolFailed(f"recall_expand 'page' must be an integer, got {page!r}")
        recorder = self.recorder
        messages = recorder.store.expand(recorder.conversation_id, ref.strip())
        body_chars = self.page_chars - PAGE_FRAME_CHARS
        pages = paginate([message_block(m) for m in messages], body_chars)
        if not 1 <= page <= len(pages):
            raise ToolFailed(f"ref {ref} has {len(pages)} page(s); page {page} does not exist")
        self.recall_uses[EXPAND] += 1
        _log.info(
            "recall_expanded",
            conversation_id=recorder.conversation_id,
            ref=ref,
            page=page,
            pages=len(pages),
        )
        first = messages[0].seq if messages else 0
        last = messages[-1].seq if messages else 0
        return render_page(ref.strip(), page, pages, first, last)

    # -- compaction ------------------------------------------------------------------

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Compact with the wrapped engine, archive what it replaced, name the refs.

        Raises:
            StoreError: the archive could not be written (the context is not replaced).
        """
        outcome = await self.inner.compress(context, focus=focus, mode=mode)
        if not outcome.changed():
            return outcome
        named = self.recorder.compacted(
            context,
            outcome.context,
            engine=outcome.result.engine,
            reason=mode,
            result=outcome.result,
        )
        result = outcome.result.model_copy(
            update={
                "compacted_tokens": int(named.token_count()),
                "compacted_messages": len(named),
            }
        )
        return CompactionOutcome(context=named, result=result)

    # -- state -----------------------------------------------------------------------

    def state(self) -> JsonObject:
        """What a resumed conversation needs back: recall counts and the summary cooldown."""
        out: JsonObject = {"recall_uses": dict(self.recall_uses)}
        guard = _guard(self.inner)
        if guard is not None:
            out["cooldown_remaining"] = max(0.0, guard.cooldown_until - guard.clock())
            out["fallback_streak"] = guard.fallback_streak
        return out

    def restore(self, state: JsonObject) -> None:
        """Take back what :meth:`state` saved."""
        uses = state.get("recall_uses")
        if isinstance(uses, dict):
            self.recall_uses.update({k: v for k, v in uses.items() if isinstance(v, int)})
        guard = _guard(self.inner)
        remaining = state.get("cooldown_remaining")
        streak = state.get("fallback_streak")
        if guard is not None and isinstance(remaining, int | float) and remaining > 0:
            guard.cooldown_until = guard.clock() + float(remaining)
        if guard is not None and isinstance(streak, int):
            guard.fallback_streak = streak

    # -- the window ------------------------------------------------------------------

    def update_model(self, context_length: int | None) -> None:
        """Forwarded; the window also sizes the recall pages."""
        self.window = context_length
        super().update_model(context_length)
