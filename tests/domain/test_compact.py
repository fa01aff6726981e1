"""The ``Compact`` config: triggers, defaults, validation and merging."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from forge_domain import Compact, InvalidConfig, TokenCount
from forge_domain.testing import pattern
from tests.vectors import vector_params


def _check(compact: Compact, vector_input) -> bool:
    context = pattern(vector_input.get("pattern", ""))
    tokens = vector_input.get("token_count", 0)
    match vector_input["function"]:
        case "due_to_tokens":
            return compact.should_compact_due_to_tokens(tokens)
        case "due_to_turns":
            return compact.should_compact_due_to_turns(context)
        case "due_to_messages":
            return compact.should_compact_due_to_messages(context)
        case "on_turn_end":
            return compact.should_compact_on_turn_end(context)
        case "should_compact":
            return compact.should_compact(context, tokens)
    raise AssertionError(vector_input["function"])


@pytest.mark.parametrize("vector", vector_params("should_compact"))
def test_compact_should_compact_matches_forge(vector):
    compact = Compact(**vector["input"]["config"])
    actual = _check(compact, vector["input"])
    assert actual == vector["expected"]


@pytest.mark.parametrize(
    ("token_count", "expected"),
    [
        (TokenCount.actual(100), True),
        (TokenCount.approx(100), True),
        (TokenCount.approx(99), False),
    ],
    ids=["actual-at-threshold", "approx-at-threshold", "approx-under"],
)
def test_compact_should_compact_accepts_token_counts(token_count, expected):
    actual = Compact(token_threshold=100).should_compact(pattern("ua"), token_count)
    assert actual == expected


def test_compact_defaults_are_the_same_in_code_and_from_a_file():
    actual = (Compact(), Compact.model_validate({}), Compact.model_validate_json("{}"))
    expected = (Compact(retention_window=6, eviction_window=0.2),) * 3
    assert actual == expected


def test_compact_redacts_secrets_unless_turned_off():
    actual = (Compact().redact_secrets, Compact.model_validate({"redact_secrets": False}))

    assert actual == (True, Compact(redact_secrets=False))


def test_compact_missing_eviction_window_keeps_the_default():
    actual = Compact.model_validate({"retention_window": 6}).eviction_window
    assert actual == 0.2


@pytest.mark.parametrize(
    "vector",
    vector_params("percentage_validation", where=lambda v: v["input"]["layer"].startswith("agent")),
)
def test_compact_eviction_window_is_validated_like_forge(vector):
    value = vector["input"]["value"]
    try:
        Compact(eviction_window=value, token_threshold_percentage=value)
    except ValidationError as exc:
        errors = exc.errors()
        actual = {"ok": False, "error": {str(e["ctx"]["error"]) for e in errors}, "n": len(errors)}
    else:
        actual = {"ok": True, "error": None, "n": 0}
    expected = vector["expected"]
    if not expected["ok"]:
        expected = {"ok": False, "error": {expected["error"]}, "n": 2}
    else:
        expected = {**expected, "n": 0}
    assert actual == expected


def test_compact_invalid_percentage_carries_an_invalid_config():
    with pytest.raises(ValidationError) as caught:
        Compact(eviction_window=1.5)
    actual = [(type(e["ctx"]["error"]), e["loc"]) for e in caught.value.errors()]
    assert actual == [(InvalidConfig, ("eviction_window",))]


@pytest.mark.parametrize(
    "config",
    [
        {"retention_window": -1},
        {"max_tokens": 0},
        {"token_threshold": -1},
        {"turn_threshold": -1},
        {"message_threshold": -1},
        {"unknown": 1},
    ],
    ids=["negative-retention", "zero-max-tokens", "negative-tokens", "turns", "messages", "extra"],
)
def test_compact_rejects_out_of_range_values(config):
    with pytest.raises(ValidationError):
        Compact(**config)


_FIELDS = (
    "retention_window",
    "eviction_window",
    "max_tokens",
    "token_threshold",
    "token_threshold_percentage",
    "turn_threshold",
    "message_threshold",
    "model",
    "on_turn_end",
)
_FORGE_TOML = {
    "eviction_window": 0.2,
    "max_tokens": 2000,
    "message_threshold": 200,
    "on_turn_end": False,
    "retention_window": 6,
    "token_threshold": 100000,
}
_UNSET = {name: None for name in _FIELDS[2:]}


def _as_compact(raw) -> Compact:
    if isinstance(raw, dict):
        return Compact(**raw)
    if "forge.toml" in raw:
        return Compact(**_FORGE_TOML)
    return Compact()


_MERGE_EXPECTED = [
    {
        **_UNSET,
        "retention_window": 10,
        "eviction_window": 0.3,
        "max_tokens": 5000,
        "token_threshold": 80000,
        "token_threshold_percentage": 0.65,
    },
    {
        **_UNSET,
        "retention_window": 5,
        "eviction_window": 0.2,
        "max_tokens": 6000,
        "token_threshold": 90000,
        "token_threshold_percentage": 0.25,
        "turn_threshold": 20,
    },
    {**_UNSET, **_FORGE_TOML},
]
"""Our values for the three forge merge vectors (forge's overwrite discards retention)."""


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        pytest.param(params.values[0], expected, id=name)
        for params, expected, name in zip(
            vector_params("compact_config_merge"),
            _MERGE_EXPECTED,
            [
                "agent-defaults-keep-every-workflow-value",
                "agent-sets-three-fields-rest-from-workflow",
                "builtin-agent-keeps-forge-toml-retention-6",
            ],
            strict=True,
        )
    ],
)
def test_compact_merged_with_keeps_explicit_fields_only(vector, expected):
    base = _as_compact(vector["input"]["workflow_compact"])
    override = _as_compact(vector["input"]["agent_compact"])
    merged = base.merged_with(override)
    actual = {name: getattr(merged, name) for name in _FIELDS}
    assert actual == expected


def test_compact_merged_with_an_explicit_default_overrides():
    actual = Compact(retention_window=10).merged_with(Compact(retention_window=6))
    assert actual == Compact(retention_window=6)


def test_compact_merged_with_keeps_fields_set_from_either_side():
    merged = Compact(max_tokens=10).merged_with(Compact(turn_threshold=3))
    actual = merged.model_fields_set
    assert actual == {"max_tokens", "turn_threshold"}


_field_values = {
    "retention_window": st.integers(0, 50),
    "eviction_window": st.floats(0.0, 1.0),
    "max_tokens": st.one_of(st.none(), st.integers(1, 10**6)),
    "token_threshold": st.one_of(st.none(), st.integers(0, 10**6)),
    "token_threshold_percentage": st.one_of(st.none(), st.floats(0.0, 1.0)),
    "turn_threshold": st.one_of(st.none(), st.integers(0, 100)),
    "message_threshold": st.one_of(st.none(), st.integers(0, 1000)),
    "model": st.one_of(st.none(), st.text(max_size=5)),
    "on_turn_end": st.one_of(st.none(), st.booleans()),
    "engine": st.sampled_from(["frame", "llm"]),
}
partial_configs = st.fixed_dictionaries({}, optional=_field_values)


@given(base=partial_configs, override=partial_configs)
def test_compact_merged_with_takes_exactly_the_overrides_explicit_fields(base, override):
    merged = Compact(**base).merged_with(Compact(**override))
    actual = merged.model_dump()
    expected = {**Compact().model_dump(), **base, **override}
    assert actual == expected
