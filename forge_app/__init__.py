"""forge_app: compaction engines, the agent loop and files, on top of ``forge_domain``.

The layers are packages, each importing only those below it (an import-linter
contract checks it)::

    forge_app.cli          the forge-compact command (its only user)
    forge_app.adapters     pydantic-ai, LangChain and Agents SDK adapters (extras)
    forge_app.evaluation   what ``forge-compact eval`` measures
    forge_app.runtime      orchestrator, model, tools, hooks and events, replay
    forge_app.files        agent files, transcript files, atomic writes
    forge_app.compaction   compactor, engines (frame, llm), tiers, pruning
    forge_app.store        session store: originals, archives of compactions, search
    forge_app.summary      frame template, transformers, bounds, redaction
    forge_app.errors       the error tree (used by every layer)

This module re-exports what most users need; everything else is importable
from its layer package. A name is imported from its module the first time it is
read (``forge_domain/_lazy.py``): a new export goes in the ``TYPE_CHECKING`` imports,
``__all__`` and the ``_EXPORTS`` table.
"""

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use: see forge_domain/_lazy.py
    from forge_app.compaction import (
        Compactor,
        FrameEngine,
        LLMEngine,
        TieredEngine,
        available_engines,
        resolve_engine,
    )
    from forge_app.errors import (
        CompactionFailed,
        ContextDoesNotFit,
        ContextLengthExceeded,
        ForgeAppError,
        InvalidAgentFile,
        ModelCallFailed,
        ProviderUnavailable,
        TranscriptError,
    )
    from forge_app.files import (
        Transcript,
        default_agent,
        load_agent,
        load_agents,
        read_transcript,
        write_transcript,
    )
    from forge_app.runtime import (
        ChatModel,
        CompactionHandler,
        Conversation,
        FunctionModel,
        ModelRequest,
        ModelResponse,
        OpenAIChatModel,
        Orchestrator,
        Replay,
        ReplayTurn,
        RetryPolicy,
        Tool,
        ToolRegistry,
        configure_logging,
        discover_plugins,
        enable_telemetry,
        hookimpl,
        replay,
    )
    from forge_app.store import SessionStore, open_store
    from forge_app.summary import SummaryFrame, SummaryTransformer

__all__ = [
    "ChatModel",
    "CompactionFailed",
    "CompactionHandler",
    "Compactor",
    "ContextDoesNotFit",
    "ContextLengthExceeded",
    "Conversation",
    "ForgeAppError",
    "FrameEngine",
    "FunctionModel",
    "InvalidAgentFile",
    "LLMEngine",
    "ModelCallFailed",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChatModel",
    "Orchestrator",
    "ProviderUnavailable",
    "Replay",
    "ReplayTurn",
    "RetryPolicy",
    "SessionStore",
    "SummaryFrame",
    "SummaryTransformer",
    "TieredEngine",
    "Tool",
    "ToolRegistry",
    "Transcript",
    "TranscriptError",
    "available_engines",
    "configure_logging",
    "default_agent",
    "discover_plugins",
    "enable_telemetry",
    "hookimpl",
    "load_agent",
    "load_agents",
    "open_store",
    "read_transcript",
    "replay",
    "resolve_engine",
    "write_transcript",
]

_EXPORTS = LazyExports(
    __name__,
    {
        ".compaction": [
            "Compactor",
            "FrameEngine",
            "LLMEngine",
            "TieredEngine",
            "available_engines",
            "resolve_engine",
        ],
        ".errors": [
            "CompactionFailed",
            "ContextDoesNotFit",
            "ContextLengthExceeded",
            "ForgeAppError",
            "InvalidAgentFile",
            "ModelCallFailed",
            "ProviderUnavailable",
            "TranscriptError",
        ],
        ".files": [
            "Transcript",
            "default_agent",
            "load_agent",
            "load_agents",
            "read_transcript",
            "write_transcript",
        ],
        ".runtime": [
            "ChatModel",
            "CompactionHandler",
            "Conversation",
            "FunctionModel",
            "ModelRequest",
            "ModelResponse",
            "OpenAIChatModel",
            "Orchestrator",
            "Replay",
            "ReplayTurn",
            "RetryPolicy",
            "Tool",
            "ToolRegistry",
            "configure_logging",
            "discover_plugins",
            "enable_telemetry",
            "hookimpl",
            "replay",
        ],
        ".store": ["SessionStore", "open_store"],
        ".summary": ["SummaryFrame", "SummaryTransformer"],
    },
)


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)
