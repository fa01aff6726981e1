"""Agents: the compaction threshold, plugin selection and the compact model."""

from __future__ import annotations

import pytest

from forge_domain import DEFAULT_CONTEXT_WINDOW, Agent, Compact, PluginSelection
from tests.vectors import vector_params


def _forge_cap_applies(vector) -> bool:
    given = vector["input"]
    window = given["context_length"] or DEFAULT_CONTEXT_WINDOW
    pct = given["token_threshold_percentage"] or 0.7
    return given["token_threshold"] is None and window * pct > 100_000


def _threshold(given) -> int:
    agent = Agent(
        id="forge",
        compact=Compact(
            token_threshold=given["token_threshold"],
            token_threshold_percentage=given["token_threshold_percentage"],
        ),
    )
    return agent.compaction_threshold(given["context_length"])


@pytest.mark.parametrize(
    "vector", vector_params("compaction_threshold", where=lambda v: not _forge_cap_applies(v))
)
def test_agent_compaction_threshold_matches_forge(vector):
    actual = _threshold(vector["input"])
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    ("context_length", "expected"),
    [(200_000, 140_000), (1_000_000, 700_000), (1_048_576, 734_003), (180_000, 125_999)],
    ids=[
        "200k-window-gives-70pct-not-forge-100k",
        "1m-window-gives-700k-not-forge-100k-issue-3518",
        "1mi-window-floor-734003.2",
        "180k-float-product-125999-not-forge-100k",
    ],
)
def test_agent_compaction_threshold_has_no_100k_cap_when_unset(context_length, expected):
    given = {"token_threshold": None, "token_threshold_percentage": None}
    actual = _threshold({**given, "context_length": context_length})
    assert actual == expected


def test_agent_compaction_threshold_deviations_cover_every_capped_vector():
    actual = sorted(
        p.values[0]["input"]["context_length"]
        for p in vector_params("compaction_threshold", where=_forge_cap_applies)
    )
    assert actual == [180_000, 200_000, 1_000_000, 1_048_576]


@pytest.mark.parametrize(
    ("agent", "context_length", "expected"),
    [
        (Agent(id="a", context_length=64_000), None, 44_800),
        (Agent(id="a", context_length=64_000), 10_000, 7_000),
        (Agent(id="a"), None, 89_600),
    ],
    ids=["agent-window", "argument-wins", "default-window"],
)
def test_agent_compaction_threshold_window_precedence(agent, context_length, expected):
    actual = agent.compaction_threshold(context_length)
    assert actual == expected


def test_agent_with_compaction_threshold_sets_token_threshold():
    actual = Agent(id="a").with_compaction_threshold(200_000)
    expected = Agent(id="a", compact=Compact(token_threshold=140_000))
    assert actual == expected


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        (Agent(id="a", model="big"), Agent(id="a", model="big", compact=Compact(model="big"))),
        (
            Agent(id="a", model="big", compact=Compact(model="small")),
            Agent(id="a", model="big", compact=Compact(model="small")),
        ),
        (Agent(id="a"), Agent(id="a")),
    ],
    ids=["defaults-to-agent-model", "keeps-configured", "no-model-anywhere"],
)
def test_agent_with_compact_model(agent, expected):
    actual = agent.with_compact_model()
    assert actual == expected


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (PluginSelection(), {"x": True, "y": True}),
        (PluginSelection(enable=("x",)), {"x": True, "y": False}),
        (PluginSelection(disable=("x",)), {"x": False, "y": True}),
        (PluginSelection(enable=("x",), disable=("x",)), {"x": False, "y": False}),
    ],
    ids=["all", "enable-only", "disable", "disable-wins"],
)
def test_plugin_selection_allows(selection, expected):
    actual = {name: selection.allows(name) for name in ("x", "y")}
    assert actual == expected


def test_compact_builtin_agent_runtime_config_keeps_retention():
    workflow = Compact(
        eviction_window=0.2,
        max_tokens=2000,
        message_threshold=200,
        on_turn_end=False,
        retention_window=6,
        token_threshold=100000,
    )
    agent = Agent(id="forge", model="m", compact=workflow.merged_with(Compact()))
    actual = agent.with_compact_model().with_compaction_threshold(128_000).compact
    expected = workflow.model_copy(update={"model": "m", "token_threshold": 89_600})
    assert actual == expected
