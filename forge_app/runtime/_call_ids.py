"""Tool-call ids made unique on receipt, before the assistant message joins the context.

Some OpenAI-compatible servers (LiteLLM's mock, small local servers) send ``call_1``
for every call of every turn, or no id at all. A context that holds an id twice
is rejected by providers and by :func:`~forge_domain.find_violations`
(``duplicate_tool_call_id``), so every compaction of it would fail. An incoming
id that is empty, already in the context, repeated within the message, or one
this conversation already gave out is therefore replaced by
``<provider id>-<n>`` (``call-<n>`` for an empty one), where ``n`` starts at 2
plus the renames so far in the conversation and steps past anything taken: the
same responses give the same ids, and no id is ever given out twice. ``-`` keeps
the ids inside ``[A-Za-z0-9_-]``, which Anthropic-backed endpoints require.

The tool results answer the new ids; ``conversation.call_id_aliases`` maps each
new id back to the provider's, and each rename is logged as ``call_id_renamed``.
"""

from __future__ import annotations

import structlog

from forge_app.runtime._conversation import Conversation
from forge_app.runtime._model import ModelResponse
from forge_domain import ToolCall

__all__: list[str] = []  # the orchestrator's step, not a library API

_log = structlog.get_logger("forge_app")

EMPTY_ID_BASE = "call"
"""What a fresh id starts with when the provider sent an empty one."""


def with_unique_call_ids(conversation: Conversation, response: ModelResponse) -> ModelResponse:
    """``response`` with every tool-call id unique in ``conversation`` (itself when it already is).

    Records each rename in ``conversation.call_id_aliases`` and logs ``call_id_renamed``.
    """
    calls = response.message.tool_calls or ()
    in_context = conversation.call_ids()
    aliases = conversation.call_id_aliases
    renames_before = len(aliases)
    seen: set[str] = set()

    def is_taken(call_id: str) -> bool:
        return not call_id or call_id in in_context or call_id in aliases or call_id in seen

    unique: list[ToolCall] = []
    for received in calls:
        call = received
        if is_taken(received.id):
            number = len(aliases) + 2
            while is_taken(fresh := f"{received.id or EMPTY_ID_BASE}-{number}"):
                number += 1
            aliases[fresh] = received.id
            _log.info(
                "call_id_renamed",
                conversation_id=conversation.id,
                provider_id=received.id,
                call_id=fresh,
            )
            call = received.model_copy(update={"id": fresh})
        seen.add(call.id)
        unique.append(call)
    if len(aliases) == renames_before:
        return response
    message = response.message.model_copy(update={"tool_calls": tuple(unique)})
    return response.model_copy(update={"message": message})
