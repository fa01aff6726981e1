"""pydantic-ai tests of what ForgeHistoryProcessor deliberately does differently, and why.

Their processors drop messages without a trace, or put in text of their own; ours, built with a
message bound (``_construct.forge_processor``), honours the bound (one summary, then the last
``keep`` messages) and never drops what it replaces: each earlier prompt and answer is quoted
in the summary word for word. Each reason names the assertion that fails first. The README's
pydantic-ai section lists the same. Each is a strict xfail that must fail with an
``AssertionError`` (``conftest.py``): a ``BlockingError`` or any other error is a real failure.
"""

from __future__ import annotations

INVENTED_SYSTEM_PROMPT = (
    "asserts that the model receives 'Question 3' followed by a system prompt its processor "
    "makes up ('Processed answer'), the two earlier exchanges dropped; ours cannot invent that "
    "text: the model receives one summary quoting 'Question 1' to 'Answer 2' word for word, "
    "then 'Question 3' (the bound, keep=1, holds)"
)
ANSWERS_FILTERED = (
    "asserts that the model's answer is filtered out and the earlier question reaches the model "
    "as a prompt of its own; ours replaces the earlier exchange with one summary quoting the "
    "question and the answer word for word, then the new question"
)

EXPECTED: dict[str, str] = {
    "test_history_processor_run_replaces_message_history": INVENTED_SYSTEM_PROMPT,
    "test_history_processor_streaming_replaces_message_history": INVENTED_SYSTEM_PROMPT,
    "test_history_processor_messages_sent_to_provider": ANSWERS_FILTERED,
    "test_async_history_processor": ANSWERS_FILTERED,
    "test_history_processor_on_streamed_run": ANSWERS_FILTERED,
    "test_history_processor_with_context_async": (
        "asserts that only 'Question 3' reaches the model (messages[-1:]: the two earlier "
        "exchanges dropped without a trace); ours sends one summary quoting them word for word, "
        "then 'Question 3'"
    ),
    "test_history_processor_mixed_signatures": (
        "asserts that the answer is filtered out and both questions, prefixed by the processor "
        "after it, reach the model ('TEST: Question 1'); ours hands that processor a summary "
        "quoting 'Question 1' and 'Answer 1', which it prefixes in turn ('TEST: <summary>')"
    ),
    "test_history_processor_replace_messages": (
        "asserts that the model receives the fixed text its processor puts in place of the whole "
        "history, the current prompt 'foobar' included ('Modified message'); ours invents no "
        "text and drops no current prompt: a summary of the history, then 'foobar'"
    ),
    "test_new_messages_index_during_iter_with_pruning": (
        "asserts that all_messages() no longer holds the run's request 'start' (the task, "
        "dropped by keep-last-2); ours never drops the task: a summary quoting it word for word "
        "takes its place, first in all_messages()"
    ),
    "test_new_messages_index_during_iter_with_pruning_and_history": (
        "asserts that all_messages() no longer holds 'Old message 1', 'Old response 1' nor the "
        "run's request 'start' (dropped by keep-last-2); ours puts one summary quoting all three "
        "word for word in their place, first in all_messages()"
    ),
    "test_history_processor_truncation_during_resumed_tool_loop_keeps_run_messages": (
        "asserts new_messages() == all_messages(): nothing from before the run survives once the "
        "resumed request is truncated away; ours keeps that request ('Original prompt') quoted "
        "in a summary at the start, which stands for a message from before the run and so is "
        "not among new_messages() (its other assertions hold: every message of this run is in "
        "new_messages(), with no user prompt)"
    ),
}
