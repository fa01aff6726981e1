"""What ``--format`` names, in a module that imports nothing: the command line builds its
options from it before it reads any file (plans/008-performance.md, round 6b)."""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["FileFormat"]

FileFormat: TypeAlias = Literal["openai", "anthropic", "responses", "claude-code", "codex"]
"""What ``--format`` names: a transcript format, or an agent log wrapping one
(``claude-code``: Anthropic turns; ``codex``: Responses items; :mod:`._containers`)."""
