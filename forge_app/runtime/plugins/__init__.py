"""Built-in plugins: compaction and structured logging."""

from forge_app.runtime.plugins._compaction import CompactionHandler
from forge_app.runtime.plugins._logging import LoggingPlugin

__all__ = ["CompactionHandler", "LoggingPlugin"]
