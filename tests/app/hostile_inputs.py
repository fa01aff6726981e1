"""Hostile inputs shared by the fuzz suites: malformed messages, documents and texts."""

from __future__ import annotations

import json

from hypothesis import strategies as st

VALID = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the parser."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "error: boom\n" * 300},
    {"role": "assistant", "content": "Fixed."},
    {"role": "user", "content": "Thanks."},
]  # fmt: skip
HOSTILE_TEXT = st.sampled_from(
    ["", " ", "a\nb", "\u2028", "\ud800", "x" * 20_000, "NaN", "'\"\\", "\x1b[31m"]
) | st.text(max_size=20)
LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | HOSTILE_TEXT
)
JSON_VALUES = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE_TEXT, inner, max_size=3),
    max_leaves=8,
)
PART = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url", "banana", "refusal"]) | HOSTILE_TEXT},
    optional={"text": LEAF, "image_url": JSON_VALUES},
)
CALL = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["c1", "c2", ""]) | HOSTILE_TEXT,
        "function": st.fixed_dictionaries(
            {
                "name": st.sampled_from(["shell", "read"]) | HOSTILE_TEXT,
                "arguments": st.sampled_from(["{}", "[" * 3_000 + "]" * 3_000, "{bad"]),
            }
        ),
    },
    optional={"type": st.sampled_from(["function", "x"])},
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "developer"]) | HOSTILE_TEXT},
    optional={
        "content": LEAF | st.lists(PART, max_size=2),
        "tool_calls": st.lists(CALL, max_size=2) | LEAF,
        "tool_call_id": st.sampled_from(["c1", "c2"]) | LEAF,
        "usage": st.fixed_dictionaries({"total_tokens": LEAF, "cost": LEAF}),
    },
)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """The valid transcript's text with a few characters deleted, replaced or inserted."""
    text = json.dumps(VALID)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(st.text(max_size=3)) + text[at + cut :]
    return text.encode("utf-8", "surrogatepass")


DOCUMENTS = st.one_of(
    st.lists(MESSAGE, max_size=5).map(lambda m: json.dumps(m).encode()),
    st.lists(MESSAGE, max_size=3).map(lambda m: json.dumps({"messages": m, "x": 1}).encode()),
    st.lists(MESSAGE, max_size=3).map(lambda m: "\n".join(map(json.dumps, m)).encode()),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    mutated(),
    st.integers(1, 6_000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(4_000, 6_000).map(lambda digits: b"[" + b"7" * digits + b"]"),
    st.binary(max_size=40),
    st.just(json.dumps(VALID).encode()),
)
