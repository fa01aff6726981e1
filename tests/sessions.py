"""Where the shared real sessions live, for every test that reads them.

Looked up in order: ``$FORGE_COMPACT_SESSIONS``, ``../shared/data/sessions`` next to the
repository (the layout of the development and CI machines), then ``/work/shared/data/sessions``.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]


def _find_sessions() -> Path:
    candidates = [
        Path(os.environ["FORGE_COMPACT_SESSIONS"])
        if "FORGE_COMPACT_SESSIONS" in os.environ
        else None,
        _REPO.parent / "shared" / "data" / "sessions",
        Path("/work/shared/data/sessions"),
    ]
    for candidate in candidates:
        if candidate is not None and candidate.is_dir():
            return candidate
    return _REPO.parent / "shared" / "data" / "sessions"


SESSIONS = _find_sessions()
"""The directory of real OpenAI-format sessions (may not exist on a foreign machine)."""


def session_paths() -> list[Path]:
    """Every ``*.json`` session, sorted (empty when the directory is absent)."""
    return sorted(SESSIONS.glob("*.json"))
