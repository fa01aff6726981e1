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

from forge_app.files._strict_json import MAX_DEPTH, is_plain, is_plain_but, loads, loads_fast

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


# -- the walk that skips the entries the plain reader read (strings only) --------------------

_STRINGS_ONLY = st.recursive(
    st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
"""Entries the plain reader could have read: strings in shallow containers."""


@given(
    st.lists(st.tuples(st.booleans(), _STRINGS_ONLY | _JSON), max_size=6),
    st.none() | st.dictionaries(st.text(max_size=3), _JSON, max_size=3),
)
def test_is_plain_but_finds_what_is_plain_finds_outside_the_skipped_entries(marked, envelope):
    entries = [entry for _, entry in marked]
    known = ["read" if skip and _only_strings(entry) else None for skip, entry in marked]
    document = entries if envelope is None else {**envelope, "messages": entries}

    assert is_plain_but(document, entries, known) == is_plain(document)


def _only_strings(value: object) -> bool:
    if isinstance(value, dict):
        return all(map(_only_strings, value.values()))
    if isinstance(value, list):
        return all(map(_only_strings, value))
    return isinstance(value, str)


@pytest.mark.parametrize("bad", [float("inf"), 10**19, -(10**19)], ids=["inf", "big", "-big"])
def test_is_plain_but_finds_a_bad_number_in_an_unread_entry_or_the_envelope(bad):
    entries: list[object] = [{"role": "user", "content": "x"}, {"role": "user", "n": [bad]}]
    known = ["read", None]

    actual = (
        is_plain_but(entries, entries, known),
        is_plain_but({"messages": entries[:1], "n": bad}, entries[:1], known[:1]),
        is_plain_but({"messages": entries[:1], "m": {"n": [bad]}}, entries[:1], known[:1]),
    )

    assert actual == (False, False, False)


@pytest.mark.parametrize("layout", ["list", "object"])
def test_is_plain_but_counts_the_depth_of_an_unread_entry_from_the_document(layout):
    def document(levels: int) -> tuple[object, list[object]]:
        nested: object = "x"
        for _ in range(levels):
            nested = [nested]
        entries: list[object] = [{"role": "user", "content": "x"}, nested]
        return (entries if layout == "list" else {"messages": entries}), entries

    inside = MAX_DEPTH - (1 if layout == "list" else 2)  # the document and its list
    deepest, entries = document(inside)
    too_deep, more = document(inside + 1)

    actual = (
        is_plain_but(deepest, entries, ["read", None]),
        is_plain_but(too_deep, more, ["read", None]),
    )

    assert actual == (is_plain(deepest), is_plain(too_deep)) == (True, False)
