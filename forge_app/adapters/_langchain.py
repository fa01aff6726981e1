"""A LangChain v1 agent middleware that compacts with forge-compact.

:class:`ForgeCompactionMiddleware` is a drop-in for LangChain's
``SummarizationMiddleware`` in ``create_agent(..., middleware=[...])``: before
each model call it converts the state's messages to a :class:`Context`, lets
the agent's engine compact them when a trigger fires, and replaces the state's
messages the way ``SummarizationMiddleware`` does (``RemoveMessage`` of
``REMOVE_ALL_MESSAGES``, then the new list). Messages the compaction did not
touch go back as the original objects; the summary is a ``HumanMessage``
marked ``lc_source: summarization`` as LangChain's own. An ``AIMessage`` and its
``ToolMessage`` results are summarised together or kept together.

Triggers use LangChain's vocabulary: ``("tokens", N)``, ``("messages", N)``,
``("fraction", F)`` of the model's window, or a list of them (any one fires);
``keep=("messages", N)`` is the retention window. Everything else comes from the
agent's ``compact:`` settings.

A sync agent's compactions run on the middleware's own event loop (a thread
started on first use), the same for every call, so an HTTP client the engine
keeps (the ``llm`` engine's) never meets a closed loop. ``close()`` after sync
runs, ``aclose()`` after async ones (or ``with`` / ``async with``) releases the
engine's resources and stops that loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from langchain.agents.middleware.types import AgentMiddleware, AgentState
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from forge_app.adapters._compaction import Closing, HistoryCompactor, adapter_agent, load_templates
from forge_app.adapters._convert import (
    Added,
    Head,
    History,
    Kept,
    Rebuilt,
    assistant_turn,
    reported_usage,
    user_prompt,
)
from forge_app.errors import UnsupportedHistory
from forge_domain.agent import Agent
from forge_domain.compact import Compact
from forge_domain.context import Context
from forge_domain.engine import ContextEngine
from forge_domain.messages import ContextMessage, Role, ToolCall, ToolResult
from forge_domain.result import CompactionResult
from forge_domain.usage import Usage

__all__ = ["ForgeCompactionMiddleware"]  # ContextSize: documentation of the trigger type

load_templates()  # the one file a compaction reads, read here: an adapter may be built on a loop

ContextSize: TypeAlias = tuple[Literal["tokens", "messages", "fraction"], int | float]
"""LangChain's sizes: ``("tokens", 4000)``, ``("messages", 50)``, ``("fraction", 0.8)``."""

SUMMARY_SOURCE = {"lc_source": "summarization"}
"""``additional_kwargs`` of the summary, as LangChain's ``SummarizationMiddleware`` sets it."""


def _clauses(trigger: object) -> list[tuple[str, int | float]]:
    items = trigger if isinstance(trigger, list) else [trigger]
    clauses: list[tuple[str, int | float]] = []
    for item in items:
        if isinstance(item, Mapping):
            if len(item) != 1:
                raise ValueError(
                    f"trigger {dict(item)!r}: a clause with several conditions (AND) is not "
                    "supported; pass a list of single conditions (any one fires)"
                )
            item = next(iter(item.items()))
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ValueError(f"trigger {item!r}: expected ('tokens'|'messages'|'fraction', value)")
        kind, value = item
        if kind not in ("tokens", "messages", "fraction") or not isinstance(value, int | float):
            raise ValueError(f"trigger {item!r}: expected ('tokens'|'messages'|'fraction', value)")
        if value <= 0 or (kind == "fraction" and value > 1):
            raise ValueError(f"trigger {item!r}: the value must be > 0 (and <= 1 for a fraction)")
        clauses.append((kind, value))
    return clauses


def _window(model: str | BaseChatModel | None) -> int | None:
    if isinstance(model, BaseChatModel) and model.profile:
        window = model.profile.get("max_input_tokens")
        return window if isinstance(window, int) else None
    return None


def _settings(base: Agent, trigger: object, keep: ContextSize | None, window: int | None) -> Agent:
    """``base`` with a LangChain-style ``trigger`` and ``keep`` applied (any trigger fires).

    ``("tokens", N)`` sets the token threshold (the whole window may fill, not 70%
    of it); ``("fraction", F)`` sets the fraction of the window (the model's ``window``,
    which must be known); ``("messages", N)`` adds a message trigger, while the agent's
    token threshold stays as a safety net.
    """
    update: dict[str, object] = {}
    if trigger is not None:
        clauses = _clauses(trigger)
        tokens = [int(value) for kind, value in clauses if kind == "tokens"]
        messages = [int(value) for kind, value in clauses if kind == "messages"]
        fractions = [float(value) for kind, value in clauses if kind == "fraction"]
        if fractions and window is None:
            raise ValueError(
                "a ('fraction', F) trigger needs the model's window: pass context_length= "
                "or a chat model whose profile has max_input_tokens"
            )
        if tokens:
            update["token_threshold"] = min(tokens)
            update["token_threshold_percentage"] = 1.0
        if fractions:
            update["token_threshold_percentage"] = min(fractions)
        if messages:
            update["message_threshold"] = min(messages)
    if keep is not None:
        kind, value = keep
        if kind != "messages" or not isinstance(value, int) or value < 0:
            raise ValueError(f"keep {keep!r}: only ('messages', N) is supported")
        update["retention_window"] = value
    compact = Compact.model_validate({**base.compact.model_dump(), **update})
    return base.model_copy(update={"compact": compact})


def _text(message: BaseMessage) -> str:
    return str(message.text)


def _usage(message: AIMessage) -> Usage | None:
    """The usage the provider reported for ``message``, so token triggers see real counts."""
    reported = message.usage_metadata
    if not reported:
        return None
    return reported_usage(reported.get("input_tokens", 0), reported.get("output_tokens", 0))


class _Converter:
    def __init__(self) -> None:
        self.head = Head()

    def __call__(self, index: int, message: AnyMessage) -> list[ContextMessage]:
        out: ContextMessage | None
        if isinstance(message, SystemMessage):
            out = self.head.system(_text(message))
        elif isinstance(message, HumanMessage):
            out = user_prompt(_text(message))
        elif isinstance(message, AIMessage):
            calls = tuple(
                ToolCall(id=call["id"] or "", name=call["name"], arguments=json.dumps(call["args"]))
                for call in message.tool_calls
            )
            out = assistant_turn([_text(message)], calls, _usage(message))
            if out is None:
                return []
        elif isinstance(message, ToolMessage):
            out = ToolResult(
                call_id=message.tool_call_id,
                name=message.name,
                content=_text(message),
                is_error=message.status == "error",
            )
        else:
            raise UnsupportedHistory("LangChain", index, type(message).__name__)
        self.head.read(out)
        return [out]


def _new_message(message: ContextMessage) -> BaseMessage:
    if isinstance(message, ToolResult):
        status: Literal["success", "error"] = "error" if message.is_error else "success"
        return ToolMessage(message.text, tool_call_id=message.call_id, status=status)
    if message.role == Role.ASSISTANT:
        calls = [
            {"name": call.name, "args": json.loads(call.arguments), "id": call.id}
            for call in message.tool_calls or ()
        ]
        return AIMessage(message.text, tool_calls=calls)
    if message.role == Role.SYSTEM:
        return SystemMessage(message.text)
    return HumanMessage(message.text, additional_kwargs=dict(SUMMARY_SOURCE))


class ForgeCompactionMiddleware(AgentMiddleware[AgentState[Any], Any, Any], Closing):
    """Compacts an agent's messages before each model call (for ``create_agent``).

    One instance per conversation (engines keep state per conversation), closed
    when it is over (``with``, or :meth:`close`; ``async with`` / :meth:`aclose`
    after ``ainvoke``)::

        with ForgeCompactionMiddleware(trigger=("tokens", 20_000), keep=("messages", 6)) as m:
            agent = create_agent(model, tools=[...], middleware=[m])
            agent.invoke({"messages": [...]})
    """

    def __init__(
        self,
        model: str | BaseChatModel | None = None,
        *,
        trigger: ContextSize | Sequence[ContextSize] | None = None,
        keep: ContextSize | None = None,
        settings: Agent | Compact | None = None,
        engine: ContextEngine | None = None,
        context_length: int | None = None,
    ) -> None:
        """Compact with the agent's settings, ``trigger`` and ``keep`` taking precedence.

        Args:
            model: as ``SummarizationMiddleware``'s; only its profile's ``max_input_tokens``
                is read (for ``("fraction", F)``). Summaries come from the engine.
            trigger: when to compact (any one fires); None: the agent's triggers.
            keep: ``("messages", N)``: the retention window.
            settings: an :class:`Agent` or :class:`Compact` settings (defaults when None).
            engine: a ready engine; else the one ``compact.engine`` names. A ready engine
                compacts by the triggers of the agent it was built for: ``trigger`` and
                ``keep`` do not reach it (the window does).
            context_length: the model's window (else the model's profile, else the agent's).
        """
        super().__init__()
        window = context_length if context_length is not None else _window(model)
        agent = _settings(adapter_agent(settings, window), trigger, keep, window)
        self.compactor = HistoryCompactor(agent, engine=engine, context_length=window)

    @property
    def compactions(self) -> list[CompactionResult]:
        """Every compaction applied so far, oldest first."""
        return self.compactor.compactions

    def _history(self, state: AgentState[Any]) -> History[AnyMessage]:
        return History(list(state["messages"]), _Converter(), self.compactor.restore)

    def _update(
        self, history: History[AnyMessage], compacted: Context | None
    ) -> dict[str, Any] | None:
        if compacted is None:
            return None
        out: list[BaseMessage] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]
        for segment in history.splice(compacted):
            match segment:
                case Kept(item=item):
                    out.append(item)
                case Rebuilt(item=item, messages=(message, *_)):
                    out.append(item.model_copy(update={"content": message.text}))
                case Added(messages=added):
                    out.extend(_new_message(message) for message in added)
                case _:
                    pass
        return {"messages": out}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Compact the state's messages when a trigger fires (sync agents).

        The engine runs on the middleware's own event loop (a thread), the same for
        every call until :meth:`close`.
        """
        history = self._history(state)
        return self._update(history, self.compactor.compact_blocking(history.context))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Compact the state's messages when a trigger fires (async agents)."""
        history = self._history(state)
        return self._update(history, await self.compactor.compact(history.context))

    def close(self) -> None:
        """Release what the engine holds (the ``llm`` engine's HTTP client), after sync runs.

        Also stops the middleware's event loop; ``with middleware:`` calls it.
        """
        self.compactor.close()

    async def aclose(self) -> None:
        """Release what the engine holds, after async runs (``async with middleware:``)."""
        await self.compactor.aclose()
