"""The ``llm`` context engine: a model writes the summary, the frame keeps it honest.

One compaction:

1. find the span between the protected head (the system prompt and the task,
   which are never summarised) and the protected tail (a token budget, never
   splitting a call from its results);
2. build the deterministic frame of the span as the frame engine does, and ask
   the summary model for a sectioned summary (or to update the previous one)
   from the frame of the span's own turns (within a third of the summary budget),
   excerpts of the latest turns and of the last error output (a sixth) and
   the start of the task, all redacted: a fraction of the raw turns' size (the
   serialised turns go instead when they are the smaller input);
3. check the summary against the frame and the head (the task, modified files,
   failed operations with their error line, pending asks), log what was
   checked and append whatever it missed;
4. splice it in behind a reference-only prefix, carrying the frame, in the role
   that keeps user and assistant turns alternating (merged ahead of the next
   message when no role does), every tool call still answered.

When the model cannot deliver (timeout, 429, 5xx, empty or malformed output, no
summary within the call's total deadline, a summary over twice its budget) the
frame of the span (within the summary budget) is used instead and the engine
cools down; credentials that are refused abort with
:class:`SummaryAuthFailed`, the context unchanged.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import structlog

if TYPE_CHECKING:
    from openai import AsyncOpenAI

from forge_app.compaction._compactor import ensure_valid_output
from forge_app.compaction.llm._coverage import check_coverage, facts_of, with_verified_facts
from forge_app.compaction.llm._guard import CompactionGuard
from forge_app.compaction.llm._prompt import (
    SECTIONS,
    framed,
    record_material,
    summary_prompt,
    turns_material,
)
from forge_app.compaction.llm._serialize import (
    SerializationLimits,
    serialize_excerpts,
    serialize_span,
)
from forge_app.compaction.llm._span import Span, SpanFrame, find_span, frame_of
from forge_app.compaction.llm._splice import splice_summary
from forge_app.errors import EngineUnavailable, SummaryAuthFailed
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary._frame import SUMMARY_MARKER, SUMMARY_PREAMBLE, SummaryFrame
from forge_app.summary._redaction import redact_for_model, secrets_in
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import (
    DEFAULT_CONTEXT_WINDOW,
    Agent,
    BaseContextEngine,
    CompactionMode,
    CompactionOutcome,
    Context,
    ContextMessage,
    TextMessage,
    ToolResult,
    Usage,
    compaction_outcome,
    note_event,
    observe_summary_call,
)
from forge_domain._messages import CHARS_PER_TOKEN
from forge_domain.formats import ensure_valid
from forge_domain.summary import ContextSummary, accumulated_usage, carry_reasoning
from forge_domain.tools import ToolCatalog

__all__ = ["LLMEngine"]

SUMMARY_BASE_URL_ENV = "FORGE_SUMMARY_BASE_URL"
"""Environment variable naming the summary model's endpoint (a cheap model's server)."""
SUMMARY_API_KEY_ENV = "FORGE_SUMMARY_API_KEY"
"""Environment variable holding the summary model's API key."""

_log = structlog.get_logger()
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_MIN_SECTIONS = 2
_SUMMARY_CEILING = 10_000
_FRAMING_TOKENS = len(framed("")) // CHARS_PER_TOKEN
"""What the prefix and end marker cost: a smaller span is not worth summarising."""
_RECORD_SHARE = 1 / 3
"""The summariser's record of the span gets this share of the summary budget's characters
(10% of the threshold with the default budget, 30%)."""
_EXCERPT_SHARE = 1 / 6
"""The excerpts of the latest turns get this share of the summary budget's characters (5% of
the threshold with the default budget)."""
SUMMARY_DEADLINE = 180.0
"""Seconds a whole summary call may take, the client's retries included (then: the frame)."""
OVERSIZE_FACTOR = 2
"""A summary longer than this many times the summary budget is refused (then: the frame)."""


class _SummaryUnavailable(Exception):
    """The summary model did not deliver a usable summary (internal; triggers the fallback)."""


class LLMEngine(BaseContextEngine):
    """Compacts with summaries written by an OpenAI-compatible model."""

    name = "llm"

    def __init__(
        self,
        agent: Agent,
        *,
        client: AsyncOpenAI | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        deadline: float = SUMMARY_DEADLINE,
        context_length: int | None = None,
        cwd: str | None = None,
        template_dir: Path | None = None,
        catalog: ToolCatalog | None = None,
        limits: SerializationLimits | None = None,
        tail_ratio: float = 0.2,
        cooldown_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Prepare the engine for ``agent``.

        Args:
            agent: the agent whose conversations are compacted.
            client: an OpenAI client to use (the engine builds one when None).
            model: the summary model (else ``compact.model``, else the agent's model).
            base_url: the summary model's endpoint (else ``FORGE_SUMMARY_BASE_URL``, else the
                agent's ``base_url``, else ``OPENAI_BASE_URL``).
            api_key: its key (else ``FORGE_SUMMARY_API_KEY``, else the variable the agent's
                ``api_key_env`` names, else ``OPENAI_API_KEY``).
            timeout: the client's timeout per request (httpx: per read, connect …).
            max_retries: the client's retries on transient errors.
            deadline: seconds the whole summary call may take, retries and slow bodies
                included; past it the frame is used.
            context_length: the agent model's window, when known.
            cwd: working directory stripped from paths in the frame.
            template_dir: a directory with a custom frame template.
            catalog: how tool calls are classified.
            limits: the summariser input's size limits.
            tail_ratio: the protected tail's share of the threshold, in tokens.
            cooldown_seconds: how long summary calls are skipped after a failure.
            clock: monotonic seconds (tests pass a fake).

        Raises:
            EngineUnavailable: no summary model is configured.
        """
        chosen = model or agent.compact.model or agent.model
        if chosen is None:
            raise EngineUnavailable(self.name, "no summary model: set compact.model or model")
        self.model = chosen
        self._client = client
        self._owns_client = client is None
        self._base_url = base_url or os.environ.get(SUMMARY_BASE_URL_ENV) or agent.base_url
        self._api_key = api_key or os.environ.get(SUMMARY_API_KEY_ENV)
        self._timeout = timeout
        self._max_retries = max_retries
        self._deadline = deadline
        self._catalog = catalog if catalog is not None else agent.tool_catalog()
        self._frame = SummaryFrame(template_dir)
        self._transform = SummaryTransformer(cwd, redact_secrets=agent.compact.redact_secrets)
        self._limits = limits if limits is not None else SerializationLimits()
        self._tail_ratio = tail_ratio
        self.guard = CompactionGuard(cooldown_seconds=cooldown_seconds, clock=clock)
        super().__init__(agent, context_length=context_length)

    def update_model(self, context_length: int | None) -> None:
        """Recompute the threshold, and the window the summary's length derives from."""
        super().update_model(context_length)
        self._window = context_length or self.agent.context_length or DEFAULT_CONTEXT_WINDOW

    # -- compaction ----------------------------------------------------------------------

    async def compress(
        self, context: Context, *, focus: str | None = None, mode: CompactionMode = "automatic"
    ) -> CompactionOutcome:
        """Replace the span between head and tail with a summary.

        ``focus`` gets most of the summary's length; only an ``automatic``
        compaction honours the cooldown.

        Raises:
            InvalidTranscript: the input breaks provider rules.
            SummaryAuthFailed: the summary model refused the credentials (nothing changed).
            CompactionFailed: the result would not be provider-valid (nothing changed).
        """
        ensure_valid(context, "shared")
        budget = self.compact.summary_budget() * CHARS_PER_TOKEN
        budgets = (budget, int(budget * _RECORD_SHARE))
        span = find_span(
            list(context),
            min_tail_messages=self.compact.retention_window,
            tail_tokens=int(self.threshold * self._tail_ratio),
            frame_record=lambda data: _record(fit_summary(data, self._frame.render, budgets[1])[1]),
        )
        if span is None or sum(m.approx_tokens for m in span.messages) <= _FRAMING_TOKENS:
            return compaction_outcome(
                context, context, None, engine=self.name, max_tokens=self.compact.max_tokens
            )
        frame = frame_of(span, self._catalog, self._transform, self._frame.render, budgets)
        facts = facts_of(frame.raw, frame.complete, span.task)
        if self.guard.is_cooling_down() and mode == "automatic":
            body, engine, usage, coverage = (
                self._fallback(span, frame, "cooling down"),
                "frame",
                None,
                None,
            )
            self.guard.record_fallback(failed_now=False)
            note_event("fallback", {"engine": "frame", "reason": "cooling down"})
        else:
            try:
                text, usage = await self._summarise(span, frame, focus, budget)
            except _SummaryUnavailable as exc:
                body, engine, usage, coverage = (
                    self._fallback(span, frame, str(exc)),
                    "frame",
                    None,
                    None,
                )
                self.guard.record_fallback(failed_now=True)
                _log.warning("summary_fallback_used", engine=self.name, reason=str(exc))
                note_event("fallback", {"engine": "frame", "reason": str(exc)})
            else:
                checked = check_coverage(text, facts, kept=_text_of(span.head))
                _log.info(
                    "summary_checked",
                    engine=self.name,
                    coverage=checked.ratio,
                    checked=checked.facts.describe(),
                    missing=list(checked.missing.names()),
                )
                body, engine, coverage = (
                    with_verified_facts(text, checked.missing),
                    "llm",
                    checked.ratio,
                )
                self.guard.record_success()
        messages = splice_summary(
            list(context),
            (span.start, span.end),
            body,
            span_usage=accumulated_usage(span.messages),
            summary_data=frame.bounded.model_dump(mode="json"),
        )
        messages = carry_reasoning(messages, span.messages, after=span.start)
        compacted = Context(messages, usage_floor=len(messages))
        ensure_valid_output(compacted)
        replaced: tuple[int, int] | None = (span.start, span.end)
        if compacted.token_count_approx() >= context.token_count_approx():
            _log.info("compaction_ineffective", engine=engine, start=span.start, end=span.end)
            replaced = None
        # ``context_compacted`` is the logging plugin's (one line per compaction, coverage included)
        return compaction_outcome(
            context,
            compacted,
            replaced,
            engine=engine,
            max_tokens=self.compact.max_tokens,
            summary_usage=usage,
            coverage=coverage,
        )

    async def _summarise(
        self, span: Span, frame: SpanFrame, focus: str | None, budget: int
    ) -> tuple[str, Usage | None]:
        prompt = summary_prompt(
            self._material(span, frame, budget),
            previous=(
                redact_for_model(span.previous_for_model)
                if span.previous_for_model is not None
                else None
            ),
            focus=redact_for_model(focus) if focus else None,
            target_tokens=self._target_tokens(span),
            task=redact_for_model(span.task) if span.task is not None else None,
        )
        with observe_summary_call(self.model, prompt) as call:
            try:
                text, usage = await self._ask(prompt, budget, _secrets_given(span, focus))
            except (_SummaryUnavailable, SummaryAuthFailed) as exc:
                call.failed(str(exc))
                raise
            call.succeeded(usage)
            return text, usage

    async def _ask(
        self, prompt: str, budget: int, known: frozenset[str]
    ) -> tuple[str, Usage | None]:
        """One summary call: the model's answer, checked (size and sections) and redacted of
        ``known``, the secrets the input held (what an echo could hand back without its label)."""
        import openai  # deferred: the openai package takes most of a cold start

        client = self._client
        if client is None:  # built off the loop: see _ensure_client
            client = await anyio.to_thread.run_sync(self._ensure_client)
        try:
            with anyio.fail_after(self._deadline):  # the timeout is per read, not per call
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=[{"role": "user", "content": prompt}],
                    timeout=self._timeout,
                )
        except TimeoutError as exc:
            raise _SummaryUnavailable(f"no summary within {self._deadline:g} s") from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise SummaryAuthFailed(self.model, str(exc), exc.status_code) from exc
        except openai.APIStatusError as exc:
            raise _SummaryUnavailable(f"HTTP {exc.status_code}") from exc
        except openai.APITimeoutError as exc:
            raise _SummaryUnavailable("timed out") from exc
        except (openai.APIError, ValueError) as exc:
            raise _SummaryUnavailable(f"{type(exc).__name__}: {exc}") from exc
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            raise _SummaryUnavailable("empty summary")
        text = redact_for_model(_THINK.sub("", content).strip(), known)
        if len(text) > OVERSIZE_FACTOR * budget:
            limit = OVERSIZE_FACTOR * budget // CHARS_PER_TOKEN
            raise _SummaryUnavailable(
                f"summary of ~{len(text) // CHARS_PER_TOKEN:,} tokens, over {limit:,} "
                f"({OVERSIZE_FACTOR}x the summary budget)"
            )
        if sum(f"{title}".casefold() in text.casefold() for title, _ in SECTIONS) < _MIN_SECTIONS:
            raise _SummaryUnavailable("malformed summary (no sections)")
        return text, _usage_of(response)

    def _material(self, span: Span, frame: SpanFrame, budget: int) -> str:
        """The span as the summariser reads it: the frame (within the summary budget) and
        excerpts of the latest turns, or the serialised turns when they are smaller."""
        turns = [message for message in span.turns if not message.droppable]
        excerpts = serialize_excerpts(
            turns, max_chars=int(budget * _EXCERPT_SHARE), keep=_last_error(turns, frame.raw)
        )
        material = record_material(redact_for_model(_record(frame.record)), excerpts)
        if sum(len(message.text) for message in turns) < len(material):
            whole = turns_material(serialize_span(turns, self._limits))
            if len(whole) <= len(material):
                return whole
        return material

    def _target_tokens(self, span: Span) -> int:
        span_tokens = sum(message.approx_tokens for message in span.turns)
        return max(1_000, min(span_tokens // 5, self._window // 20, _SUMMARY_CEILING))

    def _fallback(self, span: Span, frame: SpanFrame, reason: str) -> str:
        note = (
            f"(The summarising model was unavailable: {reason}. Below is the deterministic "
            "record of the condensed turns.)"
        )
        parts = [note, _record(frame.text)]
        if span.previous:
            parts.append(f"Earlier summary, kept as it was:\n\n{span.previous}")
        return "\n\n".join(parts)

    def _ensure_client(self) -> AsyncOpenAI:
        """The client, built on first use: off the event loop (in a worker thread), since
        building one imports modules and reads the CA certificates (blocking I/O)."""
        import openai  # deferred: the openai package takes most of a cold start

        if self._client is None:
            key = self._api_key
            if key is None and self.agent.api_key_env:
                key = os.environ.get(self.agent.api_key_env)
            try:
                self._client = openai.AsyncOpenAI(
                    api_key=key, base_url=self._base_url, max_retries=self._max_retries
                )
            except openai.OpenAIError as exc:
                raise SummaryAuthFailed(self.model, f"no API key: {exc}") from exc
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client the engine built (a client passed in is left open)."""
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None

    def on_session_reset(self) -> None:
        """Forget cooldowns and counters (the previous summary is read back from the context)."""
        self.guard.reset()


def _secrets_given(span: Span, focus: str | None) -> frozenset[str]:
    """Every secret value of what the summariser was given or could have been: the span's
    texts and call arguments, the task, the focus and the previous summary."""
    texts = [span.task, focus, span.previous_for_model]
    for message in span.messages:
        texts.append(message.text)
        if isinstance(message, TextMessage):
            texts.extend(call.arguments for call in message.tool_calls or ())
    return secrets_in("\n".join(text for text in texts if text))


def _record(text: str) -> str:
    """A rendered frame without its opening lines (a summary message has its own)."""
    return text.removeprefix(f"{SUMMARY_MARKER}\n{SUMMARY_PREAMBLE}\n").strip()


def _text_of(messages: tuple[ContextMessage, ...]) -> str:
    return "\n\n".join(message.text for message in messages)


def _last_error(turns: list[ContextMessage], raw: ContextSummary) -> int | None:
    """The index of the last tool result in ``turns`` whose call failed, if any."""
    failed = {item.id for item in raw.tool_calls() if item.id and not item.is_success}
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if isinstance(turn, ToolResult) and turn.call_id in failed:
            return index
    return None


def _usage_of(response: object) -> Usage | None:
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return Usage.reported(prompt_tokens=prompt, completion_tokens=completion)
