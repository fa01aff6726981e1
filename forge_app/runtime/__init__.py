"""The runtime layer: the agent loop, its model and tools, hooks and events, replay.

Depends on the compaction layer (engines), the summary layer through it,
``forge_domain`` and ``forge_app.errors``.
"""

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use: see forge_domain/_lazy.py
    from forge_app.runtime._conversation import Conversation
    from forge_app.runtime._dispatch import Hooks, NamedPlugin, discover_plugins
    from forge_app.runtime._events import (
        CompactionEndEvent,
        CompactionFailedEvent,
        CompactionReason,
        CompactionStartEvent,
        CompactionSuspendedEvent,
        ContextOverflowEvent,
        EndEvent,
        EndReason,
        HookEvent,
        RequestEvent,
        ResponseEvent,
        StartEvent,
        ToolCallEndEvent,
        ToolCallStartEvent,
        TurnEndEvent,
    )
    from forge_app.runtime._hookspecs import hookimpl, hookspec
    from forge_app.runtime._logging import configure_logging
    from forge_app.runtime._model import (
        ChatModel,
        FunctionModel,
        ModelRequest,
        ModelResponse,
        OpenAIChatModel,
        request_messages,
    )
    from forge_app.runtime._orchestrator import EngineFactory, Orchestrator, default_engine
    from forge_app.runtime._replay import Replay, ReplayModel, ReplayTools, ReplayTurn, replay
    from forge_app.runtime._retry import RetryPolicy
    from forge_app.runtime._telemetry import disable_telemetry, enable_telemetry
    from forge_app.runtime._tools import EngineTools, Tool, ToolExecutor, ToolRegistry
    from forge_app.runtime._turn_log import TurnLog, TurnRecord
    from forge_app.runtime.plugins import CompactionHandler, LoggingPlugin

__all__ = [
    "ChatModel",
    "CompactionEndEvent",
    "CompactionFailedEvent",
    "CompactionHandler",
    "CompactionReason",
    "CompactionStartEvent",
    "CompactionSuspendedEvent",
    "ContextOverflowEvent",
    "Conversation",
    "EndEvent",
    "EndReason",
    "EngineFactory",
    "EngineTools",
    "FunctionModel",
    "HookEvent",
    "Hooks",
    "LoggingPlugin",
    "ModelRequest",
    "ModelResponse",
    "NamedPlugin",
    "OpenAIChatModel",
    "Orchestrator",
    "Replay",
    "ReplayModel",
    "ReplayTools",
    "ReplayTurn",
    "RequestEvent",
    "ResponseEvent",
    "RetryPolicy",
    "StartEvent",
    "Tool",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolExecutor",
    "ToolRegistry",
    "TurnEndEvent",
    "TurnLog",
    "TurnRecord",
    "configure_logging",
    "default_engine",
    "disable_telemetry",
    "discover_plugins",
    "enable_telemetry",
    "hookimpl",
    "hookspec",
    "replay",
    "request_messages",
]

_EXPORTS = LazyExports(
    __name__,
    {
        "._conversation": ["Conversation"],
        "._dispatch": ["Hooks", "NamedPlugin", "discover_plugins"],
        "._events": [
            "CompactionEndEvent",
            "CompactionFailedEvent",
            "CompactionReason",
            "CompactionStartEvent",
            "CompactionSuspendedEvent",
            "ContextOverflowEvent",
            "EndEvent",
            "EndReason",
            "HookEvent",
            "RequestEvent",
            "ResponseEvent",
            "StartEvent",
            "ToolCallEndEvent",
            "ToolCallStartEvent",
            "TurnEndEvent",
        ],
        "._hookspecs": ["hookimpl", "hookspec"],
        "._logging": ["configure_logging"],
        "._model": [
            "ChatModel",
            "FunctionModel",
            "ModelRequest",
            "ModelResponse",
            "OpenAIChatModel",
            "request_messages",
        ],
        "._orchestrator": ["EngineFactory", "Orchestrator", "default_engine"],
        "._retry": ["RetryPolicy"],
        "._telemetry": ["disable_telemetry", "enable_telemetry"],
        "._replay": ["Replay", "ReplayModel", "ReplayTools", "ReplayTurn", "replay"],
        "._tools": ["EngineTools", "Tool", "ToolExecutor", "ToolRegistry"],
        "._turn_log": ["TurnLog", "TurnRecord"],
        ".plugins": ["CompactionHandler", "LoggingPlugin"],
    },
)


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)
