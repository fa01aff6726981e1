"""TokenMeter: a context counted with an injected tokenizer, each message once, anchored on
believed usage exactly as Context.token_count, and O(1) in the context's length per turn."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import (
    CHARS_METER,
    Compact,
    Context,
    TextMessage,
    TokenCount,
    TokenMeter,
    ToolCall,
    ToolResult,
    Usage,
    context_tokens,
    message_tokens,
)
from tests.sessions import SESSIONS

SESSION_FILES = sorted(SESSIONS.glob("*.json"))


class Counter:
    """A tokenizer stand-in: one token per word, and how many texts it was asked about."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return len(text.split())


def _reference(context: Context, count_text: Counter) -> TokenCount:
    """The definition the meter must equal, written out apart from it: the newest believed
    usage report plus every later message counted, else every message counted."""
    anchor = context.usage_anchor()
    if anchor is None:
        return TokenCount.approx(sum(message_tokens(m, count_text) for m in context))
    index, total = anchor
    return TokenCount.actual(
        total + sum(message_tokens(m, count_text) for m in context[index + 1 :])
    )


def _reply(text: str, total: int | None = None) -> TextMessage:
    usage = (
        None if total is None else Usage.reported(prompt_tokens=total - 10, completion_tokens=10)
    )
    return TextMessage.assistant(text, usage=usage)


def _turn(n: int) -> tuple[TextMessage, ToolResult]:
    call = ToolCall(id=f"c{n}", name="shell", arguments=json.dumps({"cmd": f"ls dir{n}"}))
    return (
        TextMessage.assistant(f"step {n} looks at the files", (call,)),
        ToolResult.of(f"c{n}", f"file{n}.py other{n}.py"),
    )


def test_chars_meter_is_context_token_count():
    context = Context([TextMessage.user("hello there"), _reply("x" * 40, total=500)])
    actual = (CHARS_METER.count(context), CHARS_METER.total(context), CHARS_METER.fresh())
    assert actual == (context.token_count(), context.token_count_approx(), CHARS_METER)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([TextMessage.user("a b c"), _reply("d e")], {"approx": 5}),
        # a believed report anchors: 500 + the words after it
        (
            [TextMessage.user("a b c"), _reply("d e", total=500), TextMessage.user("f g")],
            {"actual": 502},
        ),
        # a report far below the estimate of what it measured is not believed (chars/4 decides)
        (
            [TextMessage.user("word " * 400), _reply("d", total=20), TextMessage.user("f")],
            {"approx": 402},
        ),
    ],
    ids=["no-usage", "anchored", "distrusted"],
)
def test_meter_counts_words_and_anchors_like_context(messages, expected):
    count = TokenMeter("words", Counter()).count(Context(messages))
    assert {count.kind: count.value} == expected


def test_meter_counts_each_message_once_however_long_the_session():
    counter = Counter()
    meter = TokenMeter("words", counter)
    context = Context([TextMessage.system("be brief"), TextMessage.user("list the files")])
    meter.count(context)
    per_turn = []
    for n in range(300):
        before = counter.calls
        context = context.append(*_turn(n))
        meter.count(context)
        meter.count(context)  # the same context again: nothing recounted
        per_turn.append(counter.calls - before)
    # 4 texts a turn (content, call name, arguments, result), whatever the length
    actual = (set(per_turn), counter.calls)
    assert actual == ({4}, 2 + 300 * 4)


def test_meter_after_a_compaction_counts_only_the_new_messages():
    counter = Counter()
    meter = TokenMeter("words", counter)
    context = Context([TextMessage.user("task"), *(m for n in range(50) for m in _turn(n))])
    meter.count(context)
    before = counter.calls
    compacted = context.replace_range(1, 60, [TextMessage.user("summary of the first steps")])
    count = meter.count(compacted)
    actual = (counter.calls - before, count, count == _reference(compacted, Counter()))
    assert actual == (1, _reference(compacted, Counter()), True)


def test_fresh_meter_keeps_nothing():
    counter = Counter()
    meter = TokenMeter("words", counter)
    context = Context([TextMessage.user("a b"), _reply("c")])
    meter.count(context)
    fresh = meter.fresh()
    fresh.count(context)
    actual = (fresh is not meter, fresh.name, counter.calls)
    assert actual == (True, "words", 4)


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem)
def test_meter_equals_the_reference_count_at_every_turn_of_real_sessions(path):
    messages = Context.from_openai(json.loads(path.read_text(encoding="utf-8"))).messages
    meter = TokenMeter("words", Counter())
    context = Context()
    mismatches = []
    for index, message in enumerate(messages):
        context = context.append(message)
        expected = _reference(context, Counter())
        if (meter.count(context), context_tokens(context, Counter())) != (expected, expected):
            mismatches.append(index)
    assert mismatches == []


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "replace", "old-view"]),
            st.integers(min_value=0, max_value=40),
            st.text(alphabet="ab ", max_size=12),
            st.sampled_from([None, 5, 50, 5000]),
        ),
        max_size=30,
    )
)
def test_meter_matches_the_reference_whatever_views_it_is_shown(steps):
    meter = TokenMeter("words", Counter())
    views = [Context([TextMessage.user("start here")])]
    for action, pick, text, total in steps:
        base = views[pick % len(views)] if action == "old-view" else views[-1]
        if action == "replace" and len(base) > 1:
            start = pick % len(base)
            new = base.replace_range(start, len(base) - 1, [TextMessage.user(text or "s")])
        else:
            new = base.append(_reply(text or "r", total))
        views.append(new)
        assert meter.count(new) == _reference(new, Counter())
        assert meter.total(new) == _reference(Context(new, usage_floor=len(new)), Counter()).value


def test_trigger_fires_on_the_tokenizer_count_not_chars():
    # 120 short words: 120 "tokens" by words, about 60 by chars/4 (2 chars a word)
    context = Context([TextMessage.user("ab " * 120)])
    compact = Compact(token_threshold=100)
    words = TokenMeter("words", Counter())
    actual = (
        compact.should_compact(context, CHARS_METER.count(context)),
        compact.should_compact(context, words.count(context)),
        int(CHARS_METER.count(context)),
        int(words.count(context)),
    )
    assert actual == (False, True, 90, 120)
