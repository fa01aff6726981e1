"""Context engines: the deterministic ``frame`` engine, the ``llm`` engine and their tiers.

Pick one by name with :func:`resolve_engine` (``compact.engine`` of the agent);
third-party engines register in the ``forge.engines`` entry-point group.
"""

from forge_app.engines.boundaries import align_to_call, head_end, tail_start
from forge_app.engines.coverage import (
    Coverage,
    Facts,
    check_coverage,
    facts_of,
    with_verified_facts,
)
from forge_app.engines.frame import FrameEngine
from forge_app.engines.guard import CompactionGuard
from forge_app.engines.llm import LLMEngine
from forge_app.engines.prompt import (
    END_MARKER,
    SECTIONS,
    SUMMARY_PREFIX,
    VERIFIED_FACTS_HEADING,
    framed,
    summary_body,
    summary_prompt,
)
from forge_app.engines.pruning import (
    PRUNED_MARKER,
    Pruned,
    duplicate_pointer,
    placeholder,
    prune_tool_outputs,
)
from forge_app.engines.registry import (
    BUILT_IN,
    ENTRY_POINT_GROUP,
    available_engines,
    resolve_engine,
)
from forge_app.engines.serialize import SerializationLimits, serialize_message, serialize_span
from forge_app.engines.span import Span, find_span, is_engine_summary
from forge_app.engines.splice import (
    STUB_RESULT,
    sanitize_tool_pairs,
    splice_summary,
    summary_role,
)
from forge_app.engines.tiers import TieredEngine

__all__ = [
    "BUILT_IN",
    "END_MARKER",
    "ENTRY_POINT_GROUP",
    "PRUNED_MARKER",
    "SECTIONS",
    "STUB_RESULT",
    "SUMMARY_PREFIX",
    "VERIFIED_FACTS_HEADING",
    "CompactionGuard",
    "Coverage",
    "Facts",
    "FrameEngine",
    "LLMEngine",
    "Pruned",
    "SerializationLimits",
    "Span",
    "TieredEngine",
    "align_to_call",
    "available_engines",
    "check_coverage",
    "duplicate_pointer",
    "facts_of",
    "find_span",
    "framed",
    "head_end",
    "is_engine_summary",
    "placeholder",
    "prune_tool_outputs",
    "resolve_engine",
    "sanitize_tool_pairs",
    "serialize_message",
    "serialize_span",
    "splice_summary",
    "summary_body",
    "summary_prompt",
    "summary_role",
    "tail_start",
    "with_verified_facts",
]
