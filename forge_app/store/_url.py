"""Store URLs: ``sqlite:///PATH`` (the default; a bare path means the same) or ``postgresql://…``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from forge_app.errors import InvalidStoreUrl

__all__: list[str] = []

Dialect = Literal["sqlite", "postgresql"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SECRET_PARAMETER = re.compile(r"passw(?:or)?d|pwd|secret|token", re.IGNORECASE)
"""The query parameters whose values :func:`redact_url` hides (``sslpassword`` too)."""


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL."""

    dialect: Dialect
    """Which database."""
    target: str
    """The SQLite file path, or the PostgreSQL connection URL."""
    shown: str
    """The URL as errors and logs show it (password replaced by ``***``)."""


def _hidden_netloc(netloc: str) -> str:
    """``user:password@host`` as ``user:***@host`` (unchanged without a password)."""
    user_info, at, host = netloc.rpartition("@")
    user, colon, _ = user_info.partition(":")
    return f"{user}:***@{host}" if at and colon else netloc


def _hidden_query(query: str) -> str:
    """Every non-empty value of a password-like parameter (``password``, ``sslpassword``,
    ``pwd`` …) replaced by ``***``; the other parameters as written."""
    fields: list[str] = []
    for field in query.split("&"):
        name, _, value = field.partition("=")
        secret = bool(value) and _SECRET_PARAMETER.search(unquote(name)) is not None
        fields.append(f"{name}=***" if secret else field)
    return "&".join(fields)


_USER_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@?#]*:)[^@]*@")


def redact_url(url: str) -> str:
    """``url`` with its passwords replaced by ``***``: the one in its user info and the
    values of password-like query parameters (``?password=…``). A URL too malformed to
    split (an unclosed IPv6 bracket) keeps its start with the password hidden, and
    loses its query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USER_PASSWORD.sub(r"\1***@", url.split("?", 1)[0])
    hidden = parts._replace(netloc=_hidden_netloc(parts.netloc), query=_hidden_query(parts.query))
    return url if hidden == parts else urlunsplit(hidden)


def parse_store_url(url: str) -> StoreUrl:
    """Read ``url``: ``sqlite:///relative.db``, ``sqlite:////abs.db``, a bare path, or a
    ``postgresql://`` / ``postgres://`` URL.

    Raises:
        InvalidStoreUrl: another scheme, a sqlite URL without a path, or a URL that
            cannot be split (an unclosed IPv6 bracket).
    """
    text = url.strip()
    if not text:
        raise InvalidStoreUrl(url, "empty store URL")
    if not _SCHEME.match(text):
        return StoreUrl("sqlite", str(Path(text)), f"sqlite:///{text}")
    scheme = text.split("://", 1)[0].lower()
    if scheme == "sqlite":
        path = text[len("sqlite:///") :] if text.startswith("sqlite:///") else ""
        if not path:
            raise InvalidStoreUrl(url, "a sqlite URL needs a file path: sqlite:///sessions.db")
        return StoreUrl("sqlite", path, text)
    if scheme in ("postgresql", "postgres"):
        try:
            urlsplit(text)
        except ValueError as exc:
            raise InvalidStoreUrl(redact_url(text), f"malformed URL: {exc}") from exc
        return StoreUrl("postgresql", text, redact_url(text))
    raise InvalidStoreUrl(
        redact_url(text),
        f"unsupported scheme {scheme!r}; use sqlite:///PATH or postgresql://HOST/DB",
    )
