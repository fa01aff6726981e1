"""The one change to pydantic-ai's tests: each compaction-type processor becomes ours.

pydantic-ai has no built-in compaction processor; its history-processor tests use small
functions that drop or replace messages (keep the last N, drop the model's answers, replace
the history). Each becomes a :class:`ForgeHistoryProcessor` whose trigger fires on every
request, keeping the last ``keep`` messages verbatim, so every request of every test runs
through a compaction (conversion, the engine, and back) with blockbuster on: the
``message_threshold`` asks for a bound, so the history comes back as one summary and the last
``keep`` messages (and leading system prompts). A no-op processor becomes ours with its default
settings (no message bound; a token threshold those histories never reach), which hands the
list back as it is. Processors that only rewrite prompts (a prefix from ``ctx.deps``) stay
theirs: ours composes with them.
"""

from __future__ import annotations

from forge_app.adapters import ForgeHistoryProcessor
from forge_domain import Compact


def forge_processor(keep: int = 1) -> ForgeHistoryProcessor:
    """Ours, in place of a processor that keeps at most the last ``keep`` messages.

    Compacts as soon as the history holds more (``message_threshold=keep + 1``) and keeps the
    last ``keep`` messages as they are (``retention_window=keep``).
    """
    return ForgeHistoryProcessor(Compact(message_threshold=keep + 1, retention_window=keep))


def forge_no_op() -> ForgeHistoryProcessor:
    """Ours, in place of a processor that returns the messages it is given: no trigger of the
    default settings fires on a history of a few words."""
    return ForgeHistoryProcessor()
