"""Fuzzing the library entry points: malformed input gives a typed error, nothing else.

- ``Context.from_openai`` on any JSON value: a context, or ``InvalidMessage`` /
  ``InvalidTranscript`` (``ForgeDomainError``);
- ``parse_transcript`` on any text: a transcript, or a ``TranscriptError``;
- every engine mode, the ``Compactor`` and a replay on provider-valid sessions full of
  hostile values (5,000-deep or broken tool-call arguments, huge and odd texts): a
  provider-valid result (or ``CompactionFailed``), never a ``RecursionError``.
"""

from __future__ import annotations

import json

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor
from forge_app.compaction._registry import resolve_engine
from forge_app.errors import CompactionFailed, TranscriptError
from forge_app.files._transcripts import Transcript, parse_transcript
from forge_app.runtime._replay import Replay
from forge_domain import (
    Agent,
    Compact,
    Context,
    ContextMessage,
    ForgeDomainError,
    TextMessage,
    ToolCall,
    ToolResult,
)
from forge_domain.formats import find_violations
from tests.app.hostile_inputs import DOCUMENTS, JSON_VALUES, MESSAGE
from tests.profiles import examples

_SETTINGS = settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(value=st.lists(MESSAGE, max_size=5) | JSON_VALUES)
def test_context_from_openai_accepts_or_raises_a_domain_error(value):
    result: object
    try:
        result = Context.from_openai(value)
    except ForgeDomainError as exc:
        result = exc
    assert isinstance(result, Context | ForgeDomainError)


@_SETTINGS
@given(document=DOCUMENTS)
def test_parse_transcript_accepts_or_raises_a_transcript_error(document):
    text = document.decode("utf-8", "replace")
    result: object
    try:
        result = parse_transcript(text, "fuzz.json")
    except TranscriptError as exc:
        result = exc
    assert isinstance(result, Transcript | TranscriptError)


_ARGUMENTS = st.sampled_from(
    [
        '{"command": "pytest -x"}',
        '{"path": "/repo/a.py", "content": "x"}',
        "[" * 5_000 + "]" * 5_000,
        '{"a": ' * 3_000 + "1" + "}" * 3_000,
        "{not json",
        "",
        '{"command": "' + "y" * 30_000 + '"}',
    ]
)
_TEXT = st.sampled_from(
    ["", "ok", "a\nb\u2028c", "x" * 40_000, "\x00\x1b[2J", "{{ jinja }}", "```\n```"]
) | st.text(max_size=40)
_TOOLS = st.sampled_from(["shell", "bash", "read_file", "write", "str_replace_editor", "odd"])


def _filled(text: str, default: str) -> str:
    """``text``, or ``default`` when it is blank (a blank message is not provider-valid)."""
    return text if text.strip() else default


@st.composite
def _sessions(draw: st.DrawFn) -> Context:
    """A provider-valid session whose texts and tool-call arguments are hostile."""
    messages: list[ContextMessage] = [
        TextMessage.system("You are a coding agent."),
        TextMessage.user(_filled(draw(_TEXT), "Fix it.")),
    ]
    for number in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            calls = tuple(
                ToolCall(id=f"c{number}_{k}", name=draw(_TOOLS), arguments=draw(_ARGUMENTS))
                for k in range(draw(st.integers(1, 2)))
            )
            messages.append(TextMessage.assistant(draw(st.none() | _TEXT), calls))
            for call in calls:
                result = ToolResult(
                    call_id=call.id, content=draw(_TEXT), is_error=draw(st.booleans())
                )
                messages.append(result)
        else:
            messages.append(TextMessage.assistant(_filled(draw(_TEXT), "Done.")))
            messages.append(TextMessage.user(_filled(draw(_TEXT), "Next.")))
    messages.append(TextMessage.assistant("Finished."))
    return Context(messages)


def _agent(engine: str = "frame") -> Agent:
    compact = Compact(retention_window=2, token_threshold=600, engine=engine)
    return Agent(id="fuzz", context_length=4_000, compact=compact)


@_SETTINGS
@given(session=_sessions(), mode=st.sampled_from(["automatic", "forced", "manual"]))
def test_frame_engine_on_hostile_sessions_gives_valid_output(session, mode):
    assert find_violations(session) == []
    engine = resolve_engine(_agent())

    try:
        outcome = anyio.run(lambda: engine.compress(session, mode=mode))
    except CompactionFailed:
        return

    assert find_violations(outcome.context) == []


@_SETTINGS
@given(session=_sessions())
def test_compactor_on_hostile_sessions_gives_valid_output(session):
    compactor = Compactor(Compact(retention_window=2, eviction_window=0.8))

    try:
        outcome = compactor.compact(session, compactor.forced_strategy())
    except CompactionFailed:
        return

    assert find_violations(outcome.context) == []


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(session=_sessions())
def test_replay_of_hostile_sessions_stays_valid(session):
    async def replayed() -> Context:
        replay = Replay(session, _agent(), context_length=4_000)
        async for _ in replay.turns():
            pass
        return replay.conversation.context

    context = anyio.run(replayed)

    assert find_violations(context) == []


@pytest.mark.parametrize(
    "arguments", ["[" * 5_000 + "]" * 5_000, '{"a": ' * 3_000 + "1" + "}" * 3_000]
)
def test_deep_arguments_survive_pruning_and_json_round_trip(arguments):
    calls = [ToolCall(id=f"c{n}", name="shell", arguments=arguments) for n in range(6)]
    messages: list[ContextMessage] = [TextMessage.system("s"), TextMessage.user("go")]
    for call in calls:
        messages += [TextMessage.assistant(None, (call,)), ToolResult.of(call.id, "out\n" * 2_000)]
    messages.append(TextMessage.assistant("done"))
    session = Context(messages)
    engine = resolve_engine(_agent())

    outcome = anyio.run(lambda: engine.compress(session, mode="automatic"))
    written = json.dumps(outcome.context.to_openai())

    actual = (
        find_violations(outcome.context),
        Context.from_openai(json.loads(written)) is not None,
    )
    assert actual == ([], True)
