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

Triggers and retention use LangChain's vocabulary whole (``_langchain_sizes``): a
``ContextSize`` tuple, an AND ``TriggerClause`` mapping or a list of either (any fires),
``None``/``[]`` never; ``keep`` in messages, tokens or a fraction of the window (20 messages by
default); ``token_counter=``. The middleware decides when and where the kept tail starts;
everything before it (but leading system messages) becomes one summary, written by the agent's
engine, or by the frame when the engine would leave it (user messages only, a few words): the
bound holds even when the summary saves nothing. The task goes into the summary word for word,
or stays a message of its own when the summary cannot quote it whole
(``HistoryCompactor.compact_before(whole=True)``). Everything else comes from the agent's
``compact:`` settings.

A sync agent's compactions run on the middleware's own event loop (a thread
started on first use), the same for every call, so an HTTP client the engine
keeps (the ``llm`` engine's) never meets a closed loop. ``close()`` after sync
runs, ``aclose()`` after async ones (or ``with`` / ``async with``) releases the
engine's resources and stops that loop.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
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
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from forge_app.adapters._compaction import Closing, HistoryCompactor, adapter_agent, cut_agent
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
from forge_app.adapters._langchain_sizes import (
    DEFAULT_KEEP,
    ContextSize,
    Kind,
    Trigger,
    context_size,
    cut_point,
    fires,
    trigger_clauses,
)
from forge_app.errors import UnsupportedHistory
from forge_domain import (
    Agent,
    Compact,
    CompactionResult,
    Context,
    ContextEngine,
    ContextMessage,
    Role,
    ToolCall,
    ToolResult,
    Usage,
)

__all__ = ["ForgeCompactionMiddleware"]

SUMMARY_SOURCE = {"lc_source": "summarization"}
"""``additional_kwargs`` of the summary, as LangChain's ``SummarizationMiddleware`` sets it."""
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"
"""The first line of the summary, as LangChain's ``SummarizationMiddleware`` writes it (the
engine's summary follows; it is taken off again when the history is read back)."""

TokenCounter: TypeAlias = Callable[[Sequence[BaseMessage]], int]
"""LangChain's token counter: the tokens of a list of messages."""


class _AgentDefault:
    """The marker of an omitted ``trigger``: the agent's token threshold decides."""


AGENT_DEFAULT = _AgentDefault()

_NEEDS_PROFILE = (
    "Model profile information is required to use fractional token limits, and is "
    "unavailable for the specified model: pass context_length= or a chat model whose "
    "profile has max_input_tokens"
)


def _window(model: str | BaseChatModel | None) -> int | None:
    profile = getattr(model, "profile", None) if isinstance(model, BaseChatModel) else None
    window = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return window if isinstance(window, int) and not isinstance(window, bool) else None


def _copy(trigger: object) -> object:
    """``trigger`` with its mappings copied: a caller's later edits do not reach it."""
    if isinstance(trigger, Mapping):
        return dict(trigger)
    if isinstance(trigger, list):
        return [dict(item) if isinstance(item, Mapping) else item for item in trigger]
    return trigger


def _engine_agent(base: Agent, clauses: list[dict[Kind, int | float]]) -> Agent:
    """``base`` for the engine: the middleware decides when and what to keep, the engine
    summarises everything before the cut (retention 0); a token trigger sets the threshold
    the summary's budget derives from."""
    tokens = [
        int(value) for clause in clauses for kind, value in clause.items() if kind == "tokens"
    ]
    if not tokens:
        return cut_agent(base)
    return cut_agent(base, token_threshold=min(tokens), token_threshold_percentage=1.0)


def _text(message: BaseMessage) -> str:
    return str(message.text)


def _summary_text(message: HumanMessage) -> str:
    """The text of ``message``, without :data:`SUMMARY_PREFIX` when it is a summary we wrote."""
    text = _text(message)
    ours = message.additional_kwargs.get("lc_source") == SUMMARY_SOURCE["lc_source"]
    return text.removeprefix(SUMMARY_PREFIX) if ours else text


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
            out = user_prompt(_summary_text(message))
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
    return HumanMessage(SUMMARY_PREFIX + message.text, additional_kwargs=dict(SUMMARY_SOURCE))


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
        trigger: Trigger | _AgentDefault = AGENT_DEFAULT,
        keep: ContextSize | None = None,
        token_counter: TokenCounter | None = None,
        settings: Agent | Compact | None = None,
        engine: ContextEngine | None = None,
        context_length: int | None = None,
        max_tokens_before_summary: int | None = None,
        messages_to_keep: int | None = None,
    ) -> None:
        """Compact as ``SummarizationMiddleware`` would; the agent's engine writes the summary.

        Args:
            model: as ``SummarizationMiddleware``'s; only its profile's ``max_input_tokens``
                is read (for ``fraction`` sizes). Summaries come from the engine.
            trigger: when to compact, in LangChain's vocabulary (a ``ContextSize``, an AND
                ``TriggerClause`` mapping, or a list of either, any of which fires); ``None``
                or ``[]``: never. Omitted: ``("tokens", T)`` with the agent's threshold ``T``
                (70% of the window by default), plus ``("messages", N)`` when the agent
                sets ``message_threshold``.
            keep: the recent part kept word for word, ``("messages", N)``, ``("tokens", N)``
                or ``("fraction", F)``. Omitted: the agent's ``retention_window`` messages
                when ``settings`` are given, else LangChain's 20 messages.
            token_counter: counts a list of messages for the token conditions and a
                token ``keep``; omitted: forge-compact's count (anchored on the tokens the
                provider reported) for triggers and LangChain's approximate count for ``keep``.
            settings: an :class:`Agent` or :class:`Compact` settings (defaults when None).
            engine: a ready engine (its own agent's retention applies within the summarised
                part); else the one ``compact.engine`` names.
            context_length: the model's window (else the model's profile, else the agent's).
            max_tokens_before_summary: deprecated (as in LangChain): ``trigger=("tokens", N)``,
                used when no ``trigger`` is given.
            messages_to_keep: deprecated (as in LangChain): ``keep=("messages", N)``, used when
                no ``keep`` is given.

        Raises:
            ValueError: a size is invalid, or a ``fraction`` size without a known window.
            TypeError: ``trigger`` is neither a tuple, a mapping nor a list of them.
        """
        super().__init__()
        if max_tokens_before_summary is not None:
            warnings.warn(
                "max_tokens_before_summary is deprecated. Use trigger=('tokens', value) instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            if trigger is None or isinstance(trigger, _AgentDefault):
                trigger = ("tokens", max_tokens_before_summary)
        if messages_to_keep is not None:
            warnings.warn(
                "messages_to_keep is deprecated. Use keep=('messages', value) instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            if keep is None:
                keep = ("messages", messages_to_keep)
        self.model = model
        """The chat model given (its profile gives the window)."""
        window = context_length if context_length is not None else _window(model)
        base = adapter_agent(settings, window)
        if isinstance(trigger, _AgentDefault):
            threshold: ContextSize = ("tokens", max(1, base.compaction_threshold(window)))
            messages = base.compact.message_threshold
            trigger = [threshold, ("messages", messages)] if messages else threshold
        self.trigger: object = _copy(trigger)
        """The trigger, as given (a copy)."""
        self._clauses = trigger_clauses(self.trigger)
        if keep is None:
            retained = base.compact.retention_window if settings is not None else 0
            keep = ("messages", retained) if retained else DEFAULT_KEEP
        self.keep: ContextSize = context_size(keep, "keep")
        """What is kept word for word after a summary."""
        self.token_counter: TokenCounter | None = token_counter
        """Counts a list of messages' tokens (None: forge-compact's count)."""
        uses_fraction = self.keep[0] == "fraction" or any(
            "fraction" in clause for clause in self._clauses
        )
        if uses_fraction and window is None:
            raise ValueError(_NEEDS_PROFILE)
        self._window = window
        agent = _engine_agent(base, self._clauses)
        self.compactor = HistoryCompactor(
            agent, engine=engine, context_length=window, engine_tail=False
        )

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
                    ours = isinstance(item, HumanMessage) and _summary_text(item) != _text(item)
                    text = SUMMARY_PREFIX + message.text if ours else message.text
                    out.append(item.model_copy(update={"content": text}))
                case Added(messages=added):
                    out.extend(_new_message(message) for message in added)
                case _:
                    pass
        return {"messages": out}

    def _cut(self, state: AgentState[Any], history: History[AnyMessage]) -> int:
        """Where the verbatim tail starts, or 0 when no trigger fires (or nothing is before it)."""
        messages: list[AnyMessage] = list(state["messages"])
        counter = self.token_counter
        tokens = counter(messages) if counter else int(history.context.token_count())
        if not fires(self._clauses, len(messages), tokens, self._window):
            return 0
        suffix = counter or count_tokens_approximately
        return cut_point(
            len(messages),
            self.keep,
            self._window,
            lambda index: int(suffix(messages[index:])),
            lambda index: isinstance(messages[index], ToolMessage),
        )

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Compact the state's messages when a trigger fires (sync agents).

        The engine runs on the middleware's own event loop (a thread), the same for
        every call until :meth:`close`.
        """
        history = self._history(state)
        cut = history.cut(self._cut(state, history))
        if cut <= 0:
            return None
        compacted = self.compactor.compact_before_blocking(history.context, cut, whole=True)
        return self._update(history, compacted)

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Compact the state's messages when a trigger fires (async agents)."""
        history = self._history(state)
        cut = history.cut(self._cut(state, history))
        if cut <= 0:
            return None
        compacted = await self.compactor.compact_before(history.context, cut, whole=True)
        return self._update(history, compacted)

    def close(self) -> None:
        """Release what the engine holds (the ``llm`` engine's HTTP client), after sync runs.

        Also stops the middleware's event loop; ``with middleware:`` calls it.
        """
        self.compactor.close()

    async def aclose(self) -> None:
        """Release what the engine holds, after async runs (``async with middleware:``)."""
        await self.compactor.aclose()
