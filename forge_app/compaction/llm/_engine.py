"""The ``llm`` context engine: a model writes the summary, the frame keeps it honest.

One compaction:

1. find the span between the protected head (system prompt, and the first
   exchange on the first compaction) and the protected tail (a token budget,
   never splitting a call from its results);
2. serialise it (redacted, with per-message, per-argument and total limits)
   and ask the summary model for a sectioned summary, or to update the
   previous one;
3. check the summary against the deterministic frame of the same span and
   append whatever it missed (modified files, failed commands, pending asks);
4. splice it in behind a reference-only prefix, keeping roles alternating and
   every tool call answered.

When the model cannot deliver (timeout, 429, 5xx, empty or malformed output)
the frame of the span is used instead and the engine cools down; credentials
that are refused abort with :class:`SummaryAuthFailed`, the context unchanged.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from openai import AsyncOpenAI

from forge_app.compaction._compactor import SUMMARY_TEXT_LIMIT, ensure_valid_output
from forge_app.compaction.llm._coverage import check_coverage, facts_of, with_verified_facts
from forge_app.compaction.llm._guard import CompactionGuard
from forge_app.compaction.llm._prompt import SECTIONS, framed, summary_prompt
from forge_app.compaction.llm._serialize import SerializationLimits, serialize_span
from forge_app.compaction.llm._span import Span, find_span, frame_of
from forge_app.compaction.llm._splice import splice_summary
from forge_app.errors import EngineUnavailable, SummaryAuthFailed
from forge_app.summary._budget import limit_texts
from forge_app.summary._frame import SummaryFrame
from forge_app.summary._redaction import redact
from forge_app.summary.transformers import SummaryTransformer
from forge_domain.agent import DEFAULT_CONTEXT_WINDOW, Agent
from forge_domain.carry import accumulated_usage, carry_reasoning
from forge_domain.context import Context
from forge_domain.engine import BaseContextEngine, CompactionMode, compaction_outcome
from forge_domain.result import CompactionOutcome
from forge_domain.summary import ContextSummary
from forge_domain.tool_catalog import ToolCatalog
from forge_domain.usage import Usage
from forge_domain.validation import ensure_valid

__all__ = ["LLMEngine"]

SUMMARY_BASE_URL_ENV = "FORGE_SUMMARY_BASE_URL"
"""Environment variable naming the summary model's endpoint (a cheap model's server)."""
SUMMARY_API_KEY_ENV = "FORGE_SUMMARY_API_KEY"
"""Environment variable holding the summary model's API key."""

_log = structlog.get_logger()
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_MIN_SECTIONS = 2
_SUMMARY_CEILING = 10_000
_FRAMING_TOKENS = len(framed("")) // 4
"""What the prefix and end marker cost: a smaller span is not worth summarising."""


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
            timeout: seconds the summary call may take.
            max_retries: the client's retries on transient errors.
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
        self._catalog = catalog if catalog is not None else agent.tool_catalog()
        self._frame = SummaryFrame(template_dir)
        self._transform = SummaryTransformer(cwd)
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
        ensure_valid(context)
        span = find_span(
            list(context),
            min_tail_messages=self.compact.retention_window,
            tail_tokens=int(self.threshold * self._tail_ratio),
        )
        if span is None or sum(m.approx_tokens for m in span.messages) <= _FRAMING_TOKENS:
            return compaction_outcome(
                context, context, None, engine=self.name, max_tokens=self.compact.max_tokens
            )
        raw, frame = frame_of(span, self._catalog, self._transform)
        frame = limit_texts(frame, SUMMARY_TEXT_LIMIT)
        facts = facts_of(raw, frame)
        if self.guard.is_cooling_down() and mode == "automatic":
            body, engine, usage, coverage = (
                self._fallback(span, frame, "cooling down"),
                "frame",
                None,
                None,
            )
            self.guard.record_fallback(failed_now=False)
        else:
            try:
                text, usage = await self._summarise(span, focus)
            except _SummaryUnavailable as exc:
                body, engine, usage, coverage = (
                    self._fallback(span, frame, str(exc)),
                    "frame",
                    None,
                    None,
                )
                self.guard.record_fallback(failed_now=True)
                _log.warning("summary_fallback_used", engine=self.name, reason=str(exc))
            else:
                checked = check_coverage(text, facts)
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
            summary_data=frame.model_dump(mode="json"),
        )
        messages = carry_reasoning(messages, span.messages, after=span.start)
        compacted = Context(messages, usage_floor=len(messages))
        ensure_valid_output(compacted)
        replaced: tuple[int, int] | None = (span.start, span.end)
        if compacted.token_count_approx() >= context.token_count_approx():
            _log.info("compaction_ineffective", engine=engine, start=span.start, end=span.end)
            replaced = None
        else:
            _log.info(
                "context_compacted",
                engine=engine,
                start=span.start,
                end=span.end,
                coverage=coverage,
            )
        return compaction_outcome(
            context,
            compacted,
            replaced,
            engine=engine,
            max_tokens=self.compact.max_tokens,
            summary_usage=usage,
            coverage=coverage,
        )

    async def _summarise(self, span: Span, focus: str | None) -> tuple[str, Usage | None]:
        turns = serialize_span([m for m in span.turns if not m.droppable], self._limits)
        span_tokens = sum(message.approx_tokens for message in span.turns)
        target = max(1_000, min(span_tokens // 5, self._window // 20, _SUMMARY_CEILING))
        prompt = summary_prompt(
            turns,
            previous=redact(span.previous) if span.previous is not None else None,
            focus=redact(focus) if focus else None,
            target_tokens=target,
        )
        import openai  # deferred: the openai package takes most of a cold start

        client = self._ensure_client()
        try:
            response = await client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                timeout=self._timeout,
            )
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
        text = redact(_THINK.sub("", content).strip())
        if sum(f"{title}".casefold() in text.casefold() for title, _ in SECTIONS) < _MIN_SECTIONS:
            raise _SummaryUnavailable("malformed summary (no sections)")
        return text, _usage_of(response)

    def _fallback(self, span: Span, frame: ContextSummary, reason: str) -> str:
        note = (
            f"(The summarising model was unavailable: {reason}. Below is the deterministic "
            "record of the condensed turns; verify details with your tools.)"
        )
        parts = [note, self._frame.render(frame)]
        if span.previous:
            parts.append(f"Earlier summary, kept as it was:\n\n{span.previous}")
        return "\n\n".join(parts)

    def _ensure_client(self) -> AsyncOpenAI:
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


def _usage_of(response: object) -> Usage | None:
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    return Usage.reported(prompt_tokens=prompt, completion_tokens=completion)
