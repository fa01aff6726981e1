"""An agent definition and its safety threshold."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forge_domain._compact import Compact
from forge_domain._json import JsonValue

if TYPE_CHECKING:  # imported by the methods that use it: reading an agent builds no tool model
    from forge_domain.tools._catalog import ToolCatalog

DEFAULT_CONTEXT_WINDOW = 128_000
"""Window assumed when the model's context length is unknown."""
DEFAULT_THRESHOLD_PERCENTAGE = 0.7
"""Fraction of the window at which compaction fires when none is configured."""


class PluginSelection(BaseModel):
    """Which hook plugins an agent enables or disables by name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enable: tuple[str, ...] = ()
    """Only these entry-point plugins load (empty: all that are installed)."""
    disable: tuple[str, ...] = ()
    """These plugins never load."""

    def allows(self, name: str) -> bool:
        """Return True when the plugin called ``name`` may load."""
        if name in self.disable:
            return False
        return not self.enable or name in self.enable


class Telemetry(BaseModel):
    """Whether an agent's compactions are traced with OpenTelemetry (the ``otel`` extra)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    """Emit a span per compaction and the compaction metrics."""
    include_prompts: bool = False
    """Record the summary prompt on the summary call's span (redacted by the summary
    secret rules); off by default, since a prompt quotes the conversation."""


class Agent(BaseModel):
    """An agent: its model, prompt, tools and compaction settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    """Unique name of the agent."""
    model: str | None = None
    """The provider's model id."""
    system_prompt: str | None = None
    """The system message that starts every conversation."""
    compact: Compact = Field(default_factory=Compact)
    """Compaction settings."""
    tools: tuple[str, ...] = ()
    """Names of the tools the agent may call."""
    plugins: PluginSelection = Field(default_factory=PluginSelection)
    """Hook plugins to enable or disable."""
    max_turns: int = Field(default=50, ge=1)
    """The agent loop stops after this many provider calls."""
    context_length: int | None = Field(default=None, ge=0)
    """The model's context window in tokens, when known."""
    base_url: str | None = None
    """OpenAI-compatible endpoint; the environment's ``OPENAI_BASE_URL`` when unset."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (``OPENAI_API_KEY`` when unset)."""
    tool_kinds: dict[str, JsonValue] = Field(default_factory=dict)
    """Extra tool classifications for summaries (``{"my_reader": {"kind": "file_read", ...}}``)."""
    telemetry: Telemetry = Field(default_factory=Telemetry)
    """OpenTelemetry spans and metrics for compactions (off unless enabled)."""

    @field_validator("tool_kinds")
    @classmethod
    def _tool_kinds_parse(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        from forge_domain.tools._catalog import ToolCatalog  # imported when used: start-up time

        ToolCatalog.default().extended(value)
        return value

    def tool_catalog(self) -> ToolCatalog:
        """The built-in tool catalog extended with this agent's ``tool_kinds``."""
        from forge_domain.tools._catalog import ToolCatalog  # imported when used: start-up time

        catalog = ToolCatalog.default()
        return catalog.extended(self.tool_kinds) if self.tool_kinds else catalog

    def with_compact_model(self) -> Agent:
        """Return the agent with ``compact.model`` defaulting to the agent's model."""
        if self.compact.model is not None or self.model is None:
            return self
        return self.model_copy(
            update={"compact": self.compact.model_copy(update={"model": self.model})}
        )

    def compaction_threshold(self, context_length: int | None = None) -> int:
        """The token count at which automatic compaction fires.

        ``floor(window x pct)`` with ``window`` the given context length (else the
        agent's, else 128,000) and ``pct`` the configured percentage (else 0.7),
        capped by ``token_threshold`` when the user set one. Unlike forge, an unset
        ``token_threshold`` does not cap large windows at 100,000 (forge #3518).
        Float arithmetic as forge: 180,000 x 0.7 gives 125,999.
        """
        window = context_length if context_length is not None else self.context_length
        if window is None:
            window = DEFAULT_CONTEXT_WINDOW
        pct = self.compact.token_threshold_percentage
        if pct is None:
            pct = DEFAULT_THRESHOLD_PERCENTAGE
        window_cap = math.floor(float(window) * pct)
        if self.compact.token_threshold is None:
            return window_cap
        return min(self.compact.token_threshold, window_cap)

    def with_compaction_threshold(self, context_length: int | None = None) -> Agent:
        """Return the agent with ``compact.token_threshold`` set to its safety threshold."""
        threshold = self.compaction_threshold(context_length)
        compact = self.compact.model_copy(update={"token_threshold": threshold})
        return self.model_copy(update={"compact": compact})
