"""What a conversation saves with each stored turn besides its messages, and takes back.

The counters, the usage, the call-id aliases and the loop guard: written by
:meth:`Orchestrator.persist <forge_app.runtime.Orchestrator.persist>` and read by
:meth:`~forge_app.runtime.Orchestrator.resume`, so the two sides of the saved shape are
written in one place (the recorder adds the engine's state, ``"engine"``, when it stores
the turn).
"""

from __future__ import annotations

from forge_app.runtime._conversation import Conversation
from forge_app.runtime.plugins import CompactionHandler
from forge_app.store import ArchivingEngine
from forge_domain import JsonObject, Usage

__all__: list[str] = []  # internal: saved_state and restore_state, for the orchestrator


def saved_state(conversation: Conversation) -> JsonObject:
    """The state :func:`restore_state` takes back, as JSON (without the engine's)."""
    handler = conversation.hooks.plugin(CompactionHandler.name)
    return {
        "turns": conversation.turns,
        "compactions": conversation.compactions,
        "usage": conversation.usage.model_dump(mode="json"),
        "guard": handler.state() if isinstance(handler, CompactionHandler) else None,
        "call_id_aliases": dict(conversation.call_id_aliases),
    }


def restore_state(conversation: Conversation, runtime: JsonObject) -> None:
    """Take back the counters, usage, loop guard and engine state saved with a turn."""
    turns, compactions = runtime.get("turns"), runtime.get("compactions")
    conversation.turns = turns if isinstance(turns, int) else 0
    conversation.compactions = compactions if isinstance(compactions, int) else 0
    usage, aliases = runtime.get("usage"), runtime.get("call_id_aliases")
    if isinstance(usage, dict):
        conversation.usage = Usage.model_validate(usage)
    if isinstance(aliases, dict):
        conversation.call_id_aliases = {k: v for k, v in aliases.items() if isinstance(v, str)}
    handler = conversation.hooks.plugin(CompactionHandler.name)
    guard, engine = runtime.get("guard"), runtime.get("engine")
    if isinstance(handler, CompactionHandler) and isinstance(guard, dict):
        handler.restore(guard)
    if isinstance(handler, CompactionHandler) and isinstance(handler.engine, ArchivingEngine):
        handler.engine.restore(engine if isinstance(engine, dict) else {})
