"""ForgeHistoryProcessor on hand-built pydantic-ai histories: what comes back, and how."""

from __future__ import annotations

import dataclasses
import itertools
import json

import pytest
from pydantic_ai import PydanticAIDeprecationWarning
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelSettingsDeltaPart,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchReturnPart,
    UserPromptPart,
)

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.adapters._convert import History
from forge_app.adapters._pydantic_ai import _changed_request_part, _Converter
from forge_app.errors import UnsupportedHistory
from forge_app.summary import SUMMARY_MARKER
from forge_domain import ToolResult
from forge_domain.formats import find_violations
from tests.app.adapters import scenario

pytestmark = pytest.mark.anyio

SETTING = ModelSettingsDeltaPart(settings={"thinking": "high"})


def turn(t: int) -> list[ModelMessage]:
    calls = [ToolCallPart(name, args, cid) for cid, name, args in scenario.calls(t)]
    outputs = {"read_file": scenario.read_file, "shell": scenario.shell}
    returns = [
        ToolReturnPart(
            name,
            outputs[name](*args.values()) if name in outputs else scenario.write_file(**args),
            cid,
            outcome="failed" if name == "shell" else "success",
        )
        for cid, name, args in scenario.calls(t)
    ]
    extra = [SETTING] if t == 1 else []
    return [
        ModelResponse(parts=[ThinkingPart(f"plan {t}"), TextPart(f"turn {t}"), *calls]),
        ModelRequest(parts=[*returns, *extra]),
    ]


def history(turns: int) -> list[ModelMessage]:
    head: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You are a careful coder."), UserPromptPart(scenario.TASK)]
        )
    ]
    return head + [message for t in range(turns) for message in turn(t)]


def as_context(messages: list[ModelMessage]):
    return History(messages, _Converter()).context


def answered_in_next_message(messages: list[ModelMessage]) -> bool:
    for message, following in itertools.pairwise(messages):
        calls = [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]
        returns = [p.tool_call_id for p in following.parts if isinstance(p, ToolReturnPart)]
        if calls and calls != returns:
            return False
    return True


async def test_processor_returns_the_list_itself_below_the_threshold():
    messages = history(1)

    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(messages)

    assert actual is messages


async def test_processor_keeps_untouched_messages_as_the_original_objects():
    messages = history(6)

    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(messages)

    assert len(actual) < len(messages)
    assert (actual[0] is messages[0], actual[-2] is messages[-2], actual[-1] is messages[-1]) == (
        True,
        True,
        True,
    )


async def test_processor_output_pairs_every_call_with_its_returns():
    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(history(6))

    assert (find_violations(as_context(actual)), answered_in_next_message(actual)) == ([], True)


async def test_processor_summary_is_a_new_request_after_the_head():
    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(history(6))

    summary = actual[1]
    assert isinstance(summary, ModelRequest)
    prompts = [p for p in summary.parts if isinstance(p, UserPromptPart)]
    assert [str(p.content).startswith(SUMMARY_MARKER) for p in prompts] == [True]


async def test_processor_carries_state_parts_out_of_a_compacted_request():
    messages = history(6)

    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(messages)

    holders = [
        index for index, message in enumerate(actual) for part in message.parts if part is SETTING
    ]
    assert messages.index(next(m for m in messages if SETTING in m.parts)) == 4
    assert holders == [1]  # moved into the summary's request, once


async def test_processor_folds_its_own_summary_into_the_next_one():
    processor = ForgeHistoryProcessor(scenario.SETTINGS)
    messages = await processor(history(6))
    for t in range(6, 12):
        messages = await processor([*messages, *turn(t)])

    text = json.dumps([str(part) for message in messages for part in message.parts])
    assert len(processor.compactions) >= 2
    assert text.count(SUMMARY_MARKER) == 1
    assert scenario.survives([text]) == []


async def test_processor_rejects_an_entry_that_is_no_model_message():
    with pytest.raises(
        UnsupportedHistory, match=r"pydantic-ai history\[1\]: cannot convert a dict"
    ):
        await ForgeHistoryProcessor(scenario.SETTINGS)([history(1)[0], {"kind": "request"}])  # type: ignore[list-item]


def test_converter_reads_every_prompt_kind():
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[
                SystemPromptPart("You are a careful coder."),
                UserPromptPart(["Look at this:", ImageUrl("https://example.com/a.png")]),
            ]
        ),
        ModelResponse(parts=[TextPart("I will retry.")]),
        ModelRequest(
            parts=[
                RetryFeedbackPart("Please answer in JSON", retry=RetryInfo("model_retry")),
                SystemPromptPart("Be brief."),
            ]
        ),
        ModelResponse(parts=[ThinkingPart("only thinking")]),
    ]

    actual = [(m.role.value, m.text[:40]) for m in as_context(messages)]  # type: ignore[union-attr]

    assert actual == [
        ("system", "You are a careful coder."),
        ("user", "Look at this:\n[ImageUrl]"),
        ("assistant", "I will retry."),
        ("user", "Your previous response failed the applic"),
        ("user", "Be brief."),  # a system prompt after the start, for the engine only
    ]


def with_metadata_and_legacy_retries(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Tool returns carrying metadata; each test run's output a (deprecated) RetryPromptPart."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts: list[ModelRequestPart] = []
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and part.tool_name == "shell":
                    with pytest.warns(PydanticAIDeprecationWarning):
                        part = RetryPromptPart(  # type: ignore[assignment]
                            str(part.content), tool_name="shell", tool_call_id=part.tool_call_id
                        )
                elif isinstance(part, ToolReturnPart):
                    part = dataclasses.replace(part, metadata={"call": part.tool_call_id})
                parts.append(part)
            message = dataclasses.replace(message, parts=parts)
        out.append(message)
    return out


async def test_processor_keeps_the_fields_of_a_pruned_tool_return_and_shortens_a_retry():
    messages = with_metadata_and_legacy_retries(history(6))
    originals = {id(part): part for message in messages for part in message.parts}

    actual = await ForgeHistoryProcessor(scenario.SETTINGS)(messages)

    rebuilt = {
        part.tool_call_id: part
        for message in actual
        for part in message.parts
        if isinstance(part, ToolReturnPart) and id(part) not in originals
    }
    read, test = rebuilt["call_4_read"], rebuilt["call_4_test"]
    original_read = next(
        p
        for p in originals.values()
        if isinstance(p, ToolReturnPart) and p.tool_call_id == "call_4_read"
    )
    assert (read.metadata, read.timestamp) == ({"call": "call_4_read"}, original_read.timestamp)
    assert len(str(read.content)) < len(str(original_read.content))
    assert (test.outcome, len(str(test.content)) < len(scenario.shell("x")) // 4) == (
        "retried",
        True,
    )
    kept_retries = [p for m in actual for p in m.parts if isinstance(p, RetryPromptPart)]
    assert [p.tool_call_id for p in kept_retries] == ["call_5_test"]  # untouched: the original


def test_a_pruned_typed_return_becomes_a_plain_return_with_its_fields():
    search = ToolSearchReturnPart(
        content={"discovered_tools": []}, tool_call_id="s1", metadata={"query": "files"}
    )

    actual = _changed_request_part(search, ToolResult.of("s1", "[pruned]"))

    assert type(actual) is ToolReturnPart
    assert (actual.content, actual.metadata, actual.timestamp) == (
        "[pruned]",
        {"query": "files"},
        search.timestamp,
    )
