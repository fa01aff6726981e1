"""A compaction reports what it summarised apart from what it only pruned.

``compacted_range`` stays the span the compaction changed (both together); a pruning
that kept every message is no summary, and the CLI says which it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from forge_app.cli.compacting import compact_transcript
from forge_app.cli.report import metrics_table
from forge_app.compaction import resolve_engine
from forge_app.files._agents import default_agent
from forge_app.files._transcripts import read_transcript
from forge_domain import Agent, Compact, Context
from tests.sessions import SESSIONS

MARSHMALLOW = SESSIONS / "sweagent-marshmallow-1867-fc.json"
pytestmark = pytest.mark.skipif(not MARSHMALLOW.exists(), reason="shared sessions not present")


def _spans(agent: Agent, path: Path) -> tuple[object, ...]:
    context = read_transcript(path).context
    outcome = anyio.run(lambda: resolve_engine(agent).compress(context))
    result = outcome.result
    return (
        len(context),
        len(outcome.context),
        result.compacted_range,
        result.summarised_range,
        result.pruned_range,
    )


def test_compaction_spans_pruning_alone_is_no_summary() -> None:
    agent = Agent(id="p", context_length=8_000, compact=Compact(token_threshold=4_500))
    before, after, compacted, summarised, pruned = _spans(agent, MARSHMALLOW)
    actual = (before == after, summarised, pruned is not None, compacted == pruned)
    assert actual == (True, None, True, True)


def test_compaction_spans_a_summary_and_pruning_are_apart() -> None:
    path = SESSIONS / "msa-deepseek-django-15400.json"
    _, _, compacted, summarised, pruned = _spans(default_agent(), path)
    assert summarised is not None
    starts = [span[0] for span in (summarised, pruned) if span is not None]
    ends = [span[1] for span in (summarised, pruned) if span is not None]
    assert compacted == (min(starts), max(ends))


def test_compaction_spans_are_in_the_metrics_and_the_table() -> None:
    agent = Agent(id="p", context_length=8_000, compact=Compact(token_threshold=4_500))
    transcript = read_transcript(MARSHMALLOW)
    _, metrics = compact_transcript(transcript, agent, source=str(MARSHMALLOW))
    record = json.loads(metrics.model_dump_json())
    from rich.console import Console

    console = Console(width=120, no_color=True, record=True)
    console.print(metrics_table(metrics))
    text = console.export_text()
    start, end = record["pruned_range"]
    actual = (
        record["summarised_range"],
        f"summarised: none · pruned: {start + 1}..{end + 1}" in text,  # numbered from 1
        "range compacted" in text,
    )
    assert actual == (None, True, False), text


def test_compaction_spans_of_a_plain_engine_are_summarised() -> None:
    from forge_domain import compaction_outcome
    from forge_domain.testing import pattern

    context = pattern("suauaua")
    compacted = context.replace_range(2, 4, list(pattern("u")))
    result = compaction_outcome(context, compacted, (2, 4), engine="x").result
    assert (result.summarised_range, result.pruned_range) == ((2, 4), None)


_ = Context
