"""ChatModel adapters: request building, OpenAIChatModel over real HTTP, error mapping."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from forge_app.errors import ContextLengthExceeded, ModelCallFailed, ProviderUnavailable
from forge_app.runtime._model import (
    EXCERPT_CHARS,
    NON_STANDARD_KEYS,
    FunctionModel,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    request_messages,
)
from forge_domain import (
    Agent,
    Context,
    ContextMessage,
    Role,
    TextMessage,
    ToolCall,
    ToolResult,
    Usage,
)
from forge_domain.formats import message_to_openai
from tests.app.fake_openai_server import FakeOpenAIServer, Reply


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def test_request_messages_drop_our_non_standard_keys():
    usage = Usage.reported(prompt_tokens=5, completion_tokens=2)
    context = Context(
        [
            TextMessage.user("see attachment", droppable=True),
            TextMessage.assistant("", (ToolCall(id="c1", name="read"),), usage=usage),
            ToolResult.failed("c1", "no such file", name="read"),
        ]
    )

    actual = ModelRequest.of(context, model="m").messages

    expected = (
        {"role": "user", "content": "see attachment"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "no such file", "name": "read"},
    )
    assert actual == expected


@pytest.mark.anyio
async def test_openai_model_reads_text_tool_calls_and_usage(server):
    server.script(
        Reply.calls(("call_1", "read", '{"path": "a.py"}'), prompt_tokens=40, completion_tokens=5)
    )
    model = OpenAIChatModel(server.client(), "gpt-test")
    request = ModelRequest.of(Context([TextMessage.user("read a.py")]), model=None)

    actual = await model.complete(request)

    expected = ModelResponse(
        message=TextMessage.assistant(
            None,
            (ToolCall(id="call_1", name="read", arguments='{"path": "a.py"}'),),
            usage=Usage.reported(prompt_tokens=40, completion_tokens=5),
        ),
        finish_reason="tool_calls",
    )
    assert (actual, server.requests[0]["model"]) == (expected, "gpt-test")


@pytest.mark.anyio
async def test_openai_model_sends_tools_and_provider_valid_messages(server):
    server.script(Reply.text("ok"))
    model = OpenAIChatModel(server.client(), "gpt-test")
    schema = {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}
    context = Context([TextMessage.user("hi", droppable=True)])

    await model.complete(ModelRequest.of(context, model=None, tools=[schema]))

    body = server.requests[0]
    assert (body["messages"], body["tools"]) == ([{"role": "user", "content": "hi"}], [schema])


@pytest.mark.parametrize(
    ("reply", "error", "status"),
    [
        (Reply.error(429, "slow down"), ProviderUnavailable, 429),
        (Reply.error(500, "oops"), ProviderUnavailable, 500),
        (Reply.error(503, "overloaded"), ProviderUnavailable, 503),
        (Reply.context_length_exceeded(), ContextLengthExceeded, 400),
        (Reply.error(413, "request too large"), ContextLengthExceeded, 413),
        (Reply.error(400, "bad role"), ModelCallFailed, 400),
        (Reply.error(401, "bad key"), ModelCallFailed, 401),
    ],
    ids=["429", "500", "503", "context-length", "413", "400", "401"],
)
@pytest.mark.anyio
async def test_openai_model_maps_http_errors(server, reply, error, status):
    server.script(reply)
    model = OpenAIChatModel(server.client(), "gpt-test")

    with pytest.raises(ModelCallFailed) as raised:
        await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    assert (type(raised.value), raised.value.status) == (error, status)


@pytest.mark.anyio
async def test_openai_model_timeout_is_transient(server):
    server.script(Reply(content="late", delay=1.0))
    model = OpenAIChatModel(server.client(timeout=0.2), "gpt-test")

    with pytest.raises(ProviderUnavailable):
        await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))


@pytest.mark.anyio
async def test_openai_model_without_a_model_id_fails_before_calling(server):
    model = OpenAIChatModel(server.client(), None)

    with pytest.raises(ModelCallFailed):
        await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    assert server.requests == []


@pytest.mark.anyio
async def test_openai_model_for_agent_reads_url_key_and_model_from_the_environment(server):
    server.script(Reply.text("ok"))
    agent = Agent(id="a", api_key_env="MY_KEY")
    environ = {"OPENAI_BASE_URL": server.base_url, "MY_KEY": "sk-x", "OPENAI_MODEL": "env-model"}
    model = OpenAIChatModel.for_agent(agent, environ=environ)

    response = await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    actual = (response.message.text, server.requests[0]["model"], model.client.api_key)
    assert actual == ("ok", "env-model", "sk-x")


@pytest.mark.anyio
async def test_function_model_accepts_sync_and_async_handlers():
    def sync(request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=TextMessage.assistant("sync"))

    async def asynchronous(request: ModelRequest) -> ModelResponse:
        return ModelResponse(message=TextMessage.assistant("async"))

    request = ModelRequest(model=None, messages=())
    answers = [await FunctionModel(h).complete(request) for h in (sync, asynchronous)]

    assert [a.message.text for a in answers] == ["sync", "async"]


_TOOL_CALL = '{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}'


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b'{"id": "x", "choices": [{"ind', "application/json", 'the response is not JSON: \'{"id"'),
        (
            b"<html>\n<body><h1>502 Bad Gateway</h1></body>\n</html>",
            "text/html",
            "the response is not JSON: '<html> <body><h1>502 Bad Gateway</h1></body> </html>'",
        ),
        (b"", "application/json", "the response body is empty"),
        (
            b'"hello"',
            "application/json",
            "the response is not a chat completion object: '\"hello\"'",
        ),
        (b'{"choices": 5}', "application/json", "the response has no 'choices' list"),
        (b'{"choices": []}', "application/json", "the provider returned no choices"),
        (b'{"choices": [{"message": "hi"}]}', "application/json", "choices[0] has no 'message'"),
        (
            b'{"error": {"message": "upstream timed out", "code": 504}}',
            "application/json",
            'the provider answered with an error: \'{"error": {"message": "upstream timed out"',
        ),
        (
            b'{"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": ""}]}}]}',
            "application/json",
            "the message is malformed (tool_calls[0].id: expected a non-empty string",
        ),
        (
            b'{"choices": [{"message": {"role": "user", "content": "hi"}}]}',
            "application/json",
            "the message's role is 'user', not 'assistant'",
        ),
        (b'{"choices": NaN}', "application/json", "the response is not JSON"),
        (b"[" * 5_000 + b"]" * 5_000, "application/json", "the response is not JSON: '[[[["),
        (b"\xff\xfe{}", "application/json", "the response is not JSON"),
    ],
    ids=[
        "truncated-json",
        "html-page",
        "empty",
        "json-string",
        "choices-not-a-list",
        "no-choices",
        "message-not-an-object",
        "error-object",
        "malformed-tool-call",
        "user-role",
        "nan",
        "5000-deep",
        "not-utf8",
    ],
)
@pytest.mark.anyio
async def test_openai_model_unreadable_200_is_a_typed_error(server, body, content_type, message):
    server.script(Reply.raw(body, content_type))
    model = OpenAIChatModel(server.client(), "gpt-test")

    with pytest.raises(ModelCallFailed) as raised:
        await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    actual = (type(raised.value), raised.value.status, message in str(raised.value))
    assert actual == (ModelCallFailed, 200, True), str(raised.value)


@pytest.mark.anyio
async def test_openai_model_error_quotes_a_bounded_excerpt_of_the_body(server):
    server.script(Reply.raw(b"<html>" + b"x" * 1_000_000, "text/html"))
    model = OpenAIChatModel(server.client(), "gpt-test")

    with pytest.raises(ModelCallFailed) as raised:
        await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    assert len(str(raised.value)) < EXCERPT_CHARS + 100


@pytest.mark.anyio
async def test_openai_model_reads_a_lenient_completion(server):
    body = (
        '{"choices": [{"message": {"content": "ok", "refusal": null, "tool_calls": [],'
        ' "reasoning_content": "thought"}, "finish_reason": "eos"}],'
        ' "usage": {"prompt_tokens": "many", "completion_tokens": 3}}'
    )
    server.script(Reply.raw(body.encode()))
    model = OpenAIChatModel(server.client(), "gpt-test")

    actual = await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    expected = ModelResponse(
        message=TextMessage(role=Role.ASSISTANT, content="ok", reasoning_content="thought"),
        finish_reason="eos",
    )
    assert actual == expected


@pytest.mark.anyio
async def test_openai_model_reads_cached_tokens_and_tool_calls_from_the_body(server):
    body = (
        '{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": ['
        + _TOOL_CALL
        + ']}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 10,'
        ' "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}}}'
    )
    server.script(Reply.raw(body.encode()))
    model = OpenAIChatModel(server.client(), "gpt-test")

    actual = await model.complete(ModelRequest.of(Context([TextMessage.user("x")]), model=None))

    expected = ModelResponse(
        message=TextMessage.assistant(
            None,
            (ToolCall(id="c1", name="read"),),
            usage=Usage.reported(prompt_tokens=10, completion_tokens=2, cached_tokens=4),
        ),
        finish_reason="tool_calls",
    )
    assert actual == expected


def _fresh(context: Context) -> list[dict[str, object]]:
    """Each message converted on its own, our keys dropped (what a request must hold)."""
    out = []
    for message in context:
        wire = message_to_openai(message)
        out.append({k: v for k, v in wire.items() if k not in NON_STANDARD_KEYS})
    return out


def _pool() -> list[ContextMessage]:
    usage = Usage.reported(prompt_tokens=5, completion_tokens=2)
    return [
        TextMessage.system("be brief"),
        TextMessage.user("read a.py", droppable=True),
        TextMessage.user("read a.py"),  # equal text, another message
        TextMessage.assistant("", (ToolCall(id="c1", name="read"),), usage=usage),
        ToolResult.failed("c1", "no such file", name="read"),
        ToolResult.of("c1", "print(1)", name="read"),
        TextMessage.assistant("done"),
    ]


@given(st.lists(st.lists(st.integers(0, 6), max_size=8), min_size=1, max_size=6))
def test_each_request_holds_its_messages_converted(picks):
    """Requests sharing messages (in any order, repeated, dropped, equal but distinct)
    hold what converting each message on its own gives."""
    pool = _pool()
    contexts = [Context([pool[i] for i in pick]) for pick in picks]
    assert [request_messages(c) for c in contexts] == [_fresh(c) for c in contexts]


def test_a_request_changed_by_its_reader_leaves_the_next_one_as_it_was():
    context = Context(_pool())
    first = request_messages(context)
    first[0]["content"] = "changed"
    assert request_messages(context) == _fresh(context)


def test_the_messages_of_a_request_are_not_kept_alive_by_it():
    """Converting a context remembers its messages weakly: once nothing else holds them
    they are gone."""
    context = Context([TextMessage.user(f"message {i}") for i in range(5)])
    refs = [weakref.ref(m) for m in context]
    request_messages(context)
    del context
    gc.collect()
    assert [ref() for ref in refs] == [None] * 5


def test_a_request_built_from_a_context_is_the_validated_request():
    """``ModelRequest.of`` (not validated again) equals the request built and validated
    from the same messages and tools."""
    context = Context(_pool())
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    built = ModelRequest.of(context, model="m", tools=tools)
    validated = ModelRequest(model="m", messages=tuple(_fresh(context)), tools=tuple(tools))
    assert (built, built.model_dump_json(), repr(built)) == (
        validated,
        validated.model_dump_json(),
        repr(validated),
    )


def test_a_message_at_the_address_of_one_gone_is_converted_anew():
    """A message freed and another made in its place (CPython reuses the address, so
    the same ``id``) is converted, not taken for the one before."""
    converted = []
    for i in range(50):
        context = Context([TextMessage.user(f"message {i}")])
        converted.append((request_messages(context), _fresh(context)))
        del context
    assert [got for got, _ in converted] == [want for _, want in converted]


def test_a_tool_schema_that_is_not_json_is_refused():
    """The tools' schemas are still validated (only the messages written here are not)."""
    with pytest.raises(ValidationError):
        ModelRequest.of(Context(_pool()), model="m", tools=[{"type": {1, 2}}])
