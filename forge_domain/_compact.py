"""The ``Compact`` configuration and its trigger check."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from forge_domain._context import Context
from forge_domain._messages import Role
from forge_domain._percentage import validate_percentage
from forge_domain._token_count import TokenizerChoice
from forge_domain._usage import TokenCount

Percentage = Annotated[float, AfterValidator(validate_percentage)]
"""A fraction in [0, 1]."""

DEFAULT_ENGINE = "frame"
SUMMARY_SHARE = 0.3
"""Share of the token threshold a summary may take when ``summary_max_tokens`` is unset
(0.2 held too few facts at small windows: ``benchmarks/EVAL.md``)."""
SUMMARY_FLOOR = 400
"""The smallest derived summary budget, in tokens."""
SUMMARY_CEILING = 10_000
"""The largest derived summary budget, in tokens (Hermes's ceiling)."""


class Compact(BaseModel):
    """When to compact a conversation and how much of it.

    Defaults are the same whether built in code or read from a file with keys
    missing (forge gives ``eviction_window`` 0.2 in code but 0.0 from YAML).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    retention_window: int = Field(default=6, ge=0)
    """The last this-many messages are always kept verbatim."""
    eviction_window: Percentage = 0.2
    """At most this fraction of the tokens from the first assistant message on is summarised."""
    max_tokens: int | None = Field(default=None, ge=1)
    """After compaction the context must fit in this many tokens; compaction goes further if not."""
    token_threshold: int | None = Field(default=None, ge=0)
    """Compact when the context holds at least this many tokens."""
    token_threshold_percentage: Percentage | None = None
    """Fraction of the model window at which to compact (0.7 when unset)."""
    turn_threshold: int | None = Field(default=None, ge=0)
    """Compact when the context holds at least this many user-role messages."""
    message_threshold: int | None = Field(default=None, ge=0)
    """Compact when the context holds at least this many messages."""
    model: str | None = None
    """A cheaper model for LLM summaries (falls back to the agent's model)."""
    on_turn_end: bool | None = None
    """Compact whenever the last message is a user message."""
    engine: str = DEFAULT_ENGINE
    """The context engine that performs compaction (``frame`` is deterministic)."""
    headroom: Percentage = 0.3
    """After an automatic compaction the context holds at most ``(1 - headroom) x threshold``."""
    summary_max_tokens: int | None = Field(default=None, ge=1)
    """Most tokens a summary may hold (unset: 30% of the threshold, within 400..10,000)."""
    redact_secrets: bool = True
    """Replace recognised secrets (API keys, tokens, passwords …) in every summary written."""
    tokenizer: TokenizerChoice = "chars"
    """How the triggers and metrics count text: ``chars`` (chars/4, the default), ``tiktoken``
    (a bundled OpenAI encoding, chars/4 when none loads), or ``auto`` (tiktoken for OpenAI
    model families). Provider-reported usage anchors the count whichever is used."""

    def summary_budget(self, threshold: int | None = None) -> int:
        """The summary's token budget: ``summary_max_tokens``, else derived from the threshold.

        The threshold is ``threshold`` when given, else ``token_threshold``; with
        neither, the ceiling applies. A derived budget is at most half of ``max_tokens``
        when that is set (a summary must leave room for what the context keeps verbatim).
        """
        if self.summary_max_tokens is not None:
            return self.summary_max_tokens
        base = threshold if threshold is not None else self.token_threshold
        derived = (
            SUMMARY_CEILING
            if base is None
            else min(SUMMARY_CEILING, max(SUMMARY_FLOOR, int(base * SUMMARY_SHARE)))
        )
        return derived if self.max_tokens is None else min(derived, max(1, self.max_tokens // 2))

    def target_tokens(self, threshold: int) -> int:
        """Most tokens a context may hold after an automatic compaction at ``threshold``.

        ``floor(threshold x (1 - headroom))``, lowered to ``max_tokens`` when that is smaller.
        """
        target = int(threshold * (1.0 - self.headroom))
        if self.max_tokens is not None:
            target = min(target, self.max_tokens)
        return max(target, 0)

    def should_compact_due_to_tokens(self, token_count: int | TokenCount) -> bool:
        """Tokens at or over ``token_threshold``."""
        return self.token_threshold is not None and int(token_count) >= self.token_threshold

    def should_compact_due_to_turns(self, context: Context) -> bool:
        """User-role messages at or over ``turn_threshold``."""
        return (
            self.turn_threshold is not None and context.user_message_count() >= self.turn_threshold
        )

    def should_compact_due_to_messages(self, context: Context) -> bool:
        """Messages at or over ``message_threshold``."""
        return self.message_threshold is not None and len(context) >= self.message_threshold

    def should_compact_on_turn_end(self, context: Context) -> bool:
        """``on_turn_end`` is true and the last message is a user message."""
        last = context.last_message()
        return bool(self.on_turn_end) and last is not None and last.has_role(Role.USER)

    def should_compact(self, context: Context, token_count: int | TokenCount) -> bool:
        """Any trigger fires; every comparison is ``>=`` and unset thresholds never fire. O(1)."""
        return (
            self.should_compact_due_to_tokens(token_count)
            or self.should_compact_due_to_turns(context)
            or self.should_compact_due_to_messages(context)
            or self.should_compact_on_turn_end(context)
        )

    def merged_with(self, override: Compact) -> Compact:
        """Return this config with every field that ``override`` set explicitly taking its value.

        Unlike forge, a field the override merely defaulted never replaces a
        configured value, so a workflow's ``retention_window`` survives an agent
        that does not mention it.
        """
        update = {name: getattr(override, name) for name in override.model_fields_set}
        return self.model_copy(update=update)
