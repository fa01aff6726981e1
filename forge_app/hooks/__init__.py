"""Built-in plugins: compaction and structured logging."""

from forge_app.hooks.compaction import MAX_INEFFECTIVE_COMPACTIONS, CompactionHandler
from forge_app.hooks.logging import LoggingPlugin

__all__ = ["MAX_INEFFECTIVE_COMPACTIONS", "CompactionHandler", "LoggingPlugin"]
