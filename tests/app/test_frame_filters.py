"""The frame's filters keep their reference behaviour on any text (their fast paths included)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from forge_app.summary._frame import code, fence, oneline

texts = st.text(alphabet=st.sampled_from(list("ab `\n\r\t\x0b\x0c\x1c\x85\u2028 "))) | st.text()


def _reference_oneline(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip()) or text.strip()


def _reference_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


@given(texts)
def test_oneline_matches_the_reference(text: str) -> None:
    actual = oneline(text)
    expected = _reference_oneline(text)
    assert actual == expected


@given(texts)
def test_fence_and_code_match_the_reference(text: str) -> None:
    flat = _reference_oneline(text)
    marks = "`" * (_reference_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    fence_marks = "`" * max(3, _reference_run(text) + 1)
    actual = (fence(text), code(text))
    expected = (f"{fence_marks}\n{text}\n{fence_marks}", f"{marks}{pad}{flat}{pad}{marks}")
    assert actual == expected
