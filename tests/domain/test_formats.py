"""The three formats: detection, lossless conversion of the real sessions, counts, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_domain import Context, InvalidMessage, context_tokens
from forge_domain.formats import (
    FORMATS,
    detect_format,
    find_format_violations,
    message_to_openai,
    messages_from_format,
    messages_to_format,
)
from forge_domain.formats._openai import messages_from_openai
from tests.sessions import SESSIONS

SESSION_FILES = sorted(SESSIONS.glob("*.json"))


def _normal(value: object) -> object:
    return json.loads(json.dumps(value))


def _converted(raw: list, fmt: str) -> Context:
    """An OpenAI session written in ``fmt`` (as JSON text) and read back."""
    system, entries = messages_to_format(fmt, messages_from_openai(raw))
    return Context(messages_from_format(fmt, _normal(entries), system=_normal(system)))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem if isinstance(p, Path) else p)
def test_formats_session_converted_and_back_equals_the_original(path, fmt):
    raw = json.loads(path.read_text(encoding="utf-8"))
    actual = _normal([message_to_openai(m) for m in _converted(raw, fmt)])
    assert actual == raw


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem if isinstance(p, Path) else p)
def test_formats_session_in_each_format_is_detected_and_written_back_exactly(path, fmt):
    system, entries = messages_to_format(fmt, messages_from_openai(json.loads(path.read_text())))
    document = _normal(entries if system is None else {"system": system, "messages": entries})
    detected = detect_format(document)
    entries_read = document["messages"] if isinstance(document, dict) else document
    read = messages_from_format(detected, entries_read, system=_normal(system))
    rewritten = messages_to_format(detected, read)
    actual = (detected, _normal(rewritten[1]))
    assert actual == (fmt, _normal(entries))


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem)
def test_formats_anthropic_count_within_ten_percent_of_openai(path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    openai = Context.from_openai(raw).token_count().value
    anthropic = _converted(raw, "anthropic").token_count().value
    actual = abs(anthropic - openai) <= 0.1 * openai
    assert actual is True


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem)
def test_formats_session_counts_alike_in_every_format_with_a_tokenizer(path):
    raw = json.loads(path.read_text(encoding="utf-8"))

    def words(text: str) -> int:  # any tokenizer: the count must not depend on the format
        return len(text.split())

    actual = {fmt: context_tokens(_converted(raw, fmt), words) for fmt in FORMATS}
    assert len(set(actual.values())) == 1


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem if isinstance(p, Path) else p)
def test_formats_session_is_valid_under_each_format(path, fmt):
    raw = json.loads(path.read_text(encoding="utf-8"))
    actual = find_format_violations(_converted(raw, fmt), fmt)
    assert actual == []


_CALL = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([{"role": "user", "content": "hi"}], "openai"),
        ({"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o"}, "openai"),
        ([{"role": "assistant", "content": None, "tool_calls": [_CALL]}], "openai"),
        ([{"role": "tool", "tool_call_id": "c", "content": "x"}], "openai"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}],
            "openai",
        ),
        ({"system": "s", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]}], "anthropic"),
        ([{"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}], "anthropic"),
        (
            [{"role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}],
            "anthropic",
        ),
        ({"input": [{"role": "user", "content": "hi"}], "model": "o3"}, "responses"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}], "responses"),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], "responses"),
        ([{"type": "compaction", "encrypted_content": "x"}], "responses"),
        ([], "openai"),
        ({"foo": 1}, "openai"),
        ([3, {"role": "user", "content": ["x", {"type": "input_text", "text": "y"}]}], "responses"),
    ],
)
def test_formats_detect(document, expected):
    actual = detect_format(document)
    assert actual == expected


@pytest.mark.parametrize(
    ("fmt", "entries", "location"),
    [
        ("openai", [{"role": "robot", "content": "x"}], "messages[0].role"),
        ("openai", [{"role": "tool", "content": "x"}], "messages[0].tool_call_id"),
        (
            "openai",
            [{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}],
            "messages[0].tool_calls[0].function.name",
        ),
        ("anthropic", [{"role": "tool", "content": "x"}], "messages[0].role"),
        (
            "anthropic",
            [{"role": "user", "content": [{"type": "tool_result"}]}],
            "messages[0].content[0].tool_use_id",
        ),
        (
            "anthropic",
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "a", "name": "f", "input": []}],
                }
            ],
            "messages[0].content[0].input",
        ),
        (
            "responses",
            [{"type": "function_call", "call_id": "c", "name": "f", "arguments": 1}],
            "input[0].arguments",
        ),
        (
            "responses",
            [{"type": "function_call_output", "call_id": "", "output": "x"}],
            "input[0].call_id",
        ),
        (
            "responses",
            [{"type": "message", "role": "user", "content": [{"type": 3}]}],
            "input[0].content[0].type",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "[" in value else None,
)
def test_formats_bad_input_names_index_and_field(fmt, entries, location):
    with pytest.raises(InvalidMessage) as caught:
        messages_from_format(fmt, entries)
    error = caught.value
    actual = str(error).split(":")[0]
    assert actual == location


_HUGE = "r" * 100_000
"""A 100,000-character value: an error message quotes a short prefix of it, not all."""


@pytest.mark.parametrize(
    ("fmt", "entries"),
    [
        ("openai", [{"role": _HUGE, "content": "x"}]),
        ("anthropic", [{"role": _HUGE, "content": "x"}]),
        ("responses", [{"role": _HUGE, "content": "x"}]),
        (
            "anthropic",
            [
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "a",
                            "name": "f",
                            "input": {},
                            "_forge": {"spacing": _HUGE},
                        }
                    ],
                }
            ],
        ),
    ],
    ids=["openai-role", "anthropic-role", "responses-role", "anthropic-spacing"],
)
def test_formats_error_quotes_a_bounded_prefix_of_a_huge_value(fmt, entries):
    with pytest.raises(InvalidMessage) as caught:
        messages_from_format(fmt, entries)
    assert len(str(caught.value)) < 300


def _letters(text: str) -> int:
    return len(text)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": "abcd"}], ("approx", 4)),
        (
            [
                {"role": "user", "content": "abcd"},
                {"role": "assistant", "content": "ef", "usage": {"total_tokens": 10}},
                {"role": "user", "content": "ghi"},
            ],
            ("actual", 13),
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "u", "detail": "low"}}],
                },
                {"role": "assistant", "content": None, "tool_calls": [_CALL]},
                {"role": "tool", "tool_call_id": "c", "content": "xy"},
            ],
            ("approx", 85 + 3 + 2),
        ),
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": "a",
                    "reasoning_details": [
                        {
                            "type": "reasoning",
                            "summary": [{"text": "st"}],
                            "encrypted_content": "12345678",
                        }
                    ],
                },
            ],
            ("approx", 1 + 1 + 2 + 2),
        ),
        (
            [
                {"role": "user", "content": [{"type": "file", "file": {"file_id": "abc"}}]},
                {"role": "assistant", "content": None, "reasoning_content": "why"},
            ],
            # the part's compact JSON is 39 characters: 10 tokens; "why" counts 3
            ("approx", 10 + 3),
        ),
    ],
    ids=[
        "text",
        "anchored-on-usage",
        "image-call-result",
        "reasoning-summary-and-encrypted",
        "empty-and-kept-whole-parts",
    ],
)
def test_token_count_with_an_injected_counter(messages, expected):
    count = context_tokens(Context.from_openai(messages), _letters)
    actual = (count.kind, count.value)
    assert actual == expected


def test_token_count_without_a_counter_is_the_estimate():
    context = Context.from_openai(json.loads(SESSION_FILES[0].read_text(encoding="utf-8")))
    actual = context_tokens(context, None)
    assert actual == context.token_count()


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "input_tokens": 10,
                "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 5,
                "output_tokens": 50,
            },
            (2015, 50, 2065, 2000),
        ),
        (
            {
                "input_tokens": 300,
                "input_tokens_details": {"cached_tokens": 100},
                "output_tokens": 20,
                "total_tokens": 320,
            },
            (300, 20, 320, 100),
        ),
        ({"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8}, (7, 1, 8, 0)),
    ],
    ids=["anthropic", "responses", "openai"],
)
@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_formats_usage_in_every_vocabulary_anchors_the_count(usage, expected, fmt):
    entries = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a", "usage": usage},
    ]
    (message,) = messages_from_format(fmt, entries)[1:]
    read = message.usage
    actual = (
        None
        if read is None
        else tuple(
            count.value
            for count in (
                read.prompt_tokens,
                read.completion_tokens,
                read.total_tokens,
                read.cached_tokens,
            )
        )
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "t"},
                        {"type": "tool_result", "tool_use_id": "a", "content": "r"},
                    ],
                },
            ],
            [(3, "result_after_content")],
        ),
        (
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "t"},
                        {"type": "text", "text": "x"},
                    ],
                },
            ],
            [(1, "thinking_without_signature")],
        ),
        ([{"role": "assistant", "content": "hi"}], [(0, "first_turn_not_user")]),
    ],
    ids=["results-after-text", "thinking-without-signature", "assistant-first"],
)
def test_formats_anthropic_rules(turns, expected):
    context = Context(messages_from_format("anthropic", turns))
    actual = [(v.index, v.rule) for v in find_format_violations(context, "anthropic")]
    assert actual == expected
