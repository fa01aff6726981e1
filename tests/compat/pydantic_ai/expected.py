"""pydantic-ai tests of what ForgeHistoryProcessor deliberately does differently, and why.

The README's pydantic-ai section lists the same reasons. Each is a strict xfail that must
fail with an ``AssertionError`` (``conftest.py``): a ``BlockingError`` or any other error
is a real failure.
"""

from __future__ import annotations

NOTHING_TO_SAVE = (
    "their processor drops or replaces messages of a few words (or the task itself); ours "
    "never summarises the task away nor replaces messages with a longer summary, so it hands "
    "such a history back as it is, and the test's expected history differs"
)

_SAME = NOTHING_TO_SAVE

EXPECTED: dict[str, str] = {
    "test_history_processor_run_replaces_message_history": NOTHING_TO_SAVE,
    "test_history_processor_streaming_replaces_message_history": NOTHING_TO_SAVE,
    "test_history_processor_messages_sent_to_provider": NOTHING_TO_SAVE,
    "test_async_history_processor": NOTHING_TO_SAVE,
    "test_history_processor_on_streamed_run": NOTHING_TO_SAVE,
    "test_history_processor_with_context_async": NOTHING_TO_SAVE,
    "test_history_processor_mixed_signatures": NOTHING_TO_SAVE,
    "test_history_processor_replace_messages": NOTHING_TO_SAVE,
    "test_new_messages_index_during_iter_with_pruning": NOTHING_TO_SAVE,
    "test_new_messages_index_during_iter_with_pruning_and_history": NOTHING_TO_SAVE,
    "test_history_processor_truncation_during_resumed_tool_loop_keeps_run_messages": _SAME,
}
