"""Real public transcripts (tests/fixtures/formats/PROVENANCE.md) in the Anthropic and
Responses formats: read, counted, compacted and written back in their format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_app.compaction._compactor import Compactor
from forge_app.files._transcripts import parse_transcript
from forge_domain import Compact, Context, InvalidMessage, JsonValue, TextMessage, ToolResult
from forge_domain.formats import (
    detect_format,
    find_format_violations,
    message_to_openai,
    messages_from_anthropic,
    messages_from_responses,
    messages_to_anthropic,
    messages_to_responses,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def _lines(name: str) -> list[JsonValue]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def claude_code_messages(events: list[JsonValue]) -> list[JsonValue]:
    """The Anthropic turns of a Claude Code session log: each user/assistant event's ``message``."""
    return [
        event["message"]
        for event in events
        if isinstance(event, dict) and event.get("type") in ("user", "assistant")
    ]


def codex_items(records: list[JsonValue]) -> list[JsonValue]:
    """The Responses items of a Codex rollout: each ``response_item`` record's ``payload``."""
    return [
        record["payload"]
        for record in records
        if isinstance(record, dict) and record.get("type") == "response_item"
    ]


CLAUDE = claude_code_messages(_lines("claude-code-representative.jsonl"))
CODEX = codex_items(_lines("codex-rollout-synthetic.jsonl"))


def test_fixtures_are_detected_in_their_format():
    actual = (detect_format({"messages": CLAUDE}), detect_format(CLAUDE), detect_format(CODEX))
    assert actual == ("anthropic", "anthropic", "responses")


def test_fixtures_round_trip_exactly():
    anthropic = messages_to_anthropic(messages_from_anthropic(CLAUDE))
    responses = messages_to_responses(messages_from_responses(CODEX))
    assert (anthropic, responses) == ((None, CLAUDE), CODEX)


def test_fixture_claude_code_reads_calls_results_and_usage():
    context = Context(messages_from_anthropic(CLAUDE))
    calls = [c.name for m in context if isinstance(m, TextMessage) for c in m.tool_calls or ()]
    results = [m.call_id for m in context if isinstance(m, ToolResult)]
    actual = (
        calls,
        len(results),
        context.token_count().is_actual(),
        find_format_violations(context, "anthropic"),
    )
    assert actual == (["Edit", "Bash"], 2, True, [])


def test_fixture_codex_reads_reasoning_and_custom_calls():
    context = Context(messages_from_responses(CODEX))
    calls = [
        (c.name, c.call_type)
        for m in context
        if isinstance(m, TextMessage)
        for c in m.tool_calls or ()
    ]
    reasoning = [
        d["encrypted_content"]
        for m in context
        if isinstance(m, TextMessage)
        for d in m.reasoning_details or ()
    ]
    actual = (calls, reasoning, find_format_violations(context, "responses"))
    expected = (
        [
            ("exec_command", "function"),
            ("apply_patch", "custom"),
            ("mcp__synthetic__lookup", "function"),
        ],
        ["SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER"],
        [],
    )
    assert actual == expected


def _repeated(entries: list[JsonValue], times: int) -> list[JsonValue]:
    """``entries`` ``times`` over, each copy's call ids made its own (a longer session)."""
    text = json.dumps(entries)
    copies = [
        json.loads(text.replace('_id": "', f'_id": "{n}-').replace('"id": "', f'"id": "{n}-'))
        for n in range(times)
    ]
    return [entry for copy in copies for entry in copy]


@pytest.mark.parametrize(
    ("fmt", "document"),
    [("anthropic", {"messages": CLAUDE}), ("responses", CODEX)],
    ids=["claude-code", "codex"],
)
def test_fixture_as_is_compacts_like_its_openai_form_and_is_written_back_exactly(fmt, document):
    transcript = parse_transcript(json.dumps(document), "session.json")
    as_openai = Context.from_openai([message_to_openai(m) for m in transcript.context])
    compactor = Compactor(Compact(retention_window=2))
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    reference = compactor.compact(as_openai, compactor.forced_strategy())
    written = json.loads(transcript.with_context(outcome.context).dumps())
    # Too short for a summary to be smaller than what it replaces: both leave it as it is.
    actual = (outcome.result.compacted_range, reference.result.compacted_range, written)
    assert actual == (None, None, document)


@pytest.mark.parametrize(
    ("fmt", "document"),
    [
        ("anthropic", {"messages": CLAUDE[:1] + _repeated(CLAUDE[1:], 8)}),
        ("responses", CODEX[:1] + _repeated(CODEX[1:], 8)),
    ],
    ids=["claude-code", "codex"],
)
def test_fixture_compacts_and_is_written_back_valid_in_its_format(fmt, document):
    transcript = parse_transcript(json.dumps(document), "session.json")
    compactor = Compactor(Compact(retention_window=2))
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    written = parse_transcript(transcript.with_context(outcome.context).dumps())
    actual = (
        outcome.changed(),
        written.format,
        find_format_violations(written.context, fmt),
        [message_to_openai(m) for m in written.context]
        == [message_to_openai(m) for m in outcome.context.without_stale_usage()],
    )
    assert actual == (True, fmt, [], True)


def test_fixture_anthropic_count_within_ten_percent_of_its_openai_form():
    context = Context(messages_from_anthropic(CLAUDE))
    as_openai = Context.from_openai(json.loads(json.dumps([message_to_openai(m) for m in context])))
    anthropic, openai = context.token_count(), as_openai.token_count()
    actual = (
        anthropic.kind,
        openai.kind,
        abs(anthropic.value - openai.value) <= 0.1 * openai.value,
        anthropic.value > 100,
    )
    assert actual == ("actual", "actual", True, True)


def test_fixture_malformed_claude_code_log_names_the_turn_and_field():
    turns = claude_code_messages(_lines("claude-code-edge-cases.jsonl"))
    with pytest.raises(InvalidMessage) as caught:
        messages_from_anthropic(turns)
    actual = (caught.value.index, caught.value.field, caught.value.problem)
    assert actual == (9, "content", "a message needs content")
