"""Store URLs: ``sqlite:///PATH`` (the default; a bare path means the same) or ``postgresql://…``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from forge_app.errors import InvalidStoreUrl

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


def redact_url(url: str) -> str:
    """``url`` with the password of its user info replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def parse_store_url(url: str) -> StoreUrl:
    """Read ``url``: ``sqlite:///relative.db``, ``sqlite:////abs.db``, a bare path, or a
    ``postgresql://`` / ``postgres://`` URL.

    Raises:
        InvalidStoreUrl: another scheme, or a sqlite URL without a path.
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
        return StoreUrl("postgresql", text, redact_url(text))
    raise InvalidStoreUrl(
        redact_url(text),
        f"unsupported scheme {scheme!r}; use sqlite:///PATH or postgresql://HOST/DB",
    )
