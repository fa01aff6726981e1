"""benchmarks.steps replays a whole compaction, step by step, and times every step."""

from __future__ import annotations

from benchmarks import ours
from benchmarks.generator import generate_session
from benchmarks.steps import STEPS, measure, replay_compaction
from forge_app.compaction._compactor import Compactor
from forge_domain import Context


def test_steps_time_every_step_of_each_run():
    samples = measure(size=300, runs=2, seed=3)
    assert list(samples) == [name for name, _ in STEPS]
    assert all(len(taken) == 2 for taken in samples.values())
    assert all(value >= 0 for taken in samples.values() for value in taken)
    assert sum(sum(taken) for taken in samples.values()) > 0


def test_steps_replay_gives_what_the_compactor_gives():
    compactor = Compactor(ours.default_config().compact, cwd="/repo")
    session = generate_session(400, seed=5)
    replayed = replay_compaction(compactor, Context.from_openai(session), lambda _, step: step())
    expected = compactor.compact(Context.from_openai(session)).context
    assert replayed.to_openai() == expected.to_openai()
