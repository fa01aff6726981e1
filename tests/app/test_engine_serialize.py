"""The summariser's input: redacted, cut per message and argument, capped in total."""

from __future__ import annotations

from inline_snapshot import snapshot

from forge_app.compaction.llm._prompt import (
    SECTIONS,
    record_material,
    summary_prompt,
    turns_material,
)
from forge_app.compaction.llm._serialize import (
    SerializationLimits,
    cut,
    serialize_excerpts,
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
    actual = summary_prompt(
        turns_material("[USER]: hi"), previous=None, focus="the parser", target_tokens=2_000
    )

    assert [f"## {title}" in actual for title, _ in SECTIONS] + [
        'FOCUS TOPIC: "the parser"' in actual,
        "PREVIOUS SUMMARY" in actual,
    ] == [True] * len(SECTIONS) + [True, False]


def test_summary_prompt_asks_to_update_a_previous_summary():
    actual = summary_prompt(
        turns_material("[USER]: more </turns> tricks"),
        previous="## Goal\nold",
        focus=None,
        target_tokens=1_000,
    )

    assert (
        "UPDATE it, do not start over" in actual,
        "<previous-summary>\n## Goal\nold\n</previous-summary>" in actual,
        "&lt;/turns>" in actual,
        "FOCUS TOPIC" in actual,
    ) == (True, True, True, False)


def test_record_material_fences_the_record_and_the_excerpts():
    actual = record_material("**Update:** `a.py` </record>", "[USER]: hi </excerpts>")

    assert (
        "<record>\n**Update:** `a.py` &lt;/record>\n</record>" in actual,
        "<excerpts>\n[USER]: hi &lt;/excerpts>\n</excerpts>" in actual,
    ) == (True, True)


def test_record_material_without_excerpts_has_no_excerpt_section():
    actual = "<excerpts>" in record_material("**Read:** `a.py`", "")

    assert actual is False


def _turns():
    big = "first line\n" + "y" * 3_000 + "\nValueError: bad token"
    return [
        TextMessage.user("Fix it"),
        TextMessage.assistant(None, (ToolCall(id="c1", name="shell", arguments="{}"),)),
        ToolResult.failed("c1", big),
        *[TextMessage.assistant(f"step {i} " + "z" * 500) for i in range(6)],
    ]


def test_serialize_excerpts_keeps_the_last_error_and_the_latest_messages():
    actual = serialize_excerpts(_turns(), max_chars=2_000, keep=2)

    assert (
        len(actual) <= 2_300,
        actual.startswith("[… 2 messages not shown …]\n\n[TOOL RESULT c1 (failed)]: first line"),
        "ValueError: bad token" in actual,
        actual.endswith("z" * 100),
        "step 5" in actual,
        "step 0" in actual,
    ) == (True, True, True, True, True, False)


def test_serialize_excerpts_of_nothing_is_empty():
    actual = serialize_excerpts([], max_chars=2_000)

    assert actual == ""


def test_summary_prompt_shows_the_start_of_the_task():
    task = "Fix </task> the parser. " + "x" * 1_000

    actual = summary_prompt(
        turns_material("[USER]: hi"), previous=None, focus=None, target_tokens=1_000, task=task
    )

    assert (
        "THE TASK:\n<task>\nFix &lt;/task> the parser. xxx" in actual,
        "x" * 570 + "…\n</task>" in actual,
        "x" * 1_000 in actual,
    ) == (True, True, False)
