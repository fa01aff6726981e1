"""Remove secrets from text before it leaves the process.

:func:`redact` is applied to everything an engine sends to a summarising
model (transcript, previous summary, focus topic) and to what comes back. It
is pattern based: it recognises the shapes secrets usually take (key
prefixes, ``Authorization`` headers, ``user:password@`` in URLs, assignments
to variables named like credentials, PEM private key blocks) and replaces the
secret part with :data:`REDACTED`, keeping enough around it to read the text.
It is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["REDACTED", "redact"]

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*"
    r"(?:api[_-]?key|apikey|secret|token(?!s|iz)|passw(?:or)?d|passwd|pwd|credentials?|auth(?!or))"
    r"[A-Za-z0-9_.-]*"
)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One secret shape: a pattern and how to rewrite a match."""

    name: str
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    hints: tuple[str, ...]
    """Lower-case substrings one of which every match contains (a cheap pre-check)."""


_STRONG_NAME = re.compile(r"passw|pwd|secret|api[_-]?key|apikey|credential", re.IGNORECASE)
_HARMLESS_VALUES = frozenset({"", "none", "null", "true", "false", "0", "1"})


def _whole(match: re.Match[str]) -> str:
    return REDACTED


def _keep_group(group: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        return match.group(group) + REDACTED

    return replace


def _is_quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] in "'\"" and value.endswith(value[0])


def _looks_secret(value: str, separator: str, name: str) -> bool:
    """Decide whether an assigned value is a secret worth hiding.

    ``=`` assignments and quoted values always are; an unquoted ``name: value``
    may be prose ("the token: we need it"), so unless the name is an
    unmistakable secret name (password, secret, API key) the value must look
    like a key (8+ characters with a digit).
    """
    bare = value[1:-1] if _is_quoted(value) else value
    if bare.lower() in _HARMLESS_VALUES or bare.startswith(("$", "<", "***", REDACTED)):
        return False
    if bare.isdigit() and len(bare) < 6:
        return False
    if separator == ":" and not _is_quoted(value) and not _STRONG_NAME.search(name):
        return len(bare) >= 8 and any(char.isdigit() for char in bare)
    return True


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if not _looks_secret(value, match.group("sep"), match.group("lead")):
        return match.group(0)
    if _is_quoted(value):
        return f"{match.group('lead')}{value[0]}{REDACTED}{value[0]}"
    return match.group("lead") + REDACTED


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r".*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        lambda match: "[REDACTED PRIVATE KEY]",
        ("private key",),
    ),
    _Rule(
        "authorization_header",
        re.compile(
            r"(?P<lead>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\[REDACTED\])(?:(?:bearer|basic|token|digest)\s+)?[^\s\"',}]+",
            re.IGNORECASE,
        ),
        _keep_group("lead"),
        ("authorization",),
    ),
    _Rule(
        "bearer_token",
        re.compile(r"(?P<lead>\bbearer\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE),
        _keep_group("lead"),
        ("bearer",),
    ),
    _Rule(
        "url_password",
        re.compile(r"(?P<lead>\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)(?!\[REDACTED\]@)[^\s/@]+(?=@)"),
        _keep_group("lead"),
        ("://",),
    ),
    _Rule("openai_key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), _whole, ("sk-",)),
    _Rule(
        "aws_access_key",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        _whole,
        ("akia", "asia", "agpa", "aida", "aroa"),
    ),
    _Rule(
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})"),
        _whole,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Rule("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), _whole, ("xox",)),
    _Rule("google_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), _whole, ("aiza",)),
    _Rule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        _whole,
        ("eyj",),
    ),
    _Rule(
        "assignment",
        re.compile(
            r"(?P<lead>(?<![A-Za-z0-9_.-])[\"']?" + _SECRET_NAME + r"[\"']?\s*(?P<sep>=|:)\s*)"
            r"(?!\[REDACTED\])(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;}\]]+)",
            re.IGNORECASE,
        ),
        _assignment,
        ("api", "secret", "token", "passw", "pwd", "credential", "auth"),
    ),
)

RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in _RULES)
"""The secret shapes :func:`redact` recognises, in the order they are applied."""


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED]``.

    Assignments whose value is empty, a boolean or a variable reference
    (``$TOKEN``, ``${TOKEN}``, ``<token>``) are left alone: they hold no secret.
    """
    folded = text.lower()
    for rule in _RULES:
        if any(hint in folded for hint in rule.hints):
            text = rule.pattern.sub(rule.replace, text)
    return text
