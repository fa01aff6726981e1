"""Context engines: the deterministic ``frame`` engine, the ``llm`` engine and their tiers.

Pick one by name with :func:`resolve_engine` (``compact.engine`` of the agent);
third-party engines register in the ``forge.engines`` entry-point group.
"""

from forge_app.engines.coverage import Coverage, Facts, check_coverage
from forge_app.engines.frame import FrameEngine
from forge_app.engines.guard import CompactionGuard
from forge_app.engines.llm import LLMEngine
from forge_app.engines.prompt import END_MARKER, SUMMARY_PREFIX
from forge_app.engines.pruning import Pruned, prune_tool_outputs
from forge_app.engines.registry import ENTRY_POINT_GROUP, available_engines, resolve_engine
from forge_app.engines.serialize import SerializationLimits
from forge_app.engines.splice import sanitize_tool_pairs
from forge_app.engines.tiers import TieredEngine

__all__ = [
    "END_MARKER",
    "ENTRY_POINT_GROUP",
    "SUMMARY_PREFIX",
    "CompactionGuard",
    "Coverage",
    "Facts",
    "FrameEngine",
    "LLMEngine",
    "Pruned",
    "SerializationLimits",
    "TieredEngine",
    "available_engines",
    "check_coverage",
    "prune_tool_outputs",
    "resolve_engine",
    "sanitize_tool_pairs",
]
