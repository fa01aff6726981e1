"""The provider seam: a ``ChatModel`` turns a request into one assistant message.

Production code uses :class:`OpenAIChatModel` (any OpenAI-compatible endpoint
through ``AsyncOpenAI``); tests and users swap in :class:`FunctionModel`, which
answers with a plain function. Errors are mapped onto three leaves the
orchestrator knows how to handle: :class:`ProviderUnavailable` (retry with
backoff), :class:`ContextLengthExceeded` (compact, then retry once) and
:class:`ModelCallFailed` (give up). A 200 answer whose body is not a chat
completion (truncated JSON, a proxy's HTML page, no choices, a malformed message)
is a :class:`ModelCallFailed` quoting the start of the body, never a traceback.
"""

from __future__ import annotations

import inspect
import json
import os
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from forge_app.errors import ContextLengthExceeded, ModelCallFailed, ProviderUnavailable
from forge_domain import (
    Agent,
    Context,
    ContextMessage,
    InvalidMessage,
    JsonObject,
    Role,
    TextMessage,
    Usage,
)
from forge_domain.formats import message_from_openai, message_to_openai

if TYPE_CHECKING:
    import openai

__all__ = [
    "ChatModel",
    "FunctionModel",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChatModel",
    "request_messages",
]

NON_STANDARD_KEYS = frozenset({"droppable", "is_error", "usage"})
"""Keys our transcripts carry that a provider would reject."""
_RESPONSE_ONLY_KEYS = frozenset({"refusal", "annotations", "audio", "function_call"})
EXCERPT_CHARS = 200
"""How much of an unreadable response body an error quotes."""


def _provider_form(message: ContextMessage) -> JsonObject:
    wire = message_to_openai(message)
    return {k: v for k, v in wire.items() if k not in NON_STANDARD_KEYS}


def _thawed(value: Any) -> Any:
    """A copy of ``value`` (a dict or a list) with a new copy of every dict and list in it
    (JSON's own types; the rest, str, numbers, bool and None, is immutable and shared)."""
    out = value.copy()
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in pairs:
        if item.__class__ is dict or item.__class__ is list:
            out[key] = _thawed(item)
    return out


class _Form:
    """One message's provider form, remembered; :meth:`copy` is a request's own copy."""

    __slots__ = ("form", "message", "nested")

    def __init__(self, message: ContextMessage) -> None:
        self.message = weakref.ref(message)
        self.form = _provider_form(message)
        self.nested = any(v.__class__ is dict or v.__class__ is list for v in self.form.values())
        """Whether a value is a dict or a list (tool calls, content parts, reasoning)."""

    def copy(self) -> JsonObject:
        """A copy no reader can change the remembered form through: every dict and list
        in it is new (a message of plain text is a one-level copy)."""
        return cast("JsonObject", _thawed(self.form)) if self.nested else self.form.copy()


class _ProviderForms:
    """The provider form of each message of the last context converted, by identity.

    A conversation's requests share most of their messages (a turn adds a few, a
    compaction replaces a span), so a request converts only the messages that were not
    in the one before: a replay of 16,000 messages converted 830,000 messages for its
    8,000 requests, 30% of its CPU. The messages are held weakly (one that no context
    holds any more is not kept alive by this; the forms of the last request converted
    are, until the next one) and each request gets its own copy of each form, down to
    its nested dicts and lists: a reader that changes a request (a model adding a cache
    mark to a content part, say) changes no other request, of this conversation or of
    another one that holds the same message objects.
    """

    def __init__(self) -> None:
        self._last: dict[int, _Form] = {}

    def of(self, context: Context) -> list[JsonObject]:
        last = self._last
        seen: dict[int, _Form] = {}
        out: list[JsonObject] = []
        for message in context:
            key = id(message)
            known = last.get(key)
            if known is None or known.message() is not message:  # new, or another message
                known = _Form(message)
            seen[key] = known
            out.append(known.copy())
        self._last = seen  # one assignment: a concurrent caller at worst converts again
        return out


_PROVIDER_FORMS = _ProviderForms()


def request_messages(context: Context) -> list[JsonObject]:
    """The context as provider-ready OpenAI messages, without our own keys (messages that
    were in the previous context converted are not converted again)."""
    return _PROVIDER_FORMS.of(context)


class ModelRequest(BaseModel):
    """What is sent to a provider for one turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None
    """The model id (None lets the provider choose)."""
    messages: tuple[JsonObject, ...]
    """Provider-ready messages (see :func:`request_messages`)."""
    tools: tuple[JsonObject, ...] = ()
    """OpenAI function-tool schemas the model may call."""

    @classmethod
    def of(
        cls, context: Context, *, model: str | None, tools: Iterable[JsonObject] = ()
    ) -> ModelRequest:
        """Build the request for ``context``.

        The model and the tools' schemas are validated; the messages are not validated
        again: :func:`request_messages` writes them from messages that were (validating
        every request's JSON took a quarter of a replay's CPU).
        """
        request = cls(model=model, messages=(), tools=tuple(tools))
        return request.model_copy(update={"messages": tuple(request_messages(context))})


class ModelResponse(BaseModel):
    """One provider answer: an assistant message (with its usage) and why it stopped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message: TextMessage
    """The assistant message; ``message.usage`` holds the reported usage."""
    finish_reason: str | None = None
    """``stop``, ``tool_calls``, ``length`` … as the provider reported it."""

    @property
    def usage(self) -> Usage | None:
        """The usage the provider reported, if any."""
        return self.message.usage


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a chat request."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request``.

        Raises:
            ProviderUnavailable: a transient failure worth retrying.
            ContextLengthExceeded: the request is over the model's window.
            ModelCallFailed: any other refusal.
        """
        ...


ModelHandler = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]
"""A function answering a request, sync or async."""


class FunctionModel:
    """A :class:`ChatModel` whose answers come from a function (for tests and scripts)."""

    def __init__(self, handler: ModelHandler) -> None:
        """Wrap ``handler``; it may be a plain function or a coroutine function."""
        self._handler = handler
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Record ``request`` and return the handler's answer."""
        self.requests.append(request)
        answer = self._handler(request)
        if inspect.isawaitable(answer):
            return await answer
        return answer


def _is_context_overflow(error: openai.APIStatusError) -> bool:
    if error.status_code == 413 or error.code == "context_length_exceeded":
        return True
    text = str(error).lower()
    return "context length" in text or "context_length" in text or "too many tokens" in text


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _usage_of(raw: object) -> Usage | None:
    """The reported usage; None when absent or not made of token counts."""
    if not isinstance(raw, dict):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if not _is_count(prompt) or not _is_count(completion):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage.reported(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached if _is_count(cached) else 0,
    )


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _excerpt(body: bytes) -> str:
    """The start of ``body`` on one line, at most :data:`EXCERPT_CHARS` characters."""
    text = " ".join(body[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace").split())
    return repr(text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "...")


def response_from_body(body: bytes, model: str | None) -> ModelResponse:
    """Read a chat-completions response body into a :class:`ModelResponse`.

    Raises:
        ModelCallFailed: the body is not a chat completion (not JSON, an HTML page,
            an error object, no choices, a malformed message); the error quotes the
            start of the body.
    """

    def failed(problem: str) -> ModelCallFailed:
        return ModelCallFailed(model, f"{problem}: {_excerpt(body)}", 200)

    if not body.strip():
        raise ModelCallFailed(model, "the response body is empty", 200)
    try:
        data = json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, NaN; absurd nesting
        raise failed("the response is not JSON") from exc
    if not isinstance(data, dict):
        raise failed("the response is not a chat completion object")
    if data.get("error") is not None:
        raise failed("the provider answered with an error")
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise failed("the response has no 'choices' list")
    if not choices:
        raise ModelCallFailed(model, "the provider returned no choices", 200)
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise failed("choices[0] has no 'message' object")
    wire: JsonObject = {
        k: v for k, v in choice["message"].items() if v is not None and k not in _RESPONSE_ONLY_KEYS
    }
    wire.setdefault("role", "assistant")
    wire.setdefault("content", None)
    if wire.get("tool_calls") == []:
        del wire["tool_calls"]
    try:
        message = message_from_openai(0, wire)
    except InvalidMessage as exc:
        raise failed(f"the message is malformed ({exc.field or 'message'}: {exc.problem})") from exc
    if not isinstance(message, TextMessage) or message.role != Role.ASSISTANT:
        raise failed(f"the message's role is {wire['role']!r}, not 'assistant'")
    message = message.model_copy(update={"usage": _usage_of(data.get("usage"))})
    reason = choice.get("finish_reason")
    return ModelResponse(message=message, finish_reason=reason if isinstance(reason, str) else None)


class OpenAIChatModel:
    """A :class:`ChatModel` backed by ``openai.AsyncOpenAI`` (any compatible endpoint).

    The client should be built with ``max_retries=0``: the orchestrator retries
    transient failures itself (with backoff and jitter) so that every retry is
    logged and visible to hooks.
    """

    def __init__(self, client: openai.AsyncOpenAI, model: str | None) -> None:
        """Use ``client`` to call ``model``."""
        self.client = client
        self.model = model

    @classmethod
    def for_agent(
        cls,
        agent: Agent,
        *,
        environ: Mapping[str, str] | None = None,
        timeout: float = 600.0,
    ) -> OpenAIChatModel:
        """Build the model an agent definition describes.

        Base URL, API key and model come from the agent (``base_url``,
        ``api_key_env``, ``model``), else from ``OPENAI_BASE_URL``,
        ``OPENAI_API_KEY`` and ``OPENAI_MODEL`` in ``environ`` (default: the
        process environment).
        """
        import openai  # deferred: the openai package takes most of a cold start

        env = os.environ if environ is None else environ
        base_url = agent.base_url or env.get("OPENAI_BASE_URL")
        api_key = env.get(agent.api_key_env or "OPENAI_API_KEY", "")
        client = openai.AsyncOpenAI(
            api_key=api_key or "not-set",
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
        )
        return cls(client, agent.model or env.get("OPENAI_MODEL"))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Send ``request`` with ``chat.completions.create``."""
        import openai  # deferred: the openai package takes most of a cold start

        model = request.model or self.model
        if model is None:
            raise ModelCallFailed(None, "no model configured (set the agent's model)")
        messages = cast(
            "list[openai.types.chat.ChatCompletionMessageParam]", list(request.messages)
        )
        create = self.client.chat.completions.with_raw_response.create
        try:
            if request.tools:
                tools = cast("list[openai.types.chat.ChatCompletionToolParam]", list(request.tools))
                raw = await create(model=model, messages=messages, tools=tools)
            else:
                raw = await create(model=model, messages=messages)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise ProviderUnavailable(model, str(exc)) from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status == 429 or status >= 500:
                raise ProviderUnavailable(model, exc.message, status) from exc
            if _is_context_overflow(exc):
                raise ContextLengthExceeded(model, exc.message, status) from exc
            raise ModelCallFailed(model, exc.message, status) from exc
        return response_from_body(raw.content, model)
