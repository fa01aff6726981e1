"""Errors raised by ``forge_app``.

::

    ForgeAppError
    ├── TemplateNotFound      the summary template (or its directory) is missing
    ├── CompactionFailed      a compaction could not complete; the input is untouched
    ├── TranscriptError       a transcript file cannot be used (path at fault)
    │   ├── TranscriptNotFound    the file does not exist or cannot be read
    │   ├── MalformedJson         the file is not JSON / JSONL (line and column)
    │   └── NotATranscript        the JSON is not a list of valid OpenAI messages
    ├── OutputNotWritten      an output file could not be written; nothing was left behind
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


class TranscriptError(ForgeAppError):
    """A transcript file cannot be used; ``path`` is the file at fault."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class TranscriptNotFound(TranscriptError, FileNotFoundError):
    """The transcript file does not exist or cannot be read."""


class MalformedJson(TranscriptError, ValueError):
    """The transcript is not valid JSON (or JSONL); ``line`` and ``column`` are 1-based."""

    def __init__(self, path: Path | str, line: int, column: int, problem: str) -> None:
        self.line = line
        self.column = column
        super().__init__(path, f"line {line} column {column}: invalid JSON: {problem}")


class NotATranscript(TranscriptError, ValueError):
    """The JSON is not a list of OpenAI messages; ``index`` names the bad message if any."""

    def __init__(self, path: Path | str, problem: str, index: int | None = None) -> None:
        self.index = index
        super().__init__(path, problem)


class OutputNotWritten(ForgeAppError, OSError):
    """An output file could not be written; no partial file was left behind."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"cannot write {path}: {problem}")
