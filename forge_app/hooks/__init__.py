"""Built-in plugins: compaction and structured logging."""

from forge_app.hooks.compaction import CompactionHandler
from forge_app.hooks.logging import LoggingPlugin

__all__ = ["CompactionHandler", "LoggingPlugin"]
