"""The compaction layer: the compactor, the engines and their tiers.

Pick an engine by name with :func:`resolve_engine` (``compact.engine`` of the
agent); third-party engines register in the ``forge.engines`` entry-point group.
Depends on the summary layer, ``forge_domain`` and ``forge_app.errors``.
"""

from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_app.compaction._frame_engine import FrameEngine
from forge_app.compaction._pruning import Pruned, prune_tool_outputs
from forge_app.compaction._registry import (
    ENTRY_POINT_GROUP,
    available_engines,
    compress_with,
    resolve_engine,
)
from forge_app.compaction._tiers import TieredEngine
from forge_app.compaction.llm import LLMEngine
from forge_domain import close_engine

__all__ = [
    "ENTRY_POINT_GROUP",
    "Compactor",
    "FrameEngine",
    "LLMEngine",
    "Pruned",
    "TieredEngine",
    "available_engines",
    "close_engine",
    "compress_with",
    "is_summary_message",
    "prune_tool_outputs",
    "resolve_engine",
]
