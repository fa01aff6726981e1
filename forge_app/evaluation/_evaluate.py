"""``evaluate``: replay a session under an agent and measure what the promise is worth.

One replay (the real orchestrator, handler and engine; each recorded response
served in turn) of a transcript under an agent with a given window, and:

- validity of the final context (``find_violations``);
- the peak request as a fraction of the window and of the threshold;
- compactions, ineffective ones, the largest summary;
- retention of the session's facts in the final context (:mod:`._facts`);
- prompt tokens billed with a prompt cache, with and without compaction
  (:mod:`._cost`), and what a summarising model was sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from forge_app.compaction import is_summary_message
from forge_app.errors import ContextDoesNotFit
from forge_app.evaluation._cost import PromptCostSum, prompt_cost, uncompacted_requests
from forge_app.evaluation._facts import extract_facts
from forge_app.evaluation._retention import retention
from forge_app.runtime import Replay, hookimpl
from forge_domain import (
    CHARS_METER,
    Agent,
    CompactionResult,
    Context,
    ContextMessage,
    TextMessage,
    TokenMeter,
)
from forge_domain.formats import find_violations

__all__ = ["SessionEval", "evaluate"]


class SessionEval(BaseModel):
    """The figures of one session replayed under one agent and window."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: str
    window: int
    threshold: int
    turns: int
    valid: bool
    """The final context breaks no provider rule."""
    stopped: str | None
    """Why the replay stopped early (a context that cannot fit), None when it ran through."""
    peak_request: int
    compactions: int
    ineffective: int
    largest_summary: int
    summary_calls: int
    """Calls to a summarising model (``llm`` engine)."""
    summary_prompt_tokens: int
    """Prompt tokens those calls used."""
    task: tuple[int, int]
    asks: tuple[int, int]
    modified_paths: tuple[int, int]
    failures: tuple[int, int]
    last_error: tuple[int, int]
    billed: float
    """Prompt tokens billed over the session with compaction (cache discount applied)."""
    billed_uncompacted: float
    """The same without compaction (every request is the recording so far)."""


@dataclass
class _Watch:
    name: str = "evaluation"
    results: list[CompactionResult] = field(default_factory=list)
    ineffective: int = 0

    @hookimpl
    def forge_on_compaction_end(self, result: CompactionResult) -> None:
        if result.compacted_range is not None:
            self.results.append(result)

    @hookimpl
    def forge_on_compaction_suspended(self) -> None:
        self.ineffective += 1


def _is_summary(message: ContextMessage) -> bool:
    """A frame summary, or a message carrying a summary's frame (the ``llm`` engine's
    summary can be an assistant turn, or merged ahead of one, to keep turns alternating)."""
    return is_summary_message(message) or (
        isinstance(message, TextMessage) and message.summary_data is not None
    )


def _largest_summary(messages: Iterable[ContextMessage], largest: int = 0) -> int:
    for message in messages:
        if _is_summary(message):
            largest = max(largest, message.approx_tokens)
    return largest


class _Requests:
    """What the evaluation reads of the requests, added up as each is sent (the replay
    keeps none): the peak, the largest summary sent, the prompt cost."""

    def __init__(self, meter: TokenMeter) -> None:
        self._meter = meter
        self.peak = 0
        self.largest_summary = 0
        self.cost = PromptCostSum()

    def __call__(self, context: Context) -> None:
        self.peak = max(self.peak, int(self._meter.count(context)))
        # a message shared with the request before (its cached prefix) was looked at there
        new = context[self.cost.add(context) :]
        self.largest_summary = _largest_summary(new, self.largest_summary)


async def evaluate(
    transcript: Context | Sequence[ContextMessage],
    agent: Agent,
    *,
    window: int,
    session: str = "session",
    cache_discount: float = 0.1,
    meter: TokenMeter = CHARS_METER,
) -> SessionEval:
    """Replay ``transcript`` under ``agent`` with a ``window``-token model and measure it.

    ``meter`` counts for the triggers, the window and the peak request (default chars/4).
    """
    messages = tuple(transcript)
    watch = _Watch()
    replay = Replay(
        messages, agent, plugins=[(watch.name, watch)], context_length=window, meter=meter
    )
    requests = _Requests(meter.fresh())
    replay.on_request(requests)
    turns = 0
    stopped: str | None = None
    try:
        async for turn in replay.records():
            turns = turn.turn
    except ContextDoesNotFit as exc:
        stopped = f"turn {turns + 1}: {exc}"
    final = replay.conversation.context
    kept = retention(extract_facts(messages), final)
    usage = [r.summary_usage for r in watch.results if r.summary_usage is not None]
    return SessionEval(
        session=session,
        window=window,
        threshold=agent.compaction_threshold(window),
        turns=turns,
        valid=not find_violations(final),
        stopped=stopped,
        peak_request=requests.peak,
        compactions=len(watch.results),
        ineffective=watch.ineffective,
        largest_summary=_largest_summary(final, requests.largest_summary),
        summary_calls=len(usage),
        summary_prompt_tokens=sum(int(u.prompt_tokens) for u in usage),
        task=kept.task,
        asks=kept.asks,
        modified_paths=kept.modified_paths,
        failures=kept.failures,
        last_error=kept.last_error,
        billed=requests.cost.cost(discount=cache_discount).billed,
        billed_uncompacted=prompt_cost(
            uncompacted_requests(messages), discount=cache_discount
        ).billed,
    )
