"""The summary template's filters: ``fence``, ``code`` and ``oneline``.

One definition each, for the Jinja environment of :class:`~forge_app.summary._frame.SummaryFrame`
and for the bundled template's layout in Python (:mod:`forge_app.summary._frame_text`).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__: list[str] = []  # internal: the filters of SummaryFrame and of _frame_text

_BACKTICKS = re.compile(r"`+")


def _longest_backtick_run(text: str) -> int:
    if "`" not in text:  # most texts: no regex scan, no generator
        return 0
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def fence(text: str, minimum: int = 3) -> str:
    """``text`` as a fenced code block whose fence is longer than any backtick run inside."""
    marks = "`" * max(minimum, _longest_backtick_run(text) + 1)
    return f"{marks}\n{text}\n{marks}"


def oneline(text: str) -> str:
    """``text`` with its line breaks folded into single spaces."""
    if text.isprintable():  # no line break of any kind (every one is unprintable): one line
        return text.strip()
    parts = text.splitlines()
    if len(parts) <= 1:  # one line: folding it is stripping it
        return text.strip()
    return " ".join(part.strip() for part in parts if part.strip()) or text.strip()


@lru_cache(maxsize=4096)
def code(text: str) -> str:
    """``text`` on one line as an inline code span that backticks inside cannot close.

    Cached: a summary names the same paths and commands again and again.
    """
    flat = oneline(text)
    marks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{marks}{pad}{flat}{pad}{marks}"
