"""The shared forge-vector loader converts forge's serde JSON faithfully."""

from __future__ import annotations

import pytest

from forge_domain import (
    CompactionStrategy,
    ImagePart,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    TokenCount,
    ToolCall,
    ToolResult,
    Usage,
)
from tests.vectors import (
    load_vectors,
    message_from_forge,
    strategy_from_forge,
    vector_id,
    vector_params,
)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {
                "text": {
                    "role": "Assistant",
                    "content": "x",
                    "tool_calls": [
                        {"name": "read", "call_id": "c1", "arguments": {"b": "é", "a": [1, 2]}},
                        {"name": "raw", "call_id": None, "arguments": '{"p": 1}'},
                    ],
                    "reasoning_details": [{"text": "t"}],
                }
            },
            TextMessage(
                role=Role.ASSISTANT,
                content="x",
                tool_calls=(
                    ToolCall(id="c1", name="read", arguments='{"a":[1,2],"b":"é"}'),
                    ToolCall(id="", name="raw", arguments='{"p": 1}'),
                ),
                reasoning_details=({"text": "t"},),
            ),
        ),
        (
            {"text": {"role": "User", "content": "att", "droppable": True}},
            TextMessage.user("att", droppable=True),
        ),
        (
            {"text": {"role": "Assistant", "content": "", "tool_calls": []}},
            TextMessage(role=Role.ASSISTANT, content="", tool_calls=()),
        ),
        ({"image": {"url": "data:x", "mime_type": "image/png"}}, TextMessage.image("data:x")),
        (
            {
                "tool": {
                    "name": "read",
                    "call_id": "c1",
                    "output": {"is_error": True, "values": [{"text": "boom"}]},
                }
            },
            ToolResult.failed("c1", "boom", name="read"),
        ),
        (
            {
                "tool": {
                    "name": "task",
                    "call_id": None,
                    "output": {
                        "is_error": False,
                        "values": [
                            {"text": "a"},
                            {"image": {"url": "u", "mime_type": "image/png"}},
                            {"aI": {"value": "sub", "conversation_id": "0"}},
                            "empty",
                        ],
                    },
                }
            },
            ToolResult(
                call_id="",
                name="task",
                content=(
                    TextPart(text="a"),
                    ImagePart(url="u"),
                    OtherPart(raw={"aI": {"value": "sub", "conversation_id": "0"}}),
                    OtherPart(raw={"type": "empty"}),
                ),
            ),
        ),
        (
            {"tool": {"name": "n", "call_id": "c", "output": {"is_error": False, "values": []}}},
            ToolResult(call_id="c", name="n", content=""),
        ),
        (
            {
                "text": {"role": "Assistant", "content": "hi"},
                "usage": {
                    "prompt_tokens": {"actual": 4},
                    "completion_tokens": {"approx": 1},
                    "total_tokens": {"actual": 5},
                    "cached_tokens": {"actual": 0},
                    "cost": 0.5,
                },
            },
            TextMessage.assistant(
                "hi",
                usage=Usage(
                    prompt_tokens=TokenCount.actual(4),
                    completion_tokens=TokenCount.approx(1),
                    total_tokens=TokenCount.actual(5),
                    cost=0.5,
                ),
            ),
        ),
    ],
    ids=[
        "text-with-parsed-and-raw-arguments",
        "droppable",
        "empty-call-list-kept",
        "image-entry",
        "failed-tool-result",
        "tool-values-as-parts",
        "tool-without-values",
        "usage",
    ],
)
def test_message_from_forge(entry, expected):
    actual = message_from_forge(entry)
    assert actual == expected


@pytest.mark.parametrize(
    "entry",
    [
        {"nothing": {}},
        {"text": {"role": "Assistant", "content": "x"}, "usage": {"total_tokens": 3}},
    ],
    ids=["unknown-kind", "bad-token-count"],
)
def test_message_from_forge_rejects_malformed_entries(entry):
    with pytest.raises(ValueError, match="not a forge"):
        message_from_forge(entry)


def test_strategy_from_forge_nests():
    actual = strategy_from_forge(["max", ["evict", 1], ["min", ["retain", 2], ["evict", 0.5]]])
    expected = CompactionStrategy.evict(1.0).max(
        CompactionStrategy.retain(2).min(CompactionStrategy.evict(0.5))
    )
    assert actual == expected


def test_strategy_from_forge_rejects_unknown_shapes():
    with pytest.raises(ValueError, match="not a forge strategy"):
        strategy_from_forge(["keep", 1])


def test_load_vectors_returns_fresh_copies():
    first = load_vectors("compaction_result")
    first[0]["input"]["original_tokens"] = -1
    actual = load_vectors("compaction_result")[0]["input"]["original_tokens"]
    assert actual == 1000


def test_vector_ids_name_the_forge_test():
    entries = load_vectors("find_sequence_preserving_last_n")
    actual = (vector_id(entries[0], 0), vector_id(entries[-1], 49))
    assert actual == ("0-sequence_finding", "49-derived")


def test_vector_params_filter_keeps_file_positions():
    params = vector_params("compaction_result", where=lambda e: e["input"]["original_tokens"] == 0)
    actual = [p.id for p in params]
    assert actual == ["1-token_reduction_percentage", "6-derived"]
