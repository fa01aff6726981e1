"""Another process appends while a conversation is loaded: the resumed recorder stays exact."""

from __future__ import annotations

import pytest

from forge_app.store import ConversationInfo, ConversationRecorder, open_store
from forge_domain import Context, TextMessage


def test_store_load_racing_an_append_resumes_without_a_duplicate(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The append lands between load's read of the conversation and of its messages; the
    next compaction's snapshot must list the appended message once."""
    first = Context([TextMessage.user("one"), TextMessage.assistant("two")])
    with open_store(store_url) as store, open_store(store_url) as other:
        ConversationRecorder.start(store, "conv").sync(first)
        conversation = store.conversation

        def racing(conversation_id: str) -> ConversationInfo:
            info = conversation(conversation_id)
            other.append(conversation_id, [TextMessage.user("three")])
            return info

        monkeypatch.setattr(store, "conversation", racing)
        saved = store.load("conv")
        monkeypatch.undo()
        loaded = Context(saved.messages)
        summary = loaded[0].model_copy(update={"content": "Summary: one, two."})
        ConversationRecorder.resume(store, saved).compacted(
            loaded, Context([summary, loaded[2]]), engine="frame", reason="manual", result=None
        )
        reloaded = [m.text for m in store.load("conv").messages]
    assert reloaded == [
        "Summary: one, two.\n\n[archived: ref c1, 2 original messages — recall_expand shows them]",
        "three",
    ]
