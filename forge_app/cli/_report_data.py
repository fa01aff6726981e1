"""What ``forge-compact report`` shows, gathered from one replay.

The replay is ``replay``'s (:func:`~forge_app.cli.replay.replay_turns`), observed by
:class:`_Capture`, which keeps the context before and after every compaction (and,
with a store, the archives the compaction wrote). A compaction's span is then read
by comparing the two contexts: a message of the span missing from the context after
is *pruned* when its tool result is still there in another form (a placeholder),
else *summarised*; the summaries are the summary messages the compaction added.

Every text taken from the session is redacted by the summary's rules
(:func:`~forge_app.summary.redact`) here, before the page is written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from forge_app.cli.replay import replay_turns
from forge_app.compaction import is_summary_message
from forge_app.evaluation import (
    FactCheck,
    PromptCost,
    PromptCostSum,
    extract_facts,
    fact_checks,
    prompt_cost,
    uncompacted_requests,
)
from forge_app.files._transcripts import Transcript
from forge_app.runtime import Conversation, TurnRecord, hookimpl
from forge_app.store import SessionStore
from forge_app.summary import redact
from forge_domain import (
    DEFAULT_CONTEXT_WINDOW,
    Agent,
    CompactionResult,
    Context,
    ContextMessage,
    TextMessage,
    TokenMeter,
    ToolResult,
)

__all__ = ["ArchivedOriginal", "CompactionView", "ReportData", "SpanMessage", "collect"]

LINE_CHARS = 160
"""The most characters of a message's first line a span shows."""
SUMMARY_CHARS = 30_000
"""The most characters of a summary the page shows (a frame summary is far shorter)."""
FACT_CHARS = 400
"""The most characters of a fact the page shows."""
ORIGINAL_CHARS = 20_000
"""The most characters of an archived original the page holds (the rest is cut, marked)."""


def shown(text: str, limit: int) -> str:
    """``text`` redacted, then cut to ``limit`` characters with a marker saying how much."""
    text = redact(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


@dataclass(frozen=True, slots=True)
class SpanMessage:
    """One message a compaction took out of the context, as the card lists it."""

    index: int
    """Its index in the context before the compaction."""
    role: str
    first_line: str
    """Its first non-empty line (a call's name and arguments when it has no text), redacted."""


@dataclass(frozen=True, slots=True)
class ArchivedOriginal:
    """One archive a compaction wrote to the store, with the originals it stands for."""

    ref: str
    kind: str
    originals: tuple[tuple[int, str, str], ...]
    """``(seq, role, text)`` of each original message, the text redacted and bounded."""


@dataclass(frozen=True, slots=True)
class CompactionView:
    """One compaction: its figures, what it took out, the summary it put in."""

    number: int
    """1-based, in the order they ran."""
    turn: int
    result: CompactionResult
    summarised: tuple[SpanMessage, ...]
    pruned: tuple[SpanMessage, ...]
    summaries: tuple[str, ...]
    """The texts of the summary messages it added, as the model saw them (redacted)."""
    archives: tuple[ArchivedOriginal, ...] = ()

    @property
    def tier(self) -> str:
        """``prune`` when pruning old tool outputs was enough, else ``summary``."""
        return "prune" if self.result.engine == "prune" else "summary"


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows about one replayed session."""

    session: str
    agent: str
    engine: str
    window: int
    threshold: int
    turns: Sequence[TurnRecord]
    """Every replayed turn (``replay --json-metrics``'s figures; ``replay_turn()`` gives
    a turn's ``ReplayTurn``)."""
    compactions: tuple[CompactionView, ...]
    facts: tuple[FactCheck, ...]
    cost: PromptCost
    """Prompt tokens of the replayed requests (``eval``'s cost model)."""
    cost_uncompacted: PromptCost
    """The same for the recording (no compaction)."""
    discount: float
    stored_as: str | None = None
    """The conversation id in the store, when there is one."""


def _role(message: ContextMessage) -> str:
    return "tool" if isinstance(message, ToolResult) else str(message.role)


def _first_line(message: ContextMessage) -> str:
    text = message.text.strip()
    if not text and isinstance(message, TextMessage) and message.tool_calls:
        call = message.tool_calls[0]
        text = f"{call.name} {call.arguments}"
    line = next((line for line in text.splitlines() if line.strip()), "")
    return shown(line.strip(), LINE_CHARS)


def is_summary(message: ContextMessage) -> bool:
    """A summary message, or a message carrying a summary's frame (as ``eval`` reads them)."""
    return is_summary_message(message) or (
        isinstance(message, TextMessage) and message.summary_data is not None
    )


def split_span(
    before: Context, after: Context
) -> tuple[tuple[SpanMessage, ...], tuple[SpanMessage, ...], tuple[str, ...]]:
    """The messages of ``before`` gone from ``after``, summarised and pruned, and the
    summaries ``after`` gained (messages are compared by identity)."""
    kept = {id(m) for m in after}
    results_after = {m.call_id for m in after if isinstance(m, ToolResult)}
    summarised: list[SpanMessage] = []
    pruned: list[SpanMessage] = []
    for index, message in enumerate(before):
        if id(message) in kept:
            continue
        item = SpanMessage(index, _role(message), _first_line(message))
        in_place = isinstance(message, ToolResult) and message.call_id in results_after
        (pruned if in_place else summarised).append(item)
    old = {id(m) for m in before}
    summaries = tuple(
        shown(m.text, SUMMARY_CHARS) for m in after if id(m) not in old and is_summary(m)
    )
    return tuple(summarised), tuple(pruned), summaries


def _original_text(body: str) -> str:
    try:
        value = json.loads(body)
    except ValueError:
        return body
    content = value.get("content") if isinstance(value, dict) else None
    if isinstance(content, str) and not (isinstance(value, dict) and value.get("tool_calls")):
        return content
    return json.dumps(value, ensure_ascii=False, indent=1)


@dataclass
class _Captured:
    before: Context
    after: Context
    result: CompactionResult
    archives: tuple[ArchivedOriginal, ...]


@dataclass
class _Capture:
    """A plugin keeping the context before and after each compaction (and its archives)."""

    store: SessionStore | None = None
    name: str = "report"
    before: Context = field(default_factory=Context)
    captured: list[_Captured] = field(default_factory=list)
    _archived: int = 0

    @hookimpl
    def forge_on_compaction_start(self, conversation: Conversation) -> None:
        self.before = conversation.context

    @hookimpl
    def forge_on_compaction_end(self, conversation: Conversation, result: CompactionResult) -> None:
        if result.compacted_range is not None:
            archives = self._new_archives(conversation.id)
            self.captured.append(_Captured(self.before, conversation.context, result, archives))

    def _new_archives(self, conversation_id: str) -> tuple[ArchivedOriginal, ...]:
        if self.store is None:
            return ()
        written = self.store.archives(conversation_id)[self._archived :]
        self._archived += len(written)
        return tuple(
            ArchivedOriginal(
                info.ref,
                info.kind,
                tuple(
                    (m.seq, m.role, shown(_original_text(m.body), ORIGINAL_CHARS))
                    for m in self.store.expand(conversation_id, info.ref)
                ),
            )
            for info in written
        )


def _views(turns: Sequence[TurnRecord], captured: Sequence[_Captured]) -> list[CompactionView]:
    """One view per compaction of ``turns`` (those that changed the context), in order."""
    results = [(t.turn, c) for t in turns for c in t.compactions if c.compacted_range is not None]
    views = []
    for number, ((turn, result), seen) in enumerate(zip(results, captured, strict=True), 1):
        summarised, pruned, summaries = split_span(seen.before, seen.after)
        views.append(
            CompactionView(number, turn, result, summarised, pruned, summaries, seen.archives)
        )
    return views


async def collect(
    transcript: Transcript,
    agent: Agent,
    *,
    session: str,
    store: SessionStore | None = None,
    meter: TokenMeter | None = None,
    discount: float = 0.1,
) -> ReportData:
    """Replay ``transcript`` under ``agent`` and gather what the page shows."""
    capture = _Capture(store)
    cost = PromptCostSum()  # added up as each request is sent: the replay keeps none
    turns, replayed = await replay_turns(
        transcript, agent, store, meter, observers=[(capture.name, capture)], on_request=[cost.add]
    )
    messages = tuple(transcript.context)
    final = replayed.conversation.context
    return ReportData(
        session=session,
        agent=agent.id,
        engine=agent.compact.engine,
        window=agent.context_length or DEFAULT_CONTEXT_WINDOW,
        threshold=agent.compaction_threshold(),
        turns=turns,
        compactions=tuple(_views(turns, capture.captured)),
        facts=tuple(
            replace(fact, text=shown(fact.text, FACT_CHARS))
            for fact in fact_checks(extract_facts(messages), final)
        ),
        cost=cost.cost(discount=discount),
        cost_uncompacted=prompt_cost(uncompacted_requests(messages), discount=discount),
        discount=discount,
        stored_as=replayed.conversation.id if store is not None else None,
    )
