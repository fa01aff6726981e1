"""The compaction layer: the compactor, the engines and their tiers.

Pick an engine by name with :func:`resolve_engine` (``compact.engine`` of the
agent); third-party engines register in the ``forge.engines`` entry-point group.
Depends on the summary layer, ``forge_domain`` and ``forge_app.errors``.

A name is imported from its module the first time it is read (``forge_domain/_lazy.py``):
a command that only asks whether a trigger fires (``_triggers``) imports no engine.
"""

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use: see forge_domain/_lazy.py
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

_EXPORTS = LazyExports(
    __name__,
    {
        "._compactor": ["Compactor", "is_summary_message"],
        "._frame_engine": ["FrameEngine"],
        "._pruning": ["Pruned", "prune_tool_outputs"],
        "._registry": ["ENTRY_POINT_GROUP", "available_engines", "compress_with", "resolve_engine"],
        "._tiers": ["TieredEngine"],
        ".llm": ["LLMEngine"],
        "forge_domain._engine": ["close_engine"],
    },
)

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


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)
