"""Decoding transcript JSON strictly: only documents the tool can write back as they were read.

``json.loads`` accepts more than it can give back. It reads ``NaN`` and ``Infinity``
(not JSON), turns ``1e309`` into ``inf``, keeps a lone surrogate escape (``"\\ud800"``)
as half a character UTF-8 cannot encode, raises ``ValueError`` without a position for an
integer over Python's digit limit, and ``RecursionError`` for deep nesting. :func:`loads`
refuses all of these with a :class:`json.JSONDecodeError` at the offending token, so the
caller reports each bad value like any other syntax error (line and column).

The common case costs little: the float hooks only flag, and one walk over the decoded
containers checks the depth; strings are searched too only when the text holds a surrogate
escape that may be lone, or a raw surrogate. Finding the position is left to
:func:`_locate`, which runs only once something is known to be wrong. On a 43 MB
transcript, reading takes about 0.35 s instead of ``json.loads``'s 0.2 s.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from typing import cast

from pydantic_core import from_json

from forge_domain import JsonValue

__all__: list[str] = []  # loads, its fast forms, MAX_DEPTH: for the transcript reader only

MAX_DEPTH = 200
"""How deeply containers may nest in a transcript (the document itself is level 1).

The same limit pydantic-core puts on tool-call arguments; a transcript needs about six
levels. Well below Python's recursion limit, so writing back never recurses too deep.
"""

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LONE_LEAD_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")
_LONE_TRAIL_ESCAPE = re.compile(
    r"\\u[dD][c-fC-F](?<!(?<!\\)\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F])[0-9a-fA-F]{2}"
)
"""Surrogate escapes that may be outside a pair: never misses one, may flag one that is
not (after an escaped backslash it is plain text), so the walk over strings confirms."""
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]|NaN|-?Infinity|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?', re.DOTALL
)
"""What :func:`_locate` looks at: strings (skipped whole), brackets, constants and numbers."""


class _Flags:
    """Whether ``json.loads`` met a number JSON cannot carry (its hooks record it)."""

    def __init__(self) -> None:
        self.bad_number = False

    def constant(self, name: str) -> float:
        self.bad_number = True
        return math.nan

    def floating(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.bad_number = True
        return value


def loads(text: str) -> JsonValue:
    """``json.loads(text)``, refusing what could not be written back unchanged.

    Raises:
        json.JSONDecodeError: the text is not JSON, or holds ``NaN``/``Infinity``, a
            number out of range, a lone surrogate, or nesting deeper than
            :data:`MAX_DEPTH`; the position is that of the offending token.
    """
    flags = _Flags()
    try:
        document = json.loads(text, parse_constant=flags.constant, parse_float=flags.floating)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError):  # an integer over the digit limit; deep nesting
        raise _locate(text) from None
    check_strings = bool(
        _LONE_LEAD_ESCAPE.search(text)
        or _LONE_TRAIL_ESCAPE.search(text)
        or (not text.isascii() and _SURROGATE.search(text))
    )
    if flags.bad_number or not _is_writable(document, check_strings):
        raise _locate(text)
    return cast(JsonValue, document)


def loads_fast(data: str | bytes) -> JsonValue | None:
    """What :func:`loads` returns for ``data`` (text, or UTF-8 bytes), in one pass; None
    when this cannot tell, and :func:`loads` must read the text (and say what is wrong).

    ``pydantic_core.from_json`` reads the bytes without decoding them to a string first
    and refuses what :func:`loads` refuses but three things, which one walk over the
    containers finds: nesting deeper than :data:`MAX_DEPTH`, numbers out of range (it
    reads ``1e309`` as ``inf``) and, to keep the digit limit :func:`loads` applies (a
    setting of the interpreter), integers of 19 digits or more. About twice as fast as
    :func:`loads` and without the copy of the text (plans/008-performance.md).
    """
    document = loads_unwalked(data)
    return document if document is not None and is_plain(document) else None


def loads_unwalked(data: str | bytes) -> JsonValue | None:
    """:func:`loads_fast` without its walk: the caller must check the document with
    :func:`is_plain` or :func:`is_plain_but` before trusting it (None: what
    ``from_json`` refuses, which :func:`loads` must read)."""
    try:
        document = from_json(data, allow_inf_nan=False)
    except (ValueError, TypeError):  # TypeError: a str holding a lone surrogate
        return None
    return cast(JsonValue, document)


_BIG = 10**18


def is_plain(document: object) -> bool:
    """False when ``document`` nests deeper than :data:`MAX_DEPTH` or holds a number that
    is not finite, or an integer with 19 digits or more."""
    if type(document) is dict:
        return _levels_plain([document.values()], 1)
    if type(document) is list:
        return _levels_plain([document], 1)
    return True


def is_plain_but(document: object, entries: Sequence[object], known: Sequence[object]) -> bool:
    """:func:`is_plain` of ``document`` (a list, or an object holding the list
    ``entries``), not walking an entry whose ``known`` value is not None.

    For the transcript reader, which has read those entries already with a reader that
    takes only strings in containers a few levels deep (``known``: what it built, or
    None): the walk could find nothing in them (plans/008-performance.md).
    """
    rest = [entry for entry, done in zip(entries, known, strict=True) if done is None]
    if document is entries:
        return _levels_plain([rest], 1)
    if type(document) is not dict:
        return is_plain(document)
    others = [value for value in document.values() if value is not entries]
    return _levels_plain([others], 1) and _levels_plain([rest], 2)


def _levels_plain(level: list[Iterable[object]], depth: int) -> bool:
    """:func:`is_plain` of the values in ``level``, the children of containers at
    ``depth`` (the document is at depth 1)."""
    while level:  # one level at a time: no depth kept per container
        if depth > MAX_DEPTH:
            return False
        below: list[Iterable[object]] = []
        for children in level:
            for child in children:
                if type(child) is str:  # most values: nothing to check
                    continue
                if type(child) is dict:
                    below.append(child.values())
                elif type(child) is list:
                    below.append(child)
                elif type(child) is float:
                    if not math.isfinite(child):
                        return False
                elif type(child) is int and not -_BIG < child < _BIG:
                    return False
        level = below
        depth += 1
    return True


def _is_writable(document: object, check_strings: bool) -> bool:
    """False when ``document`` nests deeper than :data:`MAX_DEPTH` or, if ``check_strings``,
    a string or key holds a surrogate (after decoding, a lone one: pairs make one character).
    """
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            if check_strings and any(_SURROGATE.search(key) for key in value):
                return False
            children: Iterable[object] = value.values()
        elif isinstance(value, list):
            children = value
        else:
            return not (check_strings and isinstance(value, str) and _SURROGATE.search(value))
        if depth > MAX_DEPTH:
            return False
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
            elif check_strings and type(child) is str and _SURROGATE.search(child):
                return False
    return True


def _locate(text: str) -> json.JSONDecodeError:
    """The error for the first token :func:`loads` refuses (the text is known to hold one)."""
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        problem = _problem(token, depth)
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
        if problem is not None:
            return json.JSONDecodeError(problem, text, match.start())
    raise AssertionError("loads calls _locate only on a text it refuses")  # pragma: no cover


def _problem(token: str, depth: int) -> str | None:
    """What is wrong with ``token`` at ``depth`` (containers open around it), if anything."""
    first = token[0]
    if first == '"':
        if "\\u" not in token and token.isascii():
            return None
        lone = _SURROGATE.search(json.loads(token))
        return None if lone is None else f"lone surrogate {lone.group()!r} (half a UTF-16 pair)"
    if first in "[{":
        return f"nested deeper than {MAX_DEPTH} levels" if depth >= MAX_DEPTH else None
    if first in "]}":
        return None
    if token in ("NaN", "Infinity", "-Infinity"):
        return f"{token} is not a JSON number"
    shown = token if len(token) <= 24 else f"{token[:20]}..."
    if token.lstrip("-").isdigit():
        try:
            int(token)
        except ValueError:
            digits = len(token.lstrip("-"))
            limit = sys.get_int_max_str_digits()
            return f"integer of {digits:,} digits is out of range (at most {limit:,})"
        return None
    if not math.isfinite(float(token)):
        return f"number {shown} is out of range (a float holds at most 1.8e308)"
    return None
