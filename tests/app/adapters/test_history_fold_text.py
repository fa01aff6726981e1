"""A framework's history that holds a summary written by another process still folds it."""

from __future__ import annotations

import json

import pytest

from forge_app.adapters import ForgeHistoryProcessor
from forge_app.summary import SUMMARY_MARKER
from tests.app.adapters import scenario
from tests.app.adapters.test_pydantic_ai_history import history, turn

pytestmark = pytest.mark.anyio


async def test_a_new_processor_folds_the_summary_an_earlier_one_wrote():
    messages = await ForgeHistoryProcessor(scenario.SETTINGS)(history(6))
    processor = ForgeHistoryProcessor(scenario.SETTINGS)  # a restart: nothing remembered
    for t in range(6, 12):
        messages = await processor([*messages, *turn(t)])

    text = json.dumps([str(part) for message in messages for part in message.parts])
    actual = (
        len(processor.compactions) >= 2,
        text.count(SUMMARY_MARKER),
        scenario.survives([text]),
    )
    assert actual == (True, 1, [])
