"""``from_messages(..., joined=True)``: one block per run of one role, as ``of_blocks`` joins.

The compactor joins the built blocks' runs (``ContextSummary.of_blocks``) anyway; built
joined, a long chat whose assistant texts are left out has its asks in one block instead of
one block each (30,000 blocks for the 100,000-message chat's first summary). Built joined,
with or without a selection and a ``built_once`` memo, the summary equals the one built
block by block and then joined; and a compaction equals the one built block by block.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from benchmarks.replay_scale import chat_session
from forge_app.compaction import _compactor
from forge_app.compaction._compactor import Compactor
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._bounded import NarrationBudget, bounded_summary
from forge_domain import Compact, Context, Role, TextMessage
from forge_domain.summary import ContextSummary
from forge_domain.summary._summary import built_once
from forge_domain.tools import ToolCatalog
from tests.app.test_built_once import _message, _texts

_CATALOG = ToolCatalog.default()


def _joined_after(summary: ContextSummary) -> ContextSummary:
    return ContextSummary.of_blocks(summary.blocks)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.lists(st.tuples(st.integers(0, 4), _texts), min_size=1, max_size=40),
    memo=st.booleans(),
)
def test_built_joined_equals_built_then_joined(shape: list[tuple[int, str]], memo: bool) -> None:
    messages = [m for index, (kind, text) in enumerate(shape) for m in _message(kind, text, index)]
    expected = _joined_after(ContextSummary.from_messages(messages, _CATALOG))

    with built_once() if memo else contextlib.nullcontext():
        actual = ContextSummary.from_messages(messages, _CATALOG, joined=True)

    assert actual == expected


@pytest.mark.parametrize("max_chars", [3_000, 30_000, 300_000])
def test_a_selected_build_joined_equals_it_built_then_joined(max_chars: int) -> None:
    messages = list(chat_session(3_000).messages)[1:]
    # An empty user text and an image-only one between turns: nothing built, runs go on.
    messages[10:10] = [TextMessage(role=Role.USER, content="")]

    cap = NarrationBudget(str, 16_000)  # the narration the cap drops is left out

    joined = bounded_summary(messages, _CATALOG, max_chars, 2_000, cap, joined=True)

    apart = bounded_summary(messages, _CATALOG, max_chars, 2_000, cap)
    assert joined == _joined_after(apart)
    assert len(joined.blocks) < len(apart.blocks)


@pytest.mark.parametrize("max_chars", [4_000, 40_000])
@pytest.mark.parametrize("cap", [200, 16_000])
def test_a_selected_tool_session_built_joined_equals_it_built_then_joined(
    max_chars: int, cap: int
) -> None:
    data = json.dumps(generate_session(1_500, seed=2)).encode()
    messages = list(parse_transcript(data, "generated.json").context)[:-10]
    narration = NarrationBudget(str, cap)

    joined = bounded_summary(messages, _CATALOG, max_chars, 2_000, narration, joined=True)

    apart = bounded_summary(messages, _CATALOG, max_chars, 2_000, narration)
    assert joined == _joined_after(apart)


@pytest.mark.parametrize("max_tokens", [None, 3_000])
def test_a_compaction_built_joined_equals_one_built_block_by_block(
    monkeypatch: pytest.MonkeyPatch, max_tokens: int | None
) -> None:
    context = Context(list(chat_session(4_000).messages))
    compactor = Compactor(Compact(max_tokens=max_tokens, summary_max_tokens=2_000))
    joined = compactor.compact(context)

    def unjoined(*args: object, joined: bool = False) -> ContextSummary:
        return bounded_summary(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_compactor, "bounded_summary", unjoined)
    assert compactor.compact(context) == joined
