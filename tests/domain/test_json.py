"""parse_json: exactly json.loads, values and errors alike (hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain.json import parse_json

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
PADDING = st.sampled_from(["", " ", "\n", "\t\r ", "x", "}", ",1"])


def _outcome(parse, text):
    try:
        return ("value", parse(text))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos)


@given(VALUES, PADDING, PADDING, st.booleans())
def test_parse_json_is_json_loads(value, before, after, indent):
    text = before + json.dumps(value, indent=2 if indent else None) + after
    assert _outcome(parse_json, text) == _outcome(json.loads, text)


@given(st.text(alphabet='{}[]":,0123456789.eE-+ \ntrufalsn\\', max_size=30))
def test_parse_json_fails_where_json_loads_fails(text):
    assert _outcome(parse_json, text) == _outcome(json.loads, text)


@pytest.mark.parametrize("text", ["", " ", '{"a": 1', '{"a": 1} x', "[1,]", "NaN", '"\\x"', "01"])
def test_parse_json_invalid_documents(text):
    assert _outcome(parse_json, text) == _outcome(json.loads, text)
