"""Context: usage-anchored token counts, O(1) appends, ranges and the sequence protocol."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import Context, Role, TextMessage, TokenCount, ToolResult, Usage
from forge_domain._usage import is_plausible_total
from forge_domain.testing import pattern, pattern_of
from tests.vectors import context_from_forge, vector_params


def _anchored_differently(vector) -> bool:
    messages = vector["input"]["messages"]
    return any("usage" in m for m in messages[:-1]) and "usage" not in messages[-1]


def _token_count_json(count: TokenCount) -> dict[str, int]:
    return {count.kind: count.value}


@pytest.mark.parametrize(
    "vector", vector_params("context_token_count", where=lambda v: not _anchored_differently(v))
)
def test_context_token_count_matches_forge(vector):
    actual = _token_count_json(context_from_forge(vector["input"]["messages"]).token_count())
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        pytest.param(p.values[0], {"actual": 5001}, id="earlier-usage-5000-plus-approx-of-next")
        for p in vector_params("context_token_count", where=_anchored_differently)
    ],
)
def test_context_token_count_anchors_on_earlier_usage(vector, expected):
    # forge ignores usage unless it is on the last message and reports {"approx": 4}
    actual = _token_count_json(context_from_forge(vector["input"]["messages"]).token_count())
    assert actual == expected


def _usage(total: int) -> Usage:
    return Usage.reported(prompt_tokens=total - 10, completion_tokens=10)


def _reply(text: str, total: int) -> TextMessage:
    return TextMessage.assistant(text, usage=_usage(total))


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], TokenCount.approx(0)),
        ([TextMessage.user("abcd")], TokenCount.approx(1)),
        ([TextMessage.user("abcd"), _reply("hi", 500)], TokenCount.actual(500)),
        (
            [TextMessage.user("abcd"), _reply("hi", 500), ToolResult.of("c", "x" * 40)],
            TokenCount.actual(510),
        ),
        (
            [_reply("a", 100), TextMessage.user("b" * 8), _reply("c", 300), TextMessage.user("d")],
            TokenCount.actual(301),
        ),
        (
            [_reply("a", 100), TextMessage.assistant("b", usage=Usage()), TextMessage.user("c")],
            TokenCount.actual(102),
        ),
    ],
    ids=[
        "empty",
        "no-usage-approx",
        "usage-on-last",
        "usage-plus-later-approx",
        "newest-usage-wins",
        "zero-usage-is-not-an-anchor",
    ],
)
def test_context_token_count_is_anchored_on_the_newest_trusted_usage(messages, expected):
    actual = Context(messages).token_count()
    assert actual == expected


def test_context_token_count_is_the_same_built_at_once_or_appended():
    messages = [
        _reply("a", 100),
        TextMessage.user("b" * 8),
        _reply("c", 300),
        TextMessage.user("d"),
    ]
    appended = Context()
    for message in messages:
        appended = appended.append(message)
    actual = (appended.token_count(), appended.token_count_approx(), appended.user_message_count())
    expected = (
        Context(messages).token_count(),
        Context(messages).token_count_approx(),
        Context(messages).user_message_count(),
    )
    assert actual == expected


def test_context_replace_range_trusts_no_older_usage():
    context = Context([TextMessage.user("u"), _reply("a" * 8, 1000), _reply("b" * 8, 2000)])
    compacted = context.replace_range(0, 1, [TextMessage.user("summary!")])
    actual = (len(compacted), compacted.usage_floor, compacted.token_count())
    assert actual == (2, 2, TokenCount.approx(4))


def test_context_usage_floor_ignores_usage_before_it():
    compacted = Context([TextMessage.user("summary!"), _reply("b" * 8, 2000)], usage_floor=2)
    actual = (
        compacted.token_count(),
        compacted.append(_reply("c", 700)).token_count(),
        compacted.append(_reply("c", 700), TextMessage.user("d" * 4)).token_count(),
    )
    expected = (TokenCount.approx(4), TokenCount.actual(700), TokenCount.actual(701))
    assert actual == expected


def test_context_without_stale_usage_drops_only_usage_before_the_floor():
    compacted = Context([TextMessage.user("summary!"), _reply("b" * 8, 2000)], usage_floor=2)
    grown = compacted.append(_reply("c", 700))
    written = grown.without_stale_usage()
    actual = (
        [m.usage is not None for m in written],
        written.token_count(),
        written.usage_floor,
        Context([_reply("a", 9)]).without_stale_usage().usage_floor,
    )
    assert actual == ([False, False, True], grown.token_count(), 0, 0)


def test_context_distrusts_a_usage_report_far_below_the_estimate():
    prompt = TextMessage.user("y" * 4000)  # 1,000 tokens by the estimate
    believed = Context([TextMessage.user("x" * 400), _reply("a", 120)])
    distrusted = believed.append(prompt, _reply("b", 30))
    actual = {
        "believed": (believed.token_count(), believed.distrusted_usage_index()),
        "distrusted": (distrusted.token_count(), distrusted.distrusted_usage_index()),
        "built at once": (
            Context(distrusted).token_count(),
            Context(distrusted).distrusted_usage_index(),
        ),
        "then believed": (
            distrusted.append(_reply("c", 1200)).token_count(),
            distrusted.append(_reply("c", 1200)).distrusted_usage_index(),
        ),
        "no earlier report": (
            Context([prompt, _reply("b", 30)]).token_count(),
            Context([prompt, _reply("b", 30)]).distrusted_usage_index(),
        ),
    }
    expected = {
        "believed": (TokenCount.actual(120), None),
        "distrusted": (TokenCount.actual(120 + 1000 + 1), 3),
        "built at once": (TokenCount.actual(120 + 1000 + 1), 3),
        "then believed": (TokenCount.actual(1200), None),
        "no earlier report": (TokenCount.approx(1000 + 1), 1),
    }
    assert actual == expected


@pytest.mark.parametrize(
    ("start", "end", "replacement", "expected"),
    [
        (2, 5, [TextMessage.user("S")], "suua"),
        (0, 0, [], "uauaua"),
        (6, 6, [TextMessage.user("x"), TextMessage.user("y")], "suauauuu"),
    ],
    ids=["middle", "delete-first", "replace-last-with-two"],
)
def test_context_replace_range(start, end, replacement, expected):
    actual = pattern_of(pattern("suauaua").replace_range(start, end, replacement))
    assert actual == expected


@pytest.mark.parametrize(
    ("start", "end"), [(-1, 0), (2, 1), (0, 3)], ids=["negative", "reversed", "past-end"]
)
def test_context_replace_range_rejects_bad_bounds(start, end):
    with pytest.raises(IndexError):
        pattern("sua").replace_range(start, end, [])


def test_context_append_leaves_the_parent_unchanged():
    parent = pattern("sua")
    child = parent.append(TextMessage.user("next"))
    actual = (len(parent), parent.messages, len(child), child[-1])
    expected = (3, pattern("sua").messages, 4, TextMessage.user("next"))
    assert actual == expected


def test_context_append_shares_the_store_only_with_the_newest_version():
    parent = pattern("sua")
    child = parent.append(TextMessage.user("a"))
    grandchild = child.append(TextMessage.user("b"))
    actual = (child._store is parent._store, grandchild._store is parent._store)
    assert actual == (True, True)


def test_context_branches_from_the_same_parent_do_not_see_each_other():
    parent = pattern("sua")
    left = parent.append(TextMessage.user("left"))
    right = parent.append(TextMessage.user("right"), TextMessage.user("more"))
    left_again = left.append(TextMessage.user("again"))
    actual = [[m.text for m in c] for c in (parent, left, right, left_again)]
    expected = [
        ["Message 1", "Message 2", "Message 3"],
        ["Message 1", "Message 2", "Message 3", "left"],
        ["Message 1", "Message 2", "Message 3", "right", "more"],
        ["Message 1", "Message 2", "Message 3", "left", "again"],
    ]
    assert actual == expected


def test_context_branch_totals_are_their_own():
    parent = pattern("su")
    left = parent.append(TextMessage.user("x" * 40))
    right = parent.append(_reply("y", 900))
    actual = [(c.token_count(), c.user_message_count()) for c in (parent, left, right)]
    expected = [
        (TokenCount.approx(6), 1),
        (TokenCount.approx(16), 2),
        (TokenCount.actual(900), 1),
    ]
    assert actual == expected


def test_context_sequence_protocol():
    context = pattern("suat")
    actual = (
        len(context),
        pattern_of(Context(context[1:3])),
        context[-1] == context[3],
        context.last_message() == context[3],
        Context().last_message(),
        context.first_index_of_role(Role.ASSISTANT),
        context.first_index_of_role(Role.USER),
        pattern("ss").first_index_of_role(Role.ASSISTANT),
        repr(context),
    )
    expected = (4, "ua", True, True, None, 2, 1, None, "Context(4 messages, ~18 tokens)")
    assert actual == expected


@pytest.mark.parametrize("index", [4, -5], ids=["past-end", "before-start"])
def test_context_index_out_of_range(index):
    with pytest.raises(IndexError):
        pattern("suat")[index]


def test_context_equality_and_hash_follow_the_messages():
    older = pattern("sua")
    newer = older.append(TextMessage.user("x"))
    actual = (
        older == pattern("sua"),
        hash(older) == hash(pattern("sua")),
        older == newer,
        older == "sua",
    )
    assert actual == (True, True, False, False)


def test_context_user_message_count_counts_images_not_tool_results():
    actual = pattern("sutrua").append(TextMessage.image("data:x")).user_message_count()
    assert actual == 3


# -- properties: incremental bookkeeping equals a plain scan ----------------------------------

_messages = st.one_of(
    st.text(max_size=40).map(TextMessage.user),
    st.builds(
        lambda text, total: TextMessage.assistant(
            text,
            usage=None
            if total is None
            else Usage(total_tokens=TokenCount(value=total[0], kind=total[1])),
        ),
        st.text(max_size=40),
        st.one_of(
            st.none(),
            st.tuples(
                st.one_of(st.integers(0, 40), st.integers(0, 10_000)),
                st.sampled_from(["actual", "approx"]),
            ),
        ),
    ),
    st.text(max_size=40).map(lambda text: ToolResult.of("c", text)),
)


def _reports(messages, usage_floor: int) -> list[tuple[int, bool]]:
    """(index, believed) of every usage report at or after the floor, by scanning."""
    found = []
    for index in range(usage_floor, len(messages)):
        usage = messages[index].usage
        if usage is not None and usage.total_tokens.is_actual() and usage.total_tokens.value > 0:
            estimate = sum(m.approx_tokens for m in messages[: index + 1])
            found.append((index, is_plausible_total(usage.total_tokens.value, estimate)))
    return found


def _scanned_token_count(messages, usage_floor: int) -> TokenCount:
    believed = [index for index, ok in _reports(messages, usage_floor) if ok]
    if believed:
        index = believed[-1]
        later = sum(m.approx_tokens for m in messages[index + 1 :])
        return TokenCount.actual(messages[index].usage.total_tokens.value + later)
    return TokenCount.approx(sum(m.approx_tokens for m in messages))


def _scanned_distrusted_index(messages, usage_floor: int) -> int | None:
    reports = _reports(messages, usage_floor)
    return reports[-1][0] if reports and not reports[-1][1] else None


@given(
    messages=st.lists(_messages, max_size=12),
    cuts=st.lists(st.integers(0, 12), max_size=4),
    usage_floor=st.integers(0, 12),
)
def test_context_appended_in_chunks_counts_like_a_scan(messages, cuts, usage_floor):
    context = Context(usage_floor=usage_floor)
    previous = 0
    for cut in [*sorted(c for c in cuts if c <= len(messages)), len(messages)]:
        context = context.append(*messages[previous:cut])
        previous = cut
    built = Context(messages, usage_floor=usage_floor)
    actual = (
        context.token_count(),
        context.distrusted_usage_index(),
        built.token_count(),
        built.distrusted_usage_index(),
        context.token_count_approx(),
        context.user_message_count(),
        context.messages,
    )
    expected = (
        _scanned_token_count(messages, max(usage_floor, 0)),
        _scanned_distrusted_index(messages, max(usage_floor, 0)),
        _scanned_token_count(messages, max(usage_floor, 0)),
        _scanned_distrusted_index(messages, max(usage_floor, 0)),
        sum(m.approx_tokens for m in messages),
        sum(1 for m in messages if m.has_role(Role.USER)),
        tuple(messages),
    )
    assert actual == expected
