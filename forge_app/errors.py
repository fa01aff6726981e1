"""Errors raised by ``forge_app``.

::

    ForgeAppError
    ├── TemplateNotFound      the summary template (or its directory) is missing
    ├── CompactionFailed      a compaction could not complete; the input is untouched
    └── (more leaves are added by the hooks, engines and CLI modules)
"""

from __future__ import annotations

from pathlib import Path


class ForgeAppError(Exception):
    """Root of every error raised by ``forge_app``."""


class TemplateNotFound(ForgeAppError, FileNotFoundError):
    """The summary template could not be found."""

    def __init__(self, path: Path | str, name: str) -> None:
        self.path = Path(path)
        self.name = name
        super().__init__(f"summary template {name!r} not found in {self.path}")


class CompactionFailed(ForgeAppError):
    """A compaction could not complete; the conversation is unchanged.

    ``stage`` names the step that failed (``summary``, ``render``, ``validate`` …).
    """

    def __init__(self, stage: str, problem: str) -> None:
        self.stage = stage
        self.problem = problem
        super().__init__(f"compaction failed during {stage}: {problem}")
