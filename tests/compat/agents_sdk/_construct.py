"""The one change to the Agents SDK's tests: ``SQLiteSession(...)`` builds a ForgeSession.

It wraps the SDK's own ``SQLiteSession``, built from the same arguments, as a user swaps
ours in (``ForgeSession(session_id, store=SQLiteSession(...))``). Class attributes the tests
read (``SQLiteSession._file_locks`` …) are the SDK class's own.
"""

from __future__ import annotations

from typing import Any

import agents

from forge_app.adapters import ForgeSession


class SQLiteSession(agents.SQLiteSession):
    """Builds ``ForgeSession(session_id, store=agents.SQLiteSession(session_id, ...))``."""

    def __new__(cls, session_id: str, *args: Any, **kwargs: Any) -> Any:
        return ForgeSession(session_id, store=agents.SQLiteSession(session_id, *args, **kwargs))
