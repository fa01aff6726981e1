"""Store URLs: ``sqlite:///PATH`` (the default; a bare path means the same) or ``postgresql://…``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from forge_app.errors import InvalidStoreUrl
from forge_app.summary._redaction import URL_PASSWORD, is_secret_name

__all__: list[str] = []

Dialect = Literal["sqlite", "postgresql"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL."""

    dialect: Dialect
    """Which database."""
    target: str
    """The SQLite file path, or the PostgreSQL connection URL."""
    shown: str
    """The URL as errors and logs show it (password replaced by ``***``)."""


def _hidden_query(query: str) -> str:
    """Every non-empty value of a parameter named like a secret (``password``,
    ``sslpassword``, ``pwd``, ``token`` …: the summary redaction's ``is_secret_name``)
    replaced by ``***``; the other parameters as written."""
    fields: list[str] = []
    for field in query.split("&"):
        name, _, value = field.partition("=")
        secret = bool(value) and is_secret_name(unquote(name))
        fields.append(f"{name}=***" if secret else field)
    return "&".join(fields)


def _hidden_password(url: str) -> str:
    """``url`` with the password of its user info replaced by ``***`` (the summary
    redaction's ``URL_PASSWORD``: one rule for what a URL's password is)."""
    return URL_PASSWORD.sub(r"\g<lead>***", url)


def redact_url(url: str) -> str:
    """``url`` with its passwords replaced by ``***``: the one in its user info and the
    values of password-like query parameters (``?password=…``). A URL too malformed to
    split (an unclosed IPv6 bracket) keeps its start with the password hidden, and
    loses its query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _hidden_password(url.split("?", 1)[0])
    hidden = parts._replace(query=_hidden_query(parts.query))
    return _hidden_password(url if hidden == parts else urlunsplit(hidden))


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
