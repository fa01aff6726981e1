"""forge_domain: pure models and algorithms of context compaction (no I/O)."""

from forge_domain.agent import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_THRESHOLD_PERCENTAGE,
    Agent,
    PluginSelection,
)
from forge_domain.compact import Compact, Percentage
from forge_domain.context import Context
from forge_domain.engine import ContextEngine
from forge_domain.errors import (
    ForgeDomainError,
    InvalidArguments,
    InvalidConfig,
    InvalidMessage,
    InvalidPattern,
    InvalidTranscript,
)
from forge_domain.json import JsonObject, JsonValue
from forge_domain.messages import (
    Content,
    ContentPart,
    ContextMessage,
    ImagePart,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    ToolCall,
    ToolResult,
    content_text,
)
from forge_domain.percentage import format_float, validate_percentage
from forge_domain.result import BudgetStatus, CompactionOutcome, CompactionResult
from forge_domain.strategy import (
    CompactionStrategy,
    Evict,
    Max,
    Min,
    Retain,
    find_sequence_preserving_last_n,
)
from forge_domain.usage import TokenCount, Usage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_THRESHOLD_PERCENTAGE",
    "Agent",
    "BudgetStatus",
    "Compact",
    "CompactionOutcome",
    "CompactionResult",
    "CompactionStrategy",
    "Content",
    "ContentPart",
    "Context",
    "ContextEngine",
    "ContextMessage",
    "Evict",
    "ForgeDomainError",
    "ImagePart",
    "InvalidArguments",
    "InvalidConfig",
    "InvalidMessage",
    "InvalidPattern",
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
    "TextMessage",
    "TextPart",
    "TokenCount",
    "ToolCall",
    "ToolResult",
    "Usage",
    "content_text",
    "find_sequence_preserving_last_n",
    "format_float",
    "validate_percentage",
]
