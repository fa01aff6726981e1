"""The one tokenisation rule of search, applied to the stored text and to the query.

A term is a run of letters and digits (``_``, ``.``, ``/``, ``:``, ``(`` … separate
terms), normalised (NFC, then per term NFKC and case folding) and cut to
:data:`MAX_TERM_CHARS`. A dotted name, a path or a URL is the phrase of its parts:
``django.db.models.lookups.Exact`` is ``django db models lookups exact`` and
``functional.py`` is ``functional py``, in the text and in the query alike.

The backends never tokenise anything themselves: a message's terms are stored in
parts of at most :data:`PART_TERMS` terms (consecutive parts overlap by
:data:`PART_OVERLAP` terms, so a phrase of up to :data:`MAX_QUERY_TERMS` terms
always lies whole in one part), as space-separated terms in an FTS5 table with the
``ascii`` tokenizer (which splits them on the spaces and nothing else) on SQLite and
as a ``tsvector`` literal with the positions (no parser, no stemming) on PostgreSQL.
A part holds fewer terms than PostgreSQL keeps positions per lexeme (256) and per
part (16,383), so a phrase matches on both databases exactly where it matches in the
list of terms.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from forge_app.errors import InvalidSearchQuery

__all__: list[str] = []

_TERM = re.compile(r"[^\W_]+")
_ASCII_TERM = re.compile(r"[a-z0-9]+")
""":data:`_TERM` in a lower-cased ASCII text (where NFC, NFKC and case folding change
nothing but the case)."""
MAX_TERM_CHARS = 64
"""A longer run of letters and digits (a hash, base64) is cut to its first 64 characters."""
MAX_QUERY_TERMS = 64
"""Most terms a search query may hold."""
MAX_QUERY_CHARS = 1_000
"""Most characters a search query may hold."""
PART_TERMS = 256
"""Most terms of one stored part of a message."""
PART_OVERLAP = MAX_QUERY_TERMS - 1
"""Terms consecutive parts share: any phrase of a query lies whole in one part."""


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a text and where its run of letters and digits is in the (NFC) text."""

    term: str
    start: int
    end: int


def _normal(run: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", run.casefold())
    return [piece[:MAX_TERM_CHARS] for piece in _TERM.findall(folded)]


def located_terms(text: str) -> Iterator[Term]:
    """The terms of ``text`` (already NFC) with their places, in order."""
    if text.isascii():
        for match in _ASCII_TERM.finditer(text.lower()):
            yield Term(match.group()[:MAX_TERM_CHARS], match.start(), match.end())
        return
    for match in _TERM.finditer(text):
        for term in _normal(match.group()):
            yield Term(term, match.start(), match.end())


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order (see the module's rule)."""
    if text.isascii():  # the same rule, run by the regex engine alone
        found: list[str] = _ASCII_TERM.findall(text.lower())
        if max(map(len, found), default=0) <= MAX_TERM_CHARS:
            return found
        return [term[:MAX_TERM_CHARS] for term in found]
    return [t.term for t in located_terms(unicodedata.normalize("NFC", text))]


def parts(text: str) -> list[list[str]]:
    """The terms of ``text`` in overlapping parts of at most :data:`PART_TERMS` (none for a
    text without terms)."""
    found = terms(text)
    step = PART_TERMS - PART_OVERLAP
    chunks = [
        found[at : at + PART_TERMS] for at in range(0, max(1, len(found) - PART_OVERLAP), step)
    ]
    return [chunk for chunk in chunks if chunk]


def fts_text(part: list[str]) -> str:
    """A part as the SQLite FTS5 table (``ascii`` tokenizer) stores it."""
    return " ".join(part)


def _lexeme(term: str) -> str:
    """A term quoted for a ``tsvector`` or ``tsquery`` literal (a term holds letters and
    digits only: no quote or backslash to escape)."""
    return "'" + term + "'"


_POSITIONS = [str(at) for at in range(PART_TERMS + 1)]


def tsvector_text(part: list[str]) -> str:
    """A part as a PostgreSQL ``tsvector`` literal: each term with its positions (from 1)."""
    positions: dict[str, list[str]] = {}
    for at, term in enumerate(part, start=1):
        if term in positions:
            positions[term].append(_POSITIONS[at])
        else:
            positions[term] = [_POSITIONS[at]]
    return " ".join(["'" + t + "':" + ",".join(p) for t, p in positions.items()])


def fts_phrase(phrase: tuple[str, ...]) -> str:
    """An FTS5 query matching ``phrase`` (terms hold no quote: letters and digits only)."""
    return '"' + " ".join(phrase) + '"'


def tsquery_phrase(phrase: tuple[str, ...]) -> str:
    """A PostgreSQL ``tsquery`` literal matching ``phrase`` (``a <-> b <-> c``)."""
    return " <-> ".join(_lexeme(term) for term in phrase)


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A query as search reads it: one phrase per word the user typed (``order.save()`` is
    the phrase ``order save``), and all its terms in order."""

    text: str
    phrases: tuple[tuple[str, ...], ...]
    """Each word's phrase, once."""
    whole: tuple[str, ...]
    """Every term of the query, in order: the exact phrase, ranked first."""


def parse_query(text: str) -> SearchQuery:
    """The phrases of ``text`` (none for a query without letters or digits).

    Raises:
        InvalidSearchQuery: more than :data:`MAX_QUERY_CHARS` characters or
            :data:`MAX_QUERY_TERMS` terms.
    """
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidSearchQuery(
            f"{len(text):,} characters (at most {MAX_QUERY_CHARS:,}); search for a shorter phrase"
        )
    whole = terms(text)
    if len(whole) > MAX_QUERY_TERMS:
        raise InvalidSearchQuery(
            f"{len(whole):,} words (at most {MAX_QUERY_TERMS}); search for a shorter phrase"
        )
    phrases: list[tuple[str, ...]] = []
    for word in unicodedata.normalize("NFC", text).split():
        phrase = tuple(terms(word))
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    return SearchQuery(text, tuple(phrases), tuple(whole))
