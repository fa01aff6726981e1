"""The hook ``forge-compact run`` registers on its conversation (imported when it runs)."""

from __future__ import annotations

from forge_app.runtime._hookspecs import hookimpl


class CompactionFailures:
    """Counts the compactions of a run that could not complete (``compaction_failed``)."""

    name = "run_compaction_failures"
    """The name it is registered under, on the conversation's own hooks."""

    def __init__(self) -> None:
        """Start at zero."""
        self.count = 0

    @hookimpl
    def forge_on_compaction_failed(self) -> None:
        """Count one more."""
        self.count += 1
