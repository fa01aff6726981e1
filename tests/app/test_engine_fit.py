"""The last resort of fitting: cut the largest texts, visibly, never breaking pairs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.compaction._boundaries import head_end, task_index
from forge_app.compaction._compactor import Compactor, is_summary_message
from forge_app.compaction._fit import CUT_MARKER, MIN_KEPT_CHARS, cut_to_fit, irreducible_parts
from forge_app.summary import SUMMARY_MARKER
from forge_domain import Compact, Context, Role, TextMessage, ToolCall, ToolResult
from forge_domain.formats import find_violations
from forge_domain.testing import pattern_messages, pattern_of
from tests.profiles import examples


def session(*outputs: int, task: int = 40, system: int = 40) -> Context:
    """System, task, then one call per output size answered by an output that long."""
    messages: list[TextMessage | ToolResult] = [
        TextMessage.system("s" * system),
        TextMessage.user("t" * task),
    ]
    for number, size in enumerate(outputs):
        call = ToolCall(id=f"c{number}", name="bash", arguments='{"command": "ls"}')
        messages.append(TextMessage.assistant(None, (call,)))
        messages.append(ToolResult(call_id=f"c{number}", content=f"HEAD{'x' * size}TAIL"))
    return Context(messages)


def test_cut_to_fit_leaves_a_context_that_fits_alone():
    fixture = session(100, 200)

    actual = cut_to_fit(fixture, fixture.token_count_approx())

    assert (actual.context is fixture, actual.indices) == (True, ())


CUTS = [
    # (outputs in chars, budget in tokens, indices cut)
    ("one_huge_output", (40_000, 300, 300), 3_000, (3,)),
    ("two_huge_outputs_cut_to_one_length", (40_000, 30_000, 300), 3_000, (3, 5)),
    ("the_largest_only_when_that_is_enough", (40_000, 5_000, 300), 9_000, (3,)),
]


@pytest.mark.parametrize(
    ("outputs", "budget", "indices"), [c[1:] for c in CUTS], ids=[c[0] for c in CUTS]
)
def test_cut_to_fit_cuts_the_largest_outputs_until_the_context_fits(outputs, budget, indices):
    fixture = session(*outputs)

    actual = cut_to_fit(fixture, budget)

    cut = [actual.context[i].text for i in actual.indices]
    assert (
        actual.indices,
        actual.context.token_count_approx() <= budget,
        all(t.startswith("HEAD") and t.endswith("TAIL") for t in cut),
        all("chars cut to fit the context window" in t for t in cut),
        pattern_of(actual.context),
        find_violations(actual.context),
    ) == (indices, True, True, True, pattern_of(fixture), [])


def test_cut_to_fit_cuts_the_task_only_when_allowed_and_never_the_system_prompt():
    fixture = session(2_000, task=40_000, system=8_000)

    outputs_only = cut_to_fit(fixture, 3_000)
    actual = cut_to_fit(fixture, 3_000, reach="task_too")

    assert (
        outputs_only.indices,
        actual.indices,
        actual.context[0].text == fixture[0].text,
        actual.context.token_count_approx() <= 3_000,
    ) == ((3,), (1, 3), True, True)


def test_cut_to_fit_never_cuts_an_earlier_summary():
    compactor = Compactor(Compact(retention_window=2, eviction_window=1.0))
    compacted = compactor.compact(session(4_000, 4_000, 4_000, 40_000)).context
    summary_index = next(i for i, m in enumerate(compacted) if "Summary" in m.text)

    actual = cut_to_fit(compacted, 1_500)

    assert (
        summary_index not in actual.indices,
        actual.context[summary_index] == compacted[summary_index],
    ) == (True, True)


def test_irreducible_parts_names_what_cannot_be_cut():
    fixture = session(50_000, system=40_000)

    cut = cut_to_fit(fixture, 2_000, reach="task_too")

    assert (
        cut.context.token_count_approx() > 2_000,
        irreducible_parts(cut.context).startswith("system prompt ~10,"),
    ) == (True, True)


def test_cut_marker_says_how_much_was_removed():
    fixture = session(10_000)

    actual = cut_to_fit(fixture, 500).context[3].text

    removed = len("HEAD") + 10_000 + len("TAIL") - (len(actual) - len(CUT_MARKER) - 20)
    count = int(actual.split("[… ")[1].split(" chars")[0].replace(",", ""))
    assert (abs(count - removed) < 30, len(actual) >= MIN_KEPT_CHARS) == (True, True)


@settings(max_examples=examples(60), deadline=None)
@given(
    outputs=st.lists(st.integers(min_value=0, max_value=30_000), min_size=1, max_size=12),
    budget=st.integers(min_value=200, max_value=20_000),
)
def test_cut_to_fit_keeps_every_message_role_and_id_and_fits_when_it_can(outputs, budget):
    fixture = session(*outputs)

    actual = cut_to_fit(fixture, budget, reach="task_too").context

    floor = sum(min(m.approx_tokens, MIN_KEPT_CHARS // 2) for m in fixture)
    ids = [json.dumps(m.model_dump(exclude={"content"}), default=str) for m in actual]
    expected_ids = [json.dumps(m.model_dump(exclude={"content"}), default=str) for m in fixture]
    assert (
        ids == expected_ids,
        find_violations(actual),
        actual.token_count_approx() <= budget or budget < floor,
    ) == (True, [], True)


def test_cut_to_fit_spares_the_task_after_a_demonstration():
    """SWE-agent and OpenHands put a demonstration before the task: the task is the last ask."""
    demonstration = TextMessage.user("demo " * 8_000)
    task = TextMessage.user("fix the bug " * 200)
    fixture = session(1_000)
    fixture = Context([fixture[0], demonstration, task, *fixture[2:]])

    actual = cut_to_fit(fixture, 3_000)

    assert (actual.indices, actual.context[2] == task) == ((1, 4), True)  # outputs go first


def with_summaries(letters: str, user_chars: int = 8) -> Context:
    """``pattern(letters)`` with ``S`` an earlier summary, every user text ``user_chars`` long."""
    messages = pattern_messages(letters.replace("S", "u"))
    return Context(
        [
            TextMessage.user(f"{SUMMARY_MARKER} {'y' * 20}")
            if letter == "S"
            else TextMessage.user("u" * user_chars)
            if letter == "u"
            else message
            for letter, message in zip(letters, messages, strict=True)
        ]
    )


TASKS = [
    ("system_and_task", "suaua", 1, 2),
    ("demonstration_then_task", "suuaua", 2, 3),
    ("summary_then_user", "sSuaua", None, 1),
    ("task_summary_then_user", "suSuaua", 1, 2),
    ("task_then_summary_alone", "suS", 1, 2),
    ("no_system", "uaua", 0, 1),
    ("no_task", "saua", None, 1),
    ("answer_with_calls_first", "strua", None, 1),
]
"""(id, pattern with ``S`` a summary, the task's index, the head's end)."""


@pytest.mark.parametrize(
    ("letters", "task", "end"), [row[1:] for row in TASKS], ids=[row[0] for row in TASKS]
)
def test_task_index_is_the_last_user_message_of_the_head(letters, task, end):
    fixture = list(with_summaries(letters))

    actual = (
        task_index(fixture, is_summary=is_summary_message),
        head_end(fixture, is_summary=is_summary_message),
    )

    assert actual == (task, end)


@pytest.mark.parametrize(
    ("letters", "task"), [row[1:3] for row in TASKS], ids=[row[0] for row in TASKS]
)
def test_cut_to_fit_spares_the_task_and_only_the_task(letters, task):
    fixture = with_summaries(letters, user_chars=20_000)
    users = [i for i, m in enumerate(fixture) if m.has_role(Role.USER)]
    users = [i for i in users if not is_summary_message(fixture[i])]

    actual = cut_to_fit(fixture, 100).indices

    assert actual == tuple(i for i in users if i != task)
