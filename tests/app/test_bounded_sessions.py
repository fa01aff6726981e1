"""The promise on real sessions: replayed at 8K, 16K and 32K windows, every request fits."""

from __future__ import annotations

import pytest

from benchmarks.bounded import WINDOWS, replay_row
from forge_app import default_agent
from tests.sessions import SESSIONS, session_paths

pytestmark = pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions not available")

CASES = [(path, window) for path in session_paths() for window in WINDOWS]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "window"), CASES, ids=[f"{path.stem}-{window}" for path, window in CASES]
)
async def test_replayed_session_stays_inside_its_window(path, window):
    agent = default_agent()
    target = agent.compact.target_tokens(agent.compaction_threshold(window))

    row = await replay_row(path, agent, window)

    assert (
        row.stopped,
        row.peak_request <= window,
        row.after_max is None or row.after_max * row.threshold <= target,
        row.largest_summary <= row.summary_budget,
    ) == (None, True, True, True)
