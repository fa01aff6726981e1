"""Each provider rule, one table row at a time and against an independent oracle.

Contexts are pattern strings (``forge_domain.testing``) with a few edits on top, for
what patterns cannot say: ``{2: "user"}`` turns message 2 into a user message (with
its tool calls, if any), ``"system"`` and ``"assistant"`` likewise; ``"blank"``,
``"spaces"`` and ``"none"`` set its content to ``""``, whitespace or None;
``"no_calls"`` gives it an empty list of tool calls; ``"id:call_2"`` gives its first
call (or, for a tool result, its answer) that id; ``"call_type"`` gives its first call the
type ``x``; ``"part:text"``, ``"part:empty"``, ``"part:image"`` and ``"part:banana"`` make
its content one part of that kind (a tool result's too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import (
    ContentPart,
    Context,
    ContextMessage,
    ImagePart,
    InvalidTranscript,
    OtherPart,
    Role,
    TextMessage,
    TextPart,
    ToolResult,
)
from forge_domain.formats import Dialect, ensure_valid, find_violations, is_valid
from forge_domain.testing import PATTERN_LETTERS, pattern_messages

_EDITS = (
    "user",
    "system",
    "assistant",
    "blank",
    "spaces",
    "none",
    "no_calls",
    "call_type",
    "part:text",
    "part:empty",
    "part:image",
    "part:banana",
)
_PARTS: dict[str, ContentPart] = {
    "text": TextPart(text="t"),
    "empty": TextPart(text=""),
    "image": ImagePart(url="data:image/png;base64,AA=="),
    "banana": OtherPart(raw={"type": "banana"}),
}


def _edit(message: ContextMessage, edit: str) -> ContextMessage:
    kind, _, call_id = edit.partition(":")
    if kind == "part":
        return message.model_copy(update={"content": (_PARTS[call_id],)})
    if isinstance(message, ToolResult):
        return message.model_copy(update={"call_id": call_id}) if kind == "id" else message
    calls = message.tool_calls
    match kind:
        case "user" | "system" | "assistant":
            return message.model_copy(update={"role": Role(kind)})
        case "blank" | "spaces" | "none":
            blank = {"blank": "", "spaces": " \n ", "none": None}[kind]
            return message.model_copy(update={"content": blank})
        case "no_calls":
            return message.model_copy(update={"tool_calls": ()})
        case "call_type" if calls:
            first = calls[0].model_copy(update={"call_type": "x"})
            return message.model_copy(update={"tool_calls": (first, *calls[1:])})
        case "id" if calls:
            first = calls[0].model_copy(update={"id": call_id})
            return message.model_copy(update={"tool_calls": (first, *calls[1:])})
    return message


def _edited(letters: str, edits: Mapping[int, str]) -> list[ContextMessage]:
    messages = pattern_messages(letters)
    return [
        _edit(message, edits[at]) if at in edits else message for at, message in enumerate(messages)
    ]


RULE_CASES = [
    ("unanswered_tool_call", "sutu", {}, "openai", [(2, "unanswered_tool_call")]),
    ("unanswered_tool_call/one_of_two", "suTru", {}, "openai", [(2, "unanswered_tool_call")]),
    ("unanswered_tool_call/at_the_end", "sut", {}, "openai", [(2, "unanswered_tool_call")]),
    ("unanswered_tool_call/answered", "suTrru", {}, "openai", []),
    ("orphan_tool_result/after_a_turn", "suar", {}, "openai", [(3, "orphan_tool_result")]),
    ("orphan_tool_result/first", "rua", {}, "openai", [(0, "orphan_tool_result")]),
    (
        "orphan_tool_result/wrong_id",
        "sutr",
        {3: "id:elsewhere"},
        "openai",
        [(2, "unanswered_tool_call"), (3, "orphan_tool_result")],
    ),
    ("duplicate_tool_result", "sutrr", {}, "openai", [(4, "duplicate_tool_result")]),
    (
        "duplicate_tool_call_id",
        "sutrtr",
        {4: "id:call_3", 5: "id:call_3"},
        "openai",
        [(4, "duplicate_tool_call_id")],
    ),
    (
        "duplicate_tool_call_id/in_one_message",
        "suTr",
        {2: "id:call_3_2", 3: "id:call_3_2"},
        "openai",
        [(2, "duplicate_tool_call_id")],
    ),
    (
        "tool_calls_on_non_assistant",
        "sutr",
        {2: "user"},
        "openai",
        [(2, "tool_calls_on_non_assistant")],
    ),
    (
        "tool_calls_on_non_assistant/empty_list",
        "su",
        {1: "no_calls"},
        "openai",
        [(1, "tool_calls_on_non_assistant")],
    ),
    ("tool_calls_on_non_assistant/assistant_empty_list", "sua", {2: "no_calls"}, "openai", []),
    ("empty_message", "sua", {1: "blank"}, "openai", [(1, "empty_message")]),
    ("empty_message/whitespace", "sua", {2: "spaces"}, "openai", [(2, "empty_message")]),
    ("empty_message/none", "sua", {2: "none"}, "openai", [(2, "empty_message")]),
    ("empty_message/calls_are_content", "sutr", {2: "blank"}, "openai", []),
    ("system_not_first", "susa", {}, "openai", [(2, "system_not_first")]),
    (
        "system_not_first/after_a_result",
        "sutr",
        {0: "user", 1: "system"},
        "openai",
        [(1, "system_not_first")],
    ),
    ("system_not_first/leading_systems", "ssua", {}, "openai", []),
    ("first_turn_not_user", "sau", {}, "anthropic", [(1, "first_turn_not_user")]),
    ("first_turn_not_user/openai", "sau", {}, "openai", []),
    ("no_user_turn", "ss", {}, "anthropic", [(1, "no_user_turn")]),
    ("no_messages", "", {}, "anthropic", [(0, "no_messages")]),
    ("no_messages/openai", "", {}, "openai", [(0, "no_messages")]),
    ("tool_call_type", "sutr", {2: "call_type"}, "openai", [(2, "tool_call_type")]),
    ("content_part_type", "su", {1: "part:banana"}, "openai", [(1, "content_part_type")]),
    (
        "content_part_type/image_in_system",
        "su",
        {0: "part:image"},
        "openai",
        [(0, "content_part_type")],
    ),
    ("content_part_type/image_from_user", "sua", {1: "part:image"}, "openai", []),
    ("content_part_type/tool_text", "sutr", {3: "part:text"}, "openai", []),
    ("empty_text_part", "sua", {1: "part:empty"}, "openai", [(1, "empty_text_part")]),
    ("no_user_turn/openai", "ss", {}, "openai", []),
    (
        "order/calls_on_the_last_message",
        "st",
        {1: "system"},
        "anthropic",
        [(1, "no_user_turn"), (1, "tool_calls_on_non_assistant"), (1, "unanswered_tool_call")],
    ),
    (
        "order/late_empty_system",
        "rs",
        {1: "blank"},
        "anthropic",
        [
            (0, "orphan_tool_result"),
            (1, "system_not_first"),
            (1, "empty_message"),
            (1, "no_user_turn"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("letters", "edits", "dialect", "expected"),
    [case[1:] for case in RULE_CASES],
    ids=[case[0] for case in RULE_CASES],
)
def test_find_violations_rule_table(letters, edits, dialect, expected):
    actual = [(v.index, v.rule) for v in find_violations(Context(_edited(letters, edits)), dialect)]
    assert actual == expected


def test_rule_table_covers_every_rule():
    actual = {case[0].split("/")[0] for case in RULE_CASES} - {"order"}
    assert actual == set(ORACLE)


# -- the oracle: each rule on its own, straight from its wording, no shared state ----------


def _ids(message: ContextMessage) -> list[str]:
    if isinstance(message, ToolResult):
        return []
    return [call.id for call in message.tool_calls or ()]


def _run(messages: list[ContextMessage], at: int) -> list[int]:
    """Indices of the tool results right after message ``at``."""
    after = at + 1
    while after < len(messages) and isinstance(messages[after], ToolResult):
        after += 1
    return list(range(at + 1, after))


def _caller(messages: list[ContextMessage], at: int) -> int | None:
    """The message whose calls the result at ``at`` may answer: the last one before its run."""
    before = at - 1
    while before >= 0 and isinstance(messages[before], ToolResult):
        before -= 1
    return before if before >= 0 else None


def _answer(message: ContextMessage) -> str:
    assert isinstance(message, ToolResult)
    return message.call_id


def _texts(messages: list[ContextMessage]) -> list[tuple[int, TextMessage]]:
    return [(i, m) for i, m in enumerate(messages) if isinstance(m, TextMessage)]


def _results(messages: list[ContextMessage]) -> list[tuple[int, ToolResult]]:
    return [(i, m) for i, m in enumerate(messages) if isinstance(m, ToolResult)]


def _turns(messages: list[ContextMessage]) -> list[tuple[int, TextMessage]]:
    return [(i, m) for i, m in _texts(messages) if m.role != Role.SYSTEM]


def _unanswered(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        i
        for i, m in _texts(messages)
        for call_id in dict.fromkeys(_ids(m))
        if call_id not in {_answer(messages[k]) for k in _run(messages, i)}
    ]


def _orphans(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        k
        for k, r in _results(messages)
        if (caller := _caller(messages, k)) is None or r.call_id not in _ids(messages[caller])
    ]


def _duplicate_results(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        k
        for k, r in _results(messages)
        if (caller := _caller(messages, k)) is not None
        and r.call_id in _ids(messages[caller])
        and r.call_id in [_answer(messages[j]) for j in range(caller + 1, k)]
    ]


def _duplicate_ids(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        i
        for i, m in _texts(messages)
        for p, call_id in enumerate(_ids(m))
        if call_id in [c for earlier in messages[:i] for c in _ids(earlier)] + _ids(m)[:p]
    ]


def _non_assistant_calls(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [i for i, m in _texts(messages) if m.tool_calls is not None and m.role != Role.ASSISTANT]


def _empty(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        i
        for i, m in _texts(messages)
        if not m.tool_calls
        and (
            m.content is None
            or m.content == ()
            or (isinstance(m.content, str) and not m.content.strip())
        )
    ]


def _late_systems(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [
        i
        for i, m in _texts(messages)
        if m.role == Role.SYSTEM
        and any(isinstance(e, ToolResult) or e.role != Role.SYSTEM for e in messages[:i])
    ]


def _first_turn_not_user(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    turns = _turns(messages)
    return (
        [turns[0][0]] if dialect == "anthropic" and turns and turns[0][1].role != Role.USER else []
    )


def _no_turn(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    if dialect != "anthropic" or not messages or _turns(messages):
        return []
    return [len(messages) - 1]


def _no_messages(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    return [] if messages else [0]


def _call_types(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    if dialect != "openai":  # chat completions' own rule (issue 14)
        return []
    return [
        i
        for i, m in _texts(messages)
        for call in m.tool_calls or ()
        if call.call_type not in (None, "function")
    ]


_ACCEPTED = {
    "system": {TextPart},
    "user": {TextPart, ImagePart},
    "assistant": {TextPart},
    "tool": {TextPart},
}
"""Part kinds each role takes, of those the edits make (OpenAI's chat completions)."""


def _parts(messages: list[ContextMessage]) -> list[tuple[int, str, ContentPart]]:
    return [
        (i, "tool" if isinstance(m, ToolResult) else m.role.value, part)
        for i, m in enumerate(messages)
        if isinstance(m.content, tuple)
        for part in m.content
    ]


def _part_types(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    if dialect != "openai":  # chat completions' own rule (issue 14)
        return []
    return [i for i, role, part in _parts(messages) if type(part) not in _ACCEPTED[role]]


def _empty_texts(messages: list[ContextMessage], dialect: Dialect) -> list[int]:
    if dialect != "openai":  # chat completions' own rule (issue 14)
        return []
    return [
        i
        for i, role, part in _parts(messages)
        if isinstance(part, TextPart) and not part.text and TextPart in _ACCEPTED[role]
    ]


ORACLE: dict[str, Callable[[list[ContextMessage], Dialect], list[int]]] = {
    "unanswered_tool_call": _unanswered,
    "orphan_tool_result": _orphans,
    "duplicate_tool_result": _duplicate_results,
    "duplicate_tool_call_id": _duplicate_ids,
    "tool_calls_on_non_assistant": _non_assistant_calls,
    "empty_message": _empty,
    "system_not_first": _late_systems,
    "first_turn_not_user": _first_turn_not_user,
    "no_user_turn": _no_turn,
    "no_messages": _no_messages,
    "tool_call_type": _call_types,
    "content_part_type": _part_types,
    "empty_text_part": _empty_texts,
}
"""Every rule and the indices at fault, one entry per violation."""


_TURNS = st.lists(
    st.sampled_from(["u", "a", "ua", "tr", "Tre", "t", "r", "trr", "s"]), max_size=6
).map("".join)


@st.composite
def _transcripts(draw: st.DrawFn) -> list[ContextMessage]:
    """A pattern, any or made of turns (a few of them invalid: missing, orphan and repeated
    results, late systems), then a few edits (calls on user or system messages, reused call
    ids, empty messages)."""
    letters = draw(st.text(PATTERN_LETTERS, max_size=10) | _TURNS.map("su".__add__))
    messages = pattern_messages(letters)
    ids = sorted({i for m in messages for i in _ids(m)}) or ["call_0"]
    edit = st.sampled_from(_EDITS) | st.sampled_from([f"id:{i}" for i in ids])
    edits = draw(st.dictionaries(st.integers(0, max(0, len(letters) - 1)), edit, max_size=3))
    return _edited(letters, edits)


_DIALECTS = st.sampled_from(["openai", "anthropic", "responses"])


@pytest.mark.parametrize("rule", list(ORACLE))
@given(messages=_transcripts(), dialect=_DIALECTS)
def test_find_violations_agrees_with_the_oracle(rule, messages, dialect):
    found = find_violations(Context(messages), dialect)
    actual = sorted(v.index for v in found if v.rule == rule)
    assert actual == sorted(ORACLE[rule](messages, dialect))


@given(messages=_transcripts(), dialect=_DIALECTS)
def test_is_valid_ensure_valid_and_order_agree_with_the_oracle(messages, dialect):
    context = Context(messages)
    expected = not any(oracle(messages, dialect) for oracle in ORACLE.values())
    try:
        ensure_valid(context, dialect)
        raised = False
    except InvalidTranscript:
        raised = True
    indices = [v.index for v in find_violations(context, dialect)]
    actual = (is_valid(context, dialect), raised, indices == sorted(indices))
    assert actual == (expected, not expected, True)


UNSIGNED = TextMessage(
    role=Role.ASSISTANT, content="x", reasoning_details=({"type": "thinking", "thinking": "t"},)
)
SIGNED = UNSIGNED.model_copy(
    update={"reasoning_details": ({"type": "thinking", "thinking": "t", "signature": "s"},)}
)
RESULTS_AFTER_TEXT = TextMessage(role=Role.USER, content="t", extra={"_anthropic": {"order": "ct"}})


@pytest.mark.parametrize(
    ("messages", "dialect", "expected"),
    [
        ([TextMessage.user("go"), UNSIGNED], "anthropic", [(1, "thinking_without_signature")]),
        ([TextMessage.user("go"), UNSIGNED], "openai", []),
        ([TextMessage.user("go"), SIGNED], "anthropic", []),
        ([RESULTS_AFTER_TEXT], "anthropic", [(0, "result_after_content")]),
        ([RESULTS_AFTER_TEXT], "responses", []),
    ],
    ids=["unsigned", "unsigned-openai", "signed", "results-after-text", "layout-responses"],
)
def test_anthropic_block_rules_are_part_of_the_one_rule_set(messages, dialect, expected):
    context = Context(messages)
    found = [(v.index, v.rule) for v in find_violations(context, dialect)]
    assert (found, is_valid(context, dialect)) == (expected, not expected)
