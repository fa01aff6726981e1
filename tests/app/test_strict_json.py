"""The strict decoder of transcripts: what it refuses, and that its quick checks miss nothing."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.files._strict_json import MAX_DEPTH, loads

_PIECES = st.sampled_from(
    [
        "\\\\",
        "\\ud83d",
        "\\ude00",
        "\\uD800",
        "\\uDC00",
        "\\udbff",
        "\\udfff",
        "\\u0041",
        "a",
        "u",
        "\\n",
    ]
)
_SURROGATE = re.compile("[\ud800-\udfff]")


@given(st.lists(_PIECES, max_size=8))
def test_loads_refuses_a_string_exactly_when_it_decodes_to_a_lone_surrogate(pieces):
    text = '["' + "".join(pieces) + '"]'
    decoded = json.loads(text)[0]

    try:
        loads(text)
    except json.JSONDecodeError:
        refused = True
    else:
        refused = False

    assert refused == bool(_SURROGATE.search(decoded))


@given(st.recursive(st.integers() | st.text(), lambda inner: st.lists(inner, max_size=3)))
def test_loads_reads_what_json_loads_reads(value):
    text = json.dumps(value)

    assert loads(text) == json.loads(text)


@pytest.mark.parametrize(
    ("depth", "refused"), [(MAX_DEPTH, False), (MAX_DEPTH + 1, True), (5_000, True)]
)
def test_loads_caps_nesting_at_max_depth(depth, refused):
    text = "[" * depth + "]" * depth

    try:
        loads(text)
    except json.JSONDecodeError as exc:
        actual: tuple[bool, str | None] = (True, exc.msg)
    else:
        actual = (False, None)

    assert actual == (refused, f"nested deeper than {MAX_DEPTH} levels" if refused else None)


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ('[1.5, -2, "ok \\u0041", {"a": []}, NaN]', 34),
        ('{"a": [1e308, 2e308]}', 14),
        ('[[], "\\ud83d\\ude00", "\\ud800"]', 21),
    ],
    ids=["nan-after-valid-values", "second-float-over-range", "lone-after-a-pair"],
)
def test_loads_points_at_the_first_refused_token(text, position):
    with pytest.raises(json.JSONDecodeError) as caught:
        loads(text)

    assert caught.value.pos == position
