"""forge_domain: pure models and algorithms of context compaction (no I/O).

The core model is this package; its parts are packages of their own::

    forge_domain           messages, Context, Compact (triggers), strategies, results,
                           the engine protocol, Agent, usage and token counts, the
                           trace seam, errors
    forge_domain.formats   the wire codecs (OpenAI chat, Anthropic Messages, OpenAI
                           Responses), what a format cannot hold, provider validity
    forge_domain.tools     what a tool call did: kinds, catalog, specs, outcomes,
                           shell edits, text-protocol actions, todos
    forge_domain.summary   the structured summary of a span, and what it carries over
    forge_domain.testing   pattern() helpers for tests

``formats`` and ``tools`` import only the message model, never each other;
``summary`` sits above ``tools`` (import-linter contracts in ``pyproject.toml``).
Modules starting with ``_`` are private: import from the packages.

The names this package exported before its parts were packages (issue 26) still
resolve here (``from forge_domain import ToolCatalog``), from the part that holds
them; new code imports them from that part.

Every exported name is imported from its module the first time it is read (PEP 562,
``forge_domain._lazy``), so importing the package builds none of its models
(plans/008-performance.md, round 6b)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use (__getattr__)
    from forge_domain._agent import (
        DEFAULT_CONTEXT_WINDOW,
        DEFAULT_THRESHOLD_PERCENTAGE,
        Agent,
        PluginSelection,
        Telemetry,
    )
    from forge_domain._compact import Compact, Percentage
    from forge_domain._context import Context
    from forge_domain._engine import (
        BaseContextEngine,
        CompactionMode,
        ContextEngine,
        DelegatingEngine,
        close_engine,
        compaction_outcome,
    )
    from forge_domain._errors import (
        ForgeDomainError,
        InvalidArguments,
        InvalidConfig,
        InvalidMessage,
        InvalidPattern,
        InvalidToolSpec,
        InvalidTranscript,
    )
    from forge_domain._json import JsonObject, JsonValue
    from forge_domain._messages import (
        Content,
        ContentPart,
        ContextMessage,
        ImagePart,
        OtherPart,
        Role,
        TextMessage,
        TextPart,
        TokenPieces,
        ToolCall,
        ToolResult,
        content_text,
    )
    from forge_domain._percentage import format_float, validate_percentage
    from forge_domain._result import BudgetStatus, CompactionOutcome, CompactionResult
    from forge_domain._strategy import (
        CompactionStrategy,
        Evict,
        Max,
        Min,
        Retain,
        find_sequence_preserving_last_n,
    )
    from forge_domain._token_count import (
        CHARS_METER,
        TextCounter,
        TokenizerChoice,
        TokenMeter,
        context_tokens,
        message_tokens,
    )
    from forge_domain._token_estimates import IMAGE_TOKENS, LOW_DETAIL_IMAGE_TOKENS
    from forge_domain._trace import (
        CompactionTrace,
        SummaryCall,
        current_trace,
        note_archived,
        note_event,
        note_tier,
        observe_summary_call,
        tracing,
    )
    from forge_domain._usage import TokenCount, Usage


__all__ = [
    "CHARS_METER",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_THRESHOLD_PERCENTAGE",
    "IMAGE_TOKENS",
    "LOW_DETAIL_IMAGE_TOKENS",
    "Agent",
    "BaseContextEngine",
    "BudgetStatus",
    "Compact",
    "CompactionMode",
    "CompactionOutcome",
    "CompactionResult",
    "CompactionStrategy",
    "CompactionTrace",
    "Content",
    "ContentPart",
    "Context",
    "ContextEngine",
    "ContextMessage",
    "DelegatingEngine",
    "Evict",
    "ForgeDomainError",
    "ImagePart",
    "InvalidArguments",
    "InvalidConfig",
    "InvalidMessage",
    "InvalidPattern",
    "InvalidToolSpec",
    "InvalidTranscript",
    "JsonObject",
    "JsonValue",
    "Max",
    "Min",
    "OtherPart",
    "Percentage",
    "PluginSelection",
    "Retain",
    "Role",
    "SummaryCall",
    "Telemetry",
    "TextCounter",
    "TextMessage",
    "TextPart",
    "TokenCount",
    "TokenMeter",
    "TokenPieces",
    "TokenizerChoice",
    "ToolCall",
    "ToolResult",
    "Usage",
    "close_engine",
    "compaction_outcome",
    "content_text",
    "context_tokens",
    "current_trace",
    "find_sequence_preserving_last_n",
    "format_float",
    "message_tokens",
    "note_archived",
    "note_event",
    "note_tier",
    "observe_summary_call",
    "tracing",
    "validate_percentage",
]

_MOVED: dict[str, tuple[str, ...]] = {
    "forge_domain.formats": (
        "Dialect",
        "FORMATS",
        "Format",
        "Violation",
        "detect_format",
        "ensure_valid",
        "find_format_violations",
        "find_violations",
        "is_valid",
        "message_from_openai",
        "message_to_openai",
        "messages_from_anthropic",
        "messages_from_format",
        "messages_from_responses",
        "messages_key",
        "messages_to_anthropic",
        "messages_to_format",
        "messages_to_responses",
    ),
    "forge_domain.summary": (
        "ContextSummary",
        "SummaryBlock",
        "SummaryItem",
        "TextItem",
        "ToolCallItem",
        "accumulated_usage",
        "carry_reasoning",
    ),
    "forge_domain.tools": (
        "AnsweredAction",
        "CallClassifier",
        "EARLIER_EVIDENCE",
        "EVIDENCE_CHARS",
        "EVIDENCE_RUNS",
        "EVIDENCE_SEPARATOR",
        "FILE_CHANGING_KINDS",
        "FetchTool",
        "FileReadTool",
        "FileRemoveTool",
        "FileTool",
        "FileUpdateTool",
        "FollowupTool",
        "GenericTool",
        "McpTool",
        "OBSERVATION_STARTS",
        "Outcome",
        "PRUNED_MARKER",
        "PlanTool",
        "SearchTool",
        "SemSearchTool",
        "SemanticQuery",
        "ShellTool",
        "SkillTool",
        "SummaryTool",
        "TOOL_KINDS",
        "TOOL_KIND_TABLE",
        "TaskTool",
        "TextAction",
        "TextTurns",
        "Todo",
        "TodoChange",
        "TodoReadTool",
        "TodoStatus",
        "TodoWriteTool",
        "ToolCatalog",
        "ToolKind",
        "ToolKindDefinition",
        "ToolReading",
        "ToolSpec",
        "UNKNOWN_PATH",
        "UndoTool",
        "evidence_runs",
        "failure_evidence",
        "is_mcp_name",
        "looks_like_observation",
        "merged_evidence",
        "output_outcome",
        "output_reports_failure",
        "pruned_output",
        "shell_file_changes",
        "shows_traceback",
        "text_action",
        "text_turns",
    ),
}
"""Names ``forge_domain`` exported before issue 26, by the part that exports them now."""

_EXPORTS = LazyExports(
    "forge_domain",
    {
        "forge_domain._agent": (
            "DEFAULT_CONTEXT_WINDOW",
            "DEFAULT_THRESHOLD_PERCENTAGE",
            "Agent",
            "PluginSelection",
            "Telemetry",
        ),
        "forge_domain._choices": ("CompactionMode", "TokenizerChoice"),
        "forge_domain._compact": ("Compact", "Percentage"),
        "forge_domain._context": ("Context",),
        "forge_domain._engine": (
            "BaseContextEngine",
            "ContextEngine",
            "DelegatingEngine",
            "close_engine",
            "compaction_outcome",
        ),
        "forge_domain._errors": (
            "ForgeDomainError",
            "InvalidArguments",
            "InvalidConfig",
            "InvalidMessage",
            "InvalidPattern",
            "InvalidToolSpec",
            "InvalidTranscript",
        ),
        "forge_domain._json": ("JsonObject", "JsonValue"),
        "forge_domain._messages": (
            "Content",
            "ContentPart",
            "ContextMessage",
            "ImagePart",
            "OtherPart",
            "Role",
            "TextMessage",
            "TextPart",
            "TokenPieces",
            "ToolCall",
            "ToolResult",
            "content_text",
        ),
        "forge_domain._percentage": ("format_float", "validate_percentage"),
        "forge_domain._result": ("BudgetStatus", "CompactionOutcome", "CompactionResult"),
        "forge_domain._strategy": (
            "CompactionStrategy",
            "Evict",
            "Max",
            "Min",
            "Retain",
            "find_sequence_preserving_last_n",
        ),
        "forge_domain._token_count": (
            "CHARS_METER",
            "TextCounter",
            "TokenMeter",
            "context_tokens",
            "message_tokens",
        ),
        "forge_domain._token_estimates": ("IMAGE_TOKENS", "LOW_DETAIL_IMAGE_TOKENS"),
        "forge_domain._trace": (
            "CompactionTrace",
            "SummaryCall",
            "current_trace",
            "note_archived",
            "note_event",
            "note_tier",
            "observe_summary_call",
            "tracing",
        ),
        "forge_domain._usage": ("TokenCount", "Usage"),
        **_MOVED,
    },
)
"""Which module defines each exported name, and the part that exports each moved one."""


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
