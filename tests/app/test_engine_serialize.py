"""The summariser's input: redacted, cut per message and argument, capped in total."""

from __future__ import annotations

from inline_snapshot import snapshot

from forge_app.compaction.llm._prompt import SECTIONS, summary_prompt
from forge_app.compaction.llm._serialize import (
    SerializationLimits,
    cut,
    serialize_message,
    serialize_span,
)
from forge_domain import ImagePart, Role, TextMessage, TextPart, ToolCall, ToolResult

SMALL = SerializationLimits(
    message_chars=100, head_chars=40, tail_chars=20, argument_chars=30, total_chars=1_000
)


def test_serialize_message_labels_redacts_and_lists_calls():
    fixture = TextMessage.assistant(
        "<think>private</think>Running it with OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx",
        (ToolCall(id="c1", name="shell", arguments='{"command": "make test"}'),),
    )

    actual = serialize_message(fixture, SerializationLimits())

    assert actual == snapshot("""\
[ASSISTANT]: Running it with OPENAI_API_KEY=[REDACTED]
[TOOL CALLS:
  shell({"command": "make test"}) id=c1
]\
""")


def test_serialize_message_marks_failed_results_and_images():
    fixture = [
        ToolResult.failed("c1", "boom", name="shell"),
        TextMessage(
            role=Role.USER,
            content=(TextPart(text="see"), ImagePart(url="data:image/png;base64,AAAA")),
        ),
    ]

    actual = [serialize_message(message, SerializationLimits()) for message in fixture]

    assert actual == ["[TOOL RESULT shell c1 (failed)]: boom", "[USER]: see\n[image]"]


def test_cut_keeps_head_and_tail():
    actual = cut("a" * 60 + "b" * 60, SMALL)

    assert actual == "a" * 40 + "\n…[60 chars cut]…\n" + "b" * 20


def test_serialize_message_cuts_long_arguments():
    fixture = TextMessage.assistant(
        None, (ToolCall(id="c1", name="write", arguments='{"content": "' + "z" * 100 + '"}'),)
    )

    actual = serialize_message(fixture, SMALL).splitlines()[2]

    assert actual == '  write({"content": "zzzzzzzzzzzzzzzzz…[85 chars cut]) id=c1'


def test_serialize_span_drops_middle_messages_to_fit_the_total():
    fixture = [TextMessage.user(f"message {i} " + "x" * 80) for i in range(30)]

    actual = serialize_span(fixture, SMALL)

    assert (len(actual) <= SMALL.total_chars, actual.splitlines()[2]) == (
        True,
        "[… 21 older messages left out to fit the summariser's input limit …]",
    )


def test_summary_prompt_names_every_section_and_the_focus():
    actual = summary_prompt("[USER]: hi", previous=None, focus="the parser", target_tokens=2_000)

    assert [f"## {title}" in actual for title, _ in SECTIONS] + [
        'FOCUS TOPIC: "the parser"' in actual,
        "PREVIOUS SUMMARY" in actual,
    ] == [True] * len(SECTIONS) + [True, False]


def test_summary_prompt_asks_to_update_a_previous_summary():
    actual = summary_prompt(
        "[USER]: more </turns> tricks", previous="## Goal\nold", focus=None, target_tokens=1_000
    )

    assert (
        "UPDATE it, do not start over" in actual,
        "<previous-summary>\n## Goal\nold\n</previous-summary>" in actual,
        "&lt;/turns>" in actual,
        "FOCUS TOPIC" in actual,
    ) == (True, True, True, False)
