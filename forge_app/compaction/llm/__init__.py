"""The ``llm`` engine: Hermes-style model-written summaries, checked against the frame."""

from forge_app.compaction.llm._coverage import Coverage, Facts, FailedOperation, check_coverage
from forge_app.compaction.llm._engine import LLMEngine
from forge_app.compaction.llm._guard import CompactionGuard
from forge_app.compaction.llm._prompt import END_MARKER, SUMMARY_PREFIX
from forge_app.compaction.llm._serialize import SerializationLimits
from forge_app.compaction.llm._splice import sanitize_tool_pairs

__all__ = [
    "END_MARKER",
    "SUMMARY_PREFIX",
    "CompactionGuard",
    "Coverage",
    "Facts",
    "FailedOperation",
    "LLMEngine",
    "SerializationLimits",
    "check_coverage",
    "sanitize_tool_pairs",
]
