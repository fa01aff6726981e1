"""The one-pass reader of transcripts: it reads what the strict decoder reads, or gives up.

``loads_fast`` may return None for any text (the strict decoder then reads it, or says
what is wrong); what it returns must be exactly what ``loads`` returns, types included.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.files._strict_json import MAX_DEPTH, loads, loads_fast

_SESSIONS = sorted(Path("/work/shared/data/sessions").glob("*.json"))

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**17), max_value=10**17)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
)


@given(_JSON)
def test_loads_fast_reads_what_loads_reads(value):
    text = json.dumps(value, ensure_ascii=False)

    actual = (repr(loads_fast(text)), repr(loads_fast(text.encode())))

    assert actual == (repr(loads(text)), repr(loads(text)))


@pytest.mark.parametrize(
    "text",
    [
        "[NaN]",
        "[1e309]",
        "[-1e309]",
        '["\\ud800"]',
        '["\ud800"]',
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"a": ' * MAX_DEPTH + "[]" + "}" * MAX_DEPTH,
        '{"a": [{"b": "x", "c": 1e309}]}',
        '[{"a": "x"}, {"b": [2, ' + "9" * 19 + "]}]",
        "[" + "9" * 4_301 + "]",
        "[1] x",
        '{"a": 1}\n{"b": 2}',
        "\ufeff[1]",
        "",
        "[1,]",
    ],
    ids=[
        "nan",
        "overflow",
        "negative-overflow",
        "lone-surrogate-escape",
        "lone-surrogate-char",
        "too-deep",
        "too-deep-in-objects",
        "overflow-in-an-object",
        "big-integer-in-an-object",
        "integer-over-digit-limit",
        "extra-data",
        "jsonl-in-a-json-file",
        "bom",
        "empty",
        "trailing-comma",
    ],
)
def test_loads_fast_leaves_to_loads_what_loads_refuses_or_reads_otherwise(text):
    assert loads_fast(text) is None


def test_loads_fast_reads_the_deepest_nesting_loads_reads():
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH

    assert loads_fast(text) == loads(text)


def test_loads_fast_leaves_big_integers_to_loads():
    actual = (loads_fast("[" + "9" * 19 + "]"), loads_fast("[" + "9" * 18 + "]"))

    assert actual == (None, [10**18 - 1])


@pytest.mark.skipif(not _SESSIONS, reason="shared sessions not present")
@pytest.mark.parametrize("path", _SESSIONS, ids=[p.stem for p in _SESSIONS])
def test_loads_fast_reads_every_shared_session_as_loads_does(path):
    data = path.read_bytes()

    assert repr(loads_fast(data)) == repr(loads(data.decode()))
