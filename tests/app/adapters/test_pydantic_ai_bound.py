"""ForgeHistoryProcessor with a message bound (``Compact.message_threshold``): once the history
holds that many pydantic-ai messages, it comes back as its leading system prompts, one summary
and the last ``retention_window`` messages, even when the summary saves nothing; the task is
never lost. Settings without ``message_threshold`` compact as before (the other test files)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.summary import SUMMARY_MARKER
from forge_domain import Compact
from forge_domain.formats import find_violations
from tests.app.adapters import scenario
from tests.app.adapters.test_pydantic_ai_history import (
    answered_in_next_message,
    as_context,
    history,
    turn,
)

pytestmark = pytest.mark.anyio


def requests(count: int) -> list[ModelMessage]:
    """A user-only history: ``count`` requests of one prompt each (no answer in between)."""
    return [
        ModelRequest(parts=[UserPromptPart(f"request number {n}: add feature {n * 7}")])
        for n in range(count)
    ]


def prompts(message: ModelMessage) -> list[str]:
    return [str(p.content) for p in message.parts if isinstance(p, UserPromptPart)]


def is_summary(message: ModelMessage) -> bool:
    texts = prompts(message) if isinstance(message, ModelRequest) else []
    return len(texts) == 1 and texts[0].startswith(SUMMARY_MARKER)


def answering_model() -> FunctionModel:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(reply)


class Recording(ForgeHistoryProcessor):
    """Ours, remembering each history it returned (pydantic-ai merges adjacent requests
    before the model sees them; this is what the processor itself handed back)."""

    returned: list[list[ModelMessage]]

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        processed = await super().__call__(messages)
        self.returned = [*getattr(self, "returned", []), list(processed)]
        return processed


@pytest.fixture
def thread_loop() -> Iterator[None]:
    """The loop ``run_sync`` uses, closed afterwards (``run_sync`` leaves the one it made open)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    asyncio.set_event_loop(None)
    loop.close()


def chat(count: int) -> list[ModelMessage]:
    """``count`` short questions, each answered in a few words."""
    return [
        message
        for n in range(count)
        for message in (
            ModelRequest(parts=[UserPromptPart(f"question {n}: what is {n} * 7?")]),
            ModelResponse(parts=[TextPart(f"{n * 7}")]),
        )
    ]


def check_bounded(returned: list[ModelMessage], messages: list[ModelMessage]) -> None:
    """``returned`` is the summary, then the last 4 of ``messages`` as they were, and every
    earlier prompt is in the summary word for word."""
    summary, *kept = returned
    assert (is_summary(summary), [m is o for m, o in zip(kept, messages[-4:], strict=True)]) == (
        True,
        [True] * 4,
    )
    text = prompts(summary)[0]
    assert [t for m in messages[:-4] for t in prompts(m) if t not in text] == []


async def test_bound_summarises_user_prompts_alone_keeping_every_text():
    """Only user prompts (the engine would keep them all): one summary holds each of them word
    for word, and the last 4 messages follow it."""
    messages = requests(12)
    processor = ForgeHistoryProcessor(Compact(message_threshold=10, retention_window=4))

    actual = await processor(messages)

    check_bounded(actual, messages)
    assert len(processor.compactions) == 1


async def test_bound_cuts_a_short_chat_to_summary_and_window_async():
    processor = Recording(Compact(message_threshold=10, retention_window=4))
    agent = Agent(answering_model(), capabilities=[processor.capability()])
    past = chat(6)

    await agent.run("question 6: what is 6 * 7?", message_history=past)

    sent = processor.returned[-1]
    check_bounded(sent, [*past, sent[-1]])
    assert len(processor.compactions) == 1


@pytest.mark.usefixtures("thread_loop")
def test_bound_cuts_a_short_chat_to_summary_and_window_sync():
    processor = Recording(Compact(message_threshold=10, retention_window=4))
    agent = Agent(answering_model(), capabilities=[processor.capability()])
    past = chat(6)

    agent.run_sync("question 6: what is 6 * 7?", message_history=past)

    sent = processor.returned[-1]
    check_bounded(sent, [*past, sent[-1]])
    assert len(processor.compactions) == 1


async def test_bound_replaces_a_few_words_with_a_longer_summary_keeping_the_system_prompt():
    """A few words before the cut: the summary is longer than they were, and still replaces
    them (the bound asked for wins); the system prompt stays a request of its own."""
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("Fix bug 7")]),
        ModelResponse(parts=[TextPart("ok")]),
        ModelRequest(parts=[UserPromptPart("go on")]),
        ModelResponse(parts=[TextPart("done")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    processor = ForgeHistoryProcessor(Compact(message_threshold=5, retention_window=1))

    actual = await processor(messages)

    system, summary, last = actual
    assert [type(p).__name__ for p in system.parts] == ["SystemPromptPart"]
    assert (is_summary(summary), last is messages[-1]) == (True, True)
    assert ("Fix bug 7" in prompts(summary)[0], "go on" in prompts(summary)[0]) == (True, True)
    result = processor.compactions[0]
    assert result.compacted_tokens > result.original_tokens


async def test_bound_keeps_a_task_the_summary_cannot_hold_word_for_word():
    """A task over 2,000 characters stays, word for word, a prompt of its own before the summary."""
    task = "Implement the parser. " + "Requirement: keep every field. " * 120
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(task)]),
        ModelResponse(parts=[TextPart("reading")]),
        ModelRequest(parts=[UserPromptPart("go on")]),
        ModelResponse(parts=[TextPart("ok")]),
        ModelRequest(parts=[UserPromptPart("next")]),
    ]
    processor = ForgeHistoryProcessor(Compact(message_threshold=5, retention_window=1))

    actual = await processor(messages)

    first, summary, last = actual
    assert (first is messages[0], is_summary(summary), last is messages[-1]) == (True, True, True)
    assert ("go on" in prompts(summary)[0], "Implement the parser" in prompts(summary)[0]) == (
        True,
        False,
    )


async def test_bound_keeps_tool_calls_with_their_returns():
    """The cut lands on a request of tool returns: it moves back to the response that made
    the calls, so both are kept; the rest is one summary holding the task word for word."""
    messages = history(6)  # system + task, then 6 turns of (calls, returns): 13 messages
    processor = ForgeHistoryProcessor(Compact(message_threshold=10, retention_window=3))

    actual = await processor(messages)

    system, summary, *kept = actual
    assert [type(p).__name__ for p in system.parts] == ["SystemPromptPart"]
    assert (is_summary(summary), scenario.TASK in prompts(summary)[0]) == (True, True)
    assert [m is o for m, o in zip(kept, messages[-4:], strict=True)] == [True] * 4
    assert (find_violations(as_context(actual)), answered_in_next_message(actual)) == ([], True)


async def test_bound_counts_pydantic_ai_messages_not_their_parts():
    """9 pydantic-ai messages (18 of ours: each request of returns holds 3) are under a bound
    of 10: the list comes back itself."""
    messages = history(4)

    actual = await ForgeHistoryProcessor(Compact(message_threshold=10))(messages)

    assert (len(messages), actual is messages) == (9, True)


async def test_bound_folds_its_own_summary_at_each_compaction():
    """Turn after turn: system prompt, one summary holding the task word for word, and the last
    4 messages (the first call, 7 messages, is under the bound of 8)."""
    processor = ForgeHistoryProcessor(Compact(message_threshold=8, retention_window=4))
    messages = history(2)
    counts: list[int] = []
    for t in range(2, 10):
        messages = await processor([*messages, *turn(t)])
        counts.append(len(messages))

    text = json.dumps([prompts(m) for m in messages if isinstance(m, ModelRequest)])
    assert (text.count(SUMMARY_MARKER), scenario.TASK in text) == (1, True)
    assert (counts, len(processor.compactions)) == ([7] + [6] * 7, 7)


async def test_bound_applies_when_another_trigger_fires_first():
    """Under the bound, a token trigger compacts to the same shape: system prompt, summary,
    the last 4 messages (not an automatic compaction that may only prune)."""
    messages = history(6)  # 13 messages, well over 3,000 tokens
    settings = Compact(message_threshold=100, token_threshold=3_000, retention_window=4)

    actual = await ForgeHistoryProcessor(settings)(messages)

    assert (len(actual), is_summary(actual[1])) == (6, True)
    assert [m is o for m, o in zip(actual[2:], messages[-4:], strict=True)] == [True] * 4
