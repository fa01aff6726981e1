"""The replay's slim turn records agree with the public ``ReplayTurn``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.files._agents import load_agent
from forge_app.runtime import ReplayTurn
from forge_app.runtime._replay import Replay
from forge_app.runtime._turn_log import TurnLog, TurnRecord
from forge_domain import CompactionResult, Context, TokenCount

DEMO = Path(__file__).parents[2] / "forge_app" / "demo"

_COUNTS = st.builds(
    lambda value, actual: TokenCount.actual(value) if actual else TokenCount.approx(value),
    st.integers(0, 2**40),
    st.booleans(),
)
_RESULTS = st.builds(
    CompactionResult,
    original_tokens=st.integers(0, 10**7),
    compacted_tokens=st.integers(0, 10**7),
    original_messages=st.integers(0, 10**5),
    compacted_messages=st.integers(0, 10**5),
    compacted_range=st.one_of(st.none(), st.tuples(st.integers(0, 99), st.integers(100, 199))),
)
_TURNS = st.builds(
    ReplayTurn,
    turn=st.integers(1, 10**6),
    messages=st.integers(0, 10**6),
    tokens=_COUNTS,
    request_tokens=_COUNTS,
    recorded_messages=st.integers(0, 10**6),
    recorded_tokens=st.integers(0, 2**40),
    compactions=st.lists(_RESULTS, max_size=3).map(tuple),
)


@given(st.lists(_TURNS, max_size=30))
def test_the_log_gives_back_every_replay_turn(turns):
    """Each turn, kept as a record in the log and read back, is the same ``ReplayTurn``
    (its JSON too), read in order, by index (from either end) or by slice; the record's
    own figures are the turn's."""
    log = TurnLog([TurnRecord.of(turn) for turn in turns])
    back = [record.replay_turn() for record in log]
    views = [
        (r.turn, r.messages, r.tokens, r.request_tokens, r.recorded_tokens, r.compactions)
        for r in log
    ]
    expected = [
        (t.turn, t.messages, t.tokens, t.request_tokens, t.recorded_tokens, t.compactions)
        for t in turns
    ]
    assert (
        back,
        [t.model_dump_json() for t in back],
        views,
        [log[i].replay_turn() for i in range(-len(turns), len(turns))],
        [r.replay_turn() for r in log[1::2]],
        len(log),
    ) == (
        turns,
        [t.model_dump_json() for t in turns],
        expected,
        turns + turns,
        turns[1::2],
        len(turns),
    )


def test_a_record_has_every_field_of_the_turn():
    """A field added to ``ReplayTurn`` and not to the record fails here (the record
    would drop it)."""
    record_names = {f.name for f in dataclasses.fields(TurnRecord)} | {"tokens", "request_tokens"}
    assert set(ReplayTurn.model_fields) <= record_names


def test_reading_past_the_log_is_an_index_error():
    log = TurnLog()
    with pytest.raises(IndexError):
        log[0]


@pytest.mark.anyio
async def test_records_and_turns_of_a_replay_agree():
    """``Replay.records()`` and ``Replay.turns()`` of the same session and agent give the
    same turns (compactions included)."""
    agent = load_agent(DEMO / "agent.yaml")
    session = Context.from_openai(json.loads((DEMO / "session.json").read_text()))
    records = [r async for r in Replay(session, agent).records()]
    turns = [t async for t in Replay(session, agent).turns()]
    compacted = sum(1 for t in turns if t.compactions)
    assert ([r.replay_turn() for r in records], compacted > 1) == (turns, True)
