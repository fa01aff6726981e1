"""A pydantic-ai history processor that compacts with forge-compact.

pydantic-ai calls a history processor with the run's ``ModelMessage`` list
before each model request. :class:`ForgeHistoryProcessor` converts it to a
:class:`Context` (system and user prompts, tool returns and retries, text,
thinking and tool calls), lets the agent's engine compact it when a trigger
fires, and converts back: every message the compaction did not touch comes
back as the original object; a message partly kept is rebuilt from the original
(its other parts, ids and metadata stay); the summary becomes a new
``ModelRequest`` with one ``UserPromptPart``. Parts pydantic-ai keeps for itself
(instruction, tool and settings deltas and baselines) are never summarised: when
their request is compacted away they move to the request that takes its place.
Native (provider-run) tool parts, files and provider compaction parts are kept
with their response, and summarised away with it.

A message bound (``Compact.message_threshold`` set) counts pydantic-ai messages: once the
history holds that many, or another trigger fires, everything before the last
``retention_window`` messages (the cut moved back to a call whose returns it would separate)
but the leading system prompts becomes one summary, also when the engine would leave it (user
prompts only, a few words): ``HistoryCompactor.compact_before(whole=True)``, as the LangChain
middleware does. The task goes into the summary word for word, or stays a prompt of its own
when the summary cannot quote it whole. Without ``message_threshold`` the agent's triggers and
engine decide alone (an automatic compaction, pruning first).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic_ai.messages import (
    BaseToolCallPart,
    BaseToolReturnPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from forge_app.adapters._compaction import (
    AsyncClosing,
    HistoryCompactor,
    adapter_agent,
    cut_agent,
)
from forge_app.adapters._convert import (
    Added,
    Dropped,
    Head,
    History,
    Kept,
    Rebuilt,
    Segment,
    assistant_turn,
    calls_kept_whole,
    reported_usage,
    user_prompt,
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
    TextMessage,
    ToolCall,
    ToolResult,
)

if TYPE_CHECKING:
    from pydantic_ai.capabilities import ProcessHistory

__all__ = ["ForgeHistoryProcessor"]

_ERROR_OUTCOMES = ("failed", "retried")


def _prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    pieces = [
        item if isinstance(item, str) else f"[{type(item).__name__}]" for item in part.content
    ]
    return "\n".join(pieces)


class _Converter:
    """Converts one history; remembers which part each message came from."""

    def __init__(self) -> None:
        self.head = Head()
        self.parts: dict[int, list[ModelRequestPart | ModelResponsePart]] = {}

    def __call__(self, index: int, message: ModelMessage) -> list[ContextMessage]:
        if isinstance(message, ModelRequest):
            return self._request(index, message)
        if isinstance(message, ModelResponse):
            return self._response(index, message)
        raise UnsupportedHistory("pydantic-ai", index, type(message).__name__)

    def _request(self, index: int, request: ModelRequest) -> list[ContextMessage]:
        out: list[ContextMessage] = []
        sources: list[ModelRequestPart | ModelResponsePart] = []
        for part in request.parts:
            message: ContextMessage | None = None
            if isinstance(part, SystemPromptPart):
                message = self.head.system(part.content)
            elif isinstance(part, UserPromptPart):
                message = user_prompt(_prompt_text(part))
            elif isinstance(part, BaseToolReturnPart) and not isinstance(
                part, NativeToolReturnPart
            ):
                message = ToolResult(
                    call_id=part.tool_call_id,
                    name=part.tool_name,
                    content=part.model_response_str(),
                    is_error=part.outcome in _ERROR_OUTCOMES,
                )
            elif isinstance(part, RetryPromptPart):
                text = part.model_response()
                message = (
                    ToolResult.failed(part.tool_call_id, text, name=part.tool_name)
                    if part.tool_name is not None
                    else TextMessage.user(text)
                )
            elif isinstance(part, RetryFeedbackPart):
                message = TextMessage.user(part.model_response())
            if message is not None:
                self.head.read(message)
                out.append(message)
                sources.append(part)
        self.parts[index] = sources
        return out

    def _response(self, index: int, response: ModelResponse) -> list[ContextMessage]:
        texts = [part.content for part in response.parts if isinstance(part, TextPart)]
        thinking = [part.content for part in response.parts if isinstance(part, ThinkingPart)]
        calls = tuple(
            ToolCall(id=part.tool_call_id, name=part.tool_name, arguments=part.args_as_json_str())
            for part in response.parts
            if isinstance(part, BaseToolCallPart) and not isinstance(part, NativeToolCallPart)
        )
        self.parts[index] = []
        usage = reported_usage(response.usage.input_tokens, response.usage.output_tokens)
        message = assistant_turn(texts, calls, usage)
        if message is None:
            return []
        if thinking:
            message = message.model_copy(update={"reasoning_content": "\n".join(thinking)})
        self.head.read(message)
        return [message]


def _is_state(part: ModelRequestPart) -> bool:
    """pydantic-ai's own bookkeeping: request parts that convert to no message."""
    return not isinstance(
        part,
        SystemPromptPart
        | UserPromptPart
        | BaseToolReturnPart
        | RetryPromptPart
        | RetryFeedbackPart,
    )


def _changed_request_part(part: ModelRequestPart, message: ContextMessage) -> ModelRequestPart:
    """``part`` with the text a compaction gave ``message`` (a pruned output, a cut prompt).

    Every other field stays (ids, metadata, timestamp, outcome, tool kind, retry info).
    A prompt with images or files is kept whole: its text alone cannot stand for it.
    A deprecated ``RetryPromptPart`` becomes the part pydantic-ai reads it as.
    """
    if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
        return part
    if isinstance(part, RetryPromptPart):
        return _changed_retry(part, message.text)
    if isinstance(part, ToolReturnPart):
        return _changed_return(part, message.text)
    if isinstance(part, SystemPromptPart | UserPromptPart | RetryFeedbackPart):
        return dataclasses.replace(part, content=message.text)
    return part


def _changed_return(part: ToolReturnPart, text: str) -> ToolReturnPart:
    """A pruned tool return: its fields with ``text`` as content, typed again only if it fits.

    A typed return (``ToolSearchReturnPart`` …) declares its content's shape, which a pruned
    text no longer has: it becomes a plain ``ToolReturnPart``, as pydantic-ai's own
    ``ToolReturnPart.narrow_type`` decides for data that does not fit.
    """
    fields = {field.name: getattr(part, field.name) for field in dataclasses.fields(ToolReturnPart)}
    return ToolReturnPart.narrow_type(ToolReturnPart(**{**fields, "content": text}))


def _changed_retry(part: RetryPromptPart, text: str) -> ToolReturnPart | RetryFeedbackPart:
    """A shortened ``RetryPromptPart`` as the part pydantic-ai translates it to before a request.

    (Copying the deprecated part would warn.) A retry of a tool call is that call's
    ``retried`` result; any other retry is feedback.
    """
    if part.tool_name is not None:
        return ToolReturnPart(
            part.tool_name, text, part.tool_call_id, timestamp=part.timestamp, outcome="retried"
        )
    return RetryFeedbackPart(text, retry=RetryInfo("model_retry"), timestamp=part.timestamp)


def _new_parts(message: ContextMessage) -> list[ModelRequestPart]:
    if isinstance(message, ToolResult):
        outcome: Literal["failed", "success"] = "failed" if message.is_error else "success"
        return [ToolReturnPart(message.name or "", message.text, message.call_id, outcome=outcome)]
    if message.role == Role.SYSTEM:
        return [SystemPromptPart(message.text)]
    return [UserPromptPart(message.text)]


def _response_parts(message: TextMessage) -> list[ModelResponsePart]:
    parts: list[ModelResponsePart] = []
    if message.reasoning_content:
        parts.append(ThinkingPart(message.reasoning_content))
    if message.text:
        parts.append(TextPart(message.text))
    parts.extend(
        ToolCallPart(call.name, call.arguments, call.id) for call in message.tool_calls or ()
    )
    return parts


class _Assembler:
    """Turns splice segments back into pydantic-ai messages."""

    def __init__(self, converter: _Converter) -> None:
        self.converter = converter
        self.out: list[ModelMessage] = []
        self.pending: list[ModelRequestPart] = []
        self.carried: list[ModelRequestPart] = []

    def flush(self) -> None:
        if self.pending:
            self.out.append(ModelRequest(parts=[*self.carried, *self.pending]))
            self.pending, self.carried = [], []

    def emit(self, message: ModelMessage) -> None:
        self.flush()
        if self.carried and isinstance(message, ModelRequest):
            message = dataclasses.replace(message, parts=[*self.carried, *message.parts])
            self.carried = []
        self.out.append(message)

    def add(self, segment: Segment[ModelMessage]) -> None:
        match segment:
            case Kept(item=item):
                self.emit(item)
            case Dropped(item=ModelRequest() as request):
                self.flush()
                self.carried.extend(part for part in request.parts if _is_state(part))
            case Dropped():
                pass
            case Rebuilt(index=index, item=ModelRequest() as request):
                self.emit(self._request(index, request, segment))
            case Rebuilt(index=index, item=ModelResponse() as response):
                self.emit(self._response(response, segment))
            case Added(messages=messages):
                for message in messages:
                    if isinstance(message, TextMessage) and message.role == Role.ASSISTANT:
                        self.emit(ModelResponse(parts=_response_parts(message)))
                    else:
                        self.pending.extend(_new_parts(message))

    def _request(
        self, index: int, request: ModelRequest, segment: Rebuilt[ModelMessage]
    ) -> ModelRequest:
        sources = self.converter.parts[index]
        kept = {id(sources[s]): (m, same) for m, s, same in _rows(segment)}
        parts: list[ModelRequestPart] = []
        for part in request.parts:
            if _is_state(part):
                parts.append(part)
            elif id(part) in kept:
                message, same = kept[id(part)]
                parts.append(part if same else _changed_request_part(part, message))
        return dataclasses.replace(request, parts=parts)

    def _response(self, response: ModelResponse, segment: Rebuilt[ModelMessage]) -> ModelResponse:
        message = segment.messages[0]
        assert isinstance(message, TextMessage)  # a response converts to one assistant message
        parts: list[ModelResponsePart] = [
            part for part in response.parts if not isinstance(part, TextPart)
        ]
        if message.text:
            parts.insert(0, TextPart(message.text))
        return dataclasses.replace(response, parts=parts)

    def finish(self) -> list[ModelMessage]:
        self.flush()
        if self.carried:
            self.out.append(ModelRequest(parts=self.carried))
        return self.out


def _rows(
    segment: Rebuilt[ModelMessage],
) -> Sequence[tuple[ContextMessage, int, bool]]:
    return list(zip(segment.messages, segment.sources, segment.unchanged, strict=True))


class ForgeHistoryProcessor(AsyncClosing):
    """Compacts a pydantic-ai agent's history with forge-compact's engines.

    Use it as a history processor, one per conversation (engines keep state per
    conversation)::

        processor = ForgeHistoryProcessor(Compact(token_threshold=20_000))
        agent = Agent(model, capabilities=[processor.capability()])

    (``ProcessHistory(processor)`` is the same; pydantic-ai 1.x took
    ``history_processors=[processor]``.) It compacts only when one of the
    agent's triggers fires; :attr:`compactions` records each compaction. With
    ``message_threshold`` set, a compaction bounds the history to its system prompts,
    one summary and the last ``retention_window`` messages (see the module).
    When the conversation is over, :meth:`aclose` (or ``async with processor:``)
    releases what the engine holds (the ``llm`` engine's HTTP client).
    """

    def __init__(
        self,
        settings: Agent | Compact | None = None,
        *,
        engine: ContextEngine | None = None,
        context_length: int | None = None,
    ) -> None:
        """Compact with ``settings`` (an agent, or ``compact:`` settings) and its engine.

        Args:
            settings: an :class:`Agent` (e.g. from :func:`~forge_app.load_agent`), or
                :class:`Compact` settings; the defaults when None. ``message_threshold`` set
                asks for a message bound, in pydantic-ai messages (see the module).
            engine: a ready engine; else the one ``compact.engine`` names (``frame``, ``llm``
                or a plugin). A ready engine compacts by the triggers of the agent it was
                built for.
            context_length: the model's window, for the threshold (else the agent's).
        """
        agent = adapter_agent(settings, context_length)
        self.bound: int | None = agent.compact.message_threshold
        """The message bound (pydantic-ai messages), or None: the engine decides alone."""
        self.keep = agent.compact.retention_window
        """The last messages kept as they are when the bound applies."""
        if self.bound is not None:  # the processor keeps the tail; the engine counts no messages
            agent = cut_agent(agent, message_threshold=None)
        self.compactor = HistoryCompactor(
            agent, engine=engine, context_length=context_length, engine_tail=self.bound is None
        )

    @property
    def compactions(self) -> list[CompactionResult]:
        """Every compaction applied so far, oldest first."""
        return self.compactor.compactions

    def capability(self) -> ProcessHistory[object]:
        """This processor as a pydantic-ai capability (``Agent(capabilities=[...])``)."""
        from pydantic_ai.capabilities import ProcessHistory

        return ProcessHistory(self)

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history to send: ``messages`` itself, or its compacted form.

        Raises:
            UnsupportedHistory: an entry is not a ``ModelRequest`` or ``ModelResponse``.
            ForgeAppError: the engine failed; ``messages`` is unchanged.
        """
        converter = _Converter()
        history = History(messages, converter, self.compactor.restore)
        compacted = await (
            self.compactor.compact(history.context)
            if self.bound is None
            else self._bounded(history, self.bound)
        )
        if compacted is None:
            return messages
        assembler = _Assembler(converter)
        for segment in history.splice(compacted):
            assembler.add(segment)
        return assembler.finish()

    async def _bounded(self, history: History[ModelMessage], bound: int) -> Context | None:
        """The history cut to system prompts, summary and the last :attr:`keep` messages, when
        it holds ``bound`` messages or another trigger fires; None otherwise."""
        context, count = history.context, len(history.items)
        if count < bound and not self.compactor.engine.should_compress(
            context, context.token_count()
        ):
            return None

        def returns(index: int) -> bool:  # the item's first message is a tool result
            flat = history.cut(index)
            return flat < len(context) and isinstance(context[flat], ToolResult)

        cut = history.cut(calls_kept_whole(max(0, count - self.keep), count, returns))
        if cut <= 0:
            return None
        return await self.compactor.compact_before(context, cut, whole=True)

    async def aclose(self) -> None:
        """Release what the engine holds (the ``llm`` engine's HTTP client)."""
        await self.compactor.aclose()
