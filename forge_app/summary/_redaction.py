"""Remove secrets from text before it leaves the process.

:func:`redact` is applied to everything an engine sends to a summarising
model (transcript, previous summary, focus topic) and to what comes back, and,
through the ``RedactSecrets`` transformer, to the texts and tool calls of every
frame summary (``Compact.redact_secrets``, on by default). It is pattern based: it
recognises the shapes secrets usually take (key prefixes, webhook URLs,
``Authorization`` headers, ``user:password@`` in URLs, connection-string keys,
assignments to variables named like credentials, password options of commands,
PEM private key blocks) and replaces the secret part with :data:`REDACTED`,
keeping enough around it to read the text. It is idempotent.

Every shape is one row of :data:`_RULES` (the command-line options that take a
password are rows of :data:`_PASSWORD_OPTIONS`); ``tests/app/test_redaction.py``
holds a table of positive and negative cases per rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

__all__ = ["REDACTED", "redact"]
# redact_for_model, secrets_in: for the llm engine only; URL_PASSWORD, is_secret_name: for
# the store's URLs (store/_url.redact_url), so that both hide the same secrets.

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

_SECRET_WORD = (
    r"(?:api[_-]?key|apikey|secret|token(?!s|iz)|passw(?:or)?d|passwd|pwd|credentials?|auth(?!or))"
)
_SECRET_NAME = r"[A-Za-z0-9_.-]*" + _SECRET_WORD + r"[A-Za-z0-9_.-]*"
_SECRET_END = r"(?:\\?[\"'])?\s*"
"""What may stand between a secret's name and its ``=`` or ``:``: a closing quote, spaces."""


_SECRET_NAME_WORD = re.compile(_SECRET_WORD, re.IGNORECASE)

URL_PASSWORD = re.compile(
    r"(?P<lead>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#]*:)(?!\[REDACTED\]@)[^\s/?#]+(?=@)"
)
"""The password in a URL's user info, ``scheme://user:PASSWORD@host``: from the ``:``
after the user to the authority's last ``@`` (a password may hold ``@``, not ``/?#``);
``lead`` is what stands before it. The ``url_password`` rule and the store's
``redact_url`` both hide it."""


def is_secret_name(name: str) -> bool:
    """Whether a value named ``name`` (a variable, a URL's query parameter) holds a secret:
    the name holds a secret word (password, token, secret, API key, credentials, auth)."""
    return _SECRET_NAME_WORD.search(name) is not None


_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")
"""The characters beyond ASCII that ``re.IGNORECASE`` matches with an ASCII letter (the
dotted capital and the dotless small i with i, the long s with s, the Kelvin sign with k;
a test checks every code point): in a text without them, an ASCII pattern ignoring case
matches where its lower-case form matches the lower-cased text."""


@dataclass(frozen=True, slots=True)
class _Rule:
    """One secret shape: a pattern and how to rewrite a match."""

    name: str
    pattern: re.Pattern[str]
    replace: Callable[[re.Match[str]], str]
    hints: tuple[str, ...]
    """Lower-case substrings one of which every match contains (a cheap pre-check)."""
    needs: tuple[str, ...] = ()
    """Other substrings one of which every match contains (none: no second pre-check)."""
    gate: re.Pattern[str] | None = None
    """For a case-insensitive ``pattern`` of ASCII characters: a case-sensitive pattern
    that finds, in the text lower-cased, every place where ``pattern`` matches the text
    (a third pre-check, skipped for a text holding one of :data:`_FOLDS_TO_ASCII`). It
    leaves out what makes ``pattern`` slow to search: the case folding, the name before
    the secret word."""

    def may_match(self, text: str, folded: str) -> bool:
        """False when the pre-checks show that ``pattern`` cannot match ``text``;
        ``folded`` is the text lower-cased before any rule rewrote it."""
        if not any(hint in folded for hint in self.hints):
            return False
        if self.needs and not any(need in text for need in self.needs):
            return False
        if self.gate is None or _FOLDS_TO_ASCII.search(text) is not None:
            return True
        return self.gate.search(text.lower()) is not None


_STRONG_NAME = re.compile(r"passw|pwd|secret|api[_-]?key|apikey|credential", re.IGNORECASE)
_HARMLESS_VALUES = frozenset({"", "none", "null", "true", "false", "0", "1"})


def _whole(match: re.Match[str]) -> str:
    return REDACTED


def _keep_group(group: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        return match.group(group) + REDACTED

    return replace


def _quote(value: str) -> str:
    """The quotes around ``value``: ``"``, ``'``, a JSON-escaped ``\\"``, or none (``""``)."""
    for quote in ('\\"', '"', "'"):
        if len(value) >= 2 * len(quote) and value.startswith(quote) and value.endswith(quote):
            return quote
    return ""


def _looks_secret(value: str, separator: str, name: str) -> bool:
    """Decide whether an assigned value is a secret worth hiding.

    ``=`` assignments and quoted values always are; an unquoted ``name: value``
    may be prose ("the token: we need it"), so unless the name is an
    unmistakable secret name (password, secret, API key) the value must look
    like a key (8+ characters with a digit).
    """
    quote = _quote(value)
    bare = value[len(quote) : len(value) - len(quote)]
    if bare.lower() in _HARMLESS_VALUES or bare.startswith(("$", "<", "***", REDACTED)):
        return False
    if bare.isdigit() and len(bare) < 6:
        return False
    if separator == ":" and not quote and not _STRONG_NAME.search(name):
        return len(bare) >= 8 and any(char.isdigit() for char in bare)
    return True


def _value(match: re.Match[str]) -> str:
    """Redact the ``value`` group after ``lead``, keeping its quotes, if it looks secret.

    Without a ``sep`` group (an option that always takes a secret) it is judged as an
    ``=`` assignment.
    """
    value = match.group("value")
    if not _looks_secret(value, match.groupdict().get("sep") or "=", match.group("lead")):
        return match.group(0)
    quote = _quote(value)
    return f"{match.group('lead')}{quote}{REDACTED}{quote}"


_QUOTED = r"\\\"[^\"\n]*?\\\"|\"[^\"\n]*\"|'[^'\n]*'"
"""A quoted value: in double quotes (also JSON-escaped, as in tool-call arguments) or single."""
_VALUE = rf"(?P<value>{_QUOTED}|[^\s'\";|&]+)"
"""An option's value: quoted, or a word up to a shell separator."""


@dataclass(frozen=True, slots=True)
class _PasswordOption:
    """A command whose option takes a password (``-p`` is a port or a flag to most others)."""

    name: str
    """The rule's name (in :data:`RULE_NAMES`)."""
    command: str
    """The command word(s), a regex."""
    hints: tuple[str, ...]
    """Lower-case words one of which the command contains."""
    option: str
    """The option and its separator, up to the value (a regex)."""
    between: str = r"[^\n;|&]*?"
    """What may stand between the command and the option: by default any arguments up to
    the end of the shell command."""

    def rule(self) -> _Rule:
        """The rule that redacts this option's value."""
        pattern = re.compile(
            rf"(?P<lead>(?<![\w.-])(?:{self.command})\b{self.between}\s{self.option})"
            rf"(?!\[REDACTED\]){_VALUE}"
        )
        return _Rule(self.name, pattern, _value, self.hints)


_PASSWORD_OPTIONS = (
    # "-pSECRET" only: "mysql -p SECRET" prompts for the password and SECRET is the database.
    _PasswordOption("mysql_password", r"mysql\w*|mariadb[\w-]*", ("mysql", "mariadb"), r"-p(?=\S)"),
    # sshpass's own options only: in "sshpass -f file ssh -p 2222", -p is ssh's port.
    _PasswordOption(
        "sshpass_password", "sshpass", ("sshpass",), r"-p\s*", r"(?:\s+-[fdP]\s*\S+|\s+-[ev])*?"
    ),
    _PasswordOption(
        "registry_login_password",
        r"(?:docker|podman|nerdctl|buildah|skopeo|oras|helm\s+registry)\s+login",
        ("login",),
        r"-p\s*",
    ),
    _PasswordOption("redis_password", "redis-cli", ("redis-cli",), r"(?:-a|--pass)\s+"),
    _PasswordOption("curl_user_password", "curl", ("curl",), r"(?:-u|--user)\s*['\"]?[^\s:'\"]+:"),
    _PasswordOption("openssl_password", "openssl", ("openssl",), r"-pass(?:in|out)?\s+pass:"),
)
"""Password options of commands, one rule each (``password_flag`` covers ``--password``)."""


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
    _Rule("url_password", URL_PASSWORD, _keep_group("lead"), ("://",)),
    _Rule("openai_key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), _whole, ("sk-",)),
    _Rule(
        "stripe_key",
        re.compile(r"\b(?:[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z+/=]{20,})"),
        _whole,
        ("k_live_", "k_test_", "whsec_"),
    ),
    _Rule(
        "registry_token",
        re.compile(
            r"\b(?:npm_[A-Za-z0-9]{30,}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{16,}"
            r"|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,})(?![A-Za-z0-9])"
        ),
        _whole,
        ("npm_", "pypi-", "glpat-", "hf_"),
    ),
    _Rule(
        "webhook_url",
        re.compile(
            r"(?P<lead>https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"|(?:discord(?:app)?\.com)/api/webhooks/))[A-Za-z0-9_/.-]+"
        ),
        _keep_group("lead"),
        ("hooks.slack.com", "/api/webhooks/"),
    ),
    _Rule(
        "connection_string_key",
        re.compile(
            r"(?P<lead>\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=|[?&]sig=)"
            r"(?!\[REDACTED\])[^\s;&\"']+",
            re.IGNORECASE,
        ),
        _keep_group("lead"),
        ("accountkey", "sharedaccess", "sig="),
    ),
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
            r"(?P<lead>(?<![A-Za-z0-9_.-])(?:\\?[\"'])?"
            + _SECRET_NAME
            + _SECRET_END
            + r"(?P<sep>=|:)\s*)"
            rf"(?!\[REDACTED\])(?P<value>{_QUOTED}|[^\s,;}}\]]+)",
            re.IGNORECASE,
        ),
        _value,
        ("api", "secret", "token", "passw", "pwd", "credential", "auth"),
        ("=", ":"),  # its separator: most prose naming a token is not searched
        re.compile(_SECRET_WORD + r"[a-z0-9_.-]*" + _SECRET_END + "[=:]"),
    ),
    _Rule(
        "password_flag",
        re.compile(
            r"(?P<lead>(?<![\w-])--(?!no-)(?:(?:[a-z0-9]+-)*(?:password|passwd|token|api-?key)"
            r"|(?:[a-z0-9]+-)+secret)\s+)(?!\[REDACTED\]|-)" + _VALUE,
            re.IGNORECASE,
        ),
        _value,
        ("--",),
    ),
    *(option.rule() for option in _PASSWORD_OPTIONS),
)

RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in _RULES)
"""The secret shapes :func:`redact` recognises, in the order they are applied."""


def _any_of(words: set[str]) -> re.Pattern[str]:
    """A pattern matching any of ``words``, grouped by first character (``a(?:pi|uth)|…``:
    twice as fast to search as a flat alternation of 45 words)."""
    tails: dict[str, list[str]] = {}
    for word in sorted(words):
        tails.setdefault(word[0], []).append(re.escape(word[1:]))
    return re.compile("|".join(f"{re.escape(c)}(?:{'|'.join(t)})" for c, t in tails.items()))


_ANY_HINT = _any_of({hint for rule in _RULES for hint in rule.hints})
"""Any rule's hint: a text without one is returned as it is, after a single search (most
texts of a summary hold none; plans/008-performance.md has the measured gain)."""


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED]``.

    Assignments whose value is empty, a boolean or a variable reference
    (``$TOKEN``, ``${TOKEN}``, ``<token>``) are left alone: they hold no secret.
    """
    folded = text.lower()
    if _ANY_HINT.search(folded) is None:
        return text
    for rule in hinted_rules(folded):
        if rule.may_match(text, folded):
            text = rule.pattern.sub(rule.replace, text)
    return text


_PREFIX_ANCHORS = re.compile(
    _any_of(
        {hint for rule in _RULES for hint in rule.hints} - {"token", "auth"} | {"-----"}
    ).pattern
    + "|token(?!s|iz)|auth(?!or)"
)
"""What stands in every match of a rule at or before where the match first changes the text
(at most one character after it): each rule's hints (a lead's words, kept by the rewrite, or
a key's first characters; Stripe's ``k_live_`` one character in), but an assignment's
``token`` and ``auth`` only as its secret word reads them (not ``tokenizer``, ``author``),
and the ``-----`` a private key's block starts with."""
_ANCHOR_REACH = max(len(hint) for rule in _RULES for hint in rule.hints)
"""The longest anchor."""


def keeps_prefix(text: str, length: int) -> bool:
    """True when :func:`redact` is certain to leave ``text[:length]`` as it is: the first
    ``length`` characters and the longest anchor's reach after them are ASCII (so the
    rules' case-insensitive words are the anchors' lower-case forms) and hold no anchor
    (:data:`_PREFIX_ANCHORS`). A rule rewrites a match only after its anchor (a lead's
    secret word, an option, a scheme's ``://``; a key's first characters), and what a
    rewrite puts in starts with ``[`` or a quote, which no anchor holds: no later rule finds
    an anchor there either. About a microsecond, where :func:`redact` of a chat's message
    takes about ten (plans/008-performance.md, round 9a)."""
    window = text[: length + _ANCHOR_REACH]
    return window.isascii() and _PREFIX_ANCHORS.search(window.lower()) is None


_HINTS: tuple[str, ...] = tuple(sorted({hint for rule in _RULES for hint in rule.hints}))
_HINTED: dict[tuple[str, ...], tuple[_Rule, ...]] = {}
"""The rules of :data:`_RULES` that each set of hints present selects (filled as met)."""
_HINTED_MAX = 512
"""How many sets of hints :data:`_HINTED` remembers."""


def hinted_rules(folded: str) -> tuple[_Rule, ...]:
    """The rules of :data:`_RULES`, in their order, one of whose hints ``folded`` holds:
    the rules whose first pre-check passes. One substring test per hint instead of one
    per rule and hint, and the other pre-checks run for these rules only (a text naming a
    token, as most of a long chat's do, has one rule to try instead of 22;
    plans/008-performance.md, round 6g)."""
    present = tuple([hint for hint in _HINTS if hint in folded])
    rules = _HINTED.get(present)
    if rules is None:
        found = set(present)
        rules = tuple(rule for rule in _RULES if not found.isdisjoint(rule.hints))
        if len(_HINTED) < _HINTED_MAX:
            _HINTED[present] = rules
    return rules


_BARE_RULES: tuple[_Rule, ...] = (
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?<![A-Za-z0-9/+=_-])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
            r"(?=[A-Za-z0-9/+]{0,39}[0-9])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])"
        ),
        _whole,
        (),
    ),
    _Rule(
        "key_body",
        re.compile(r"\b(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{2}[A-Za-z0-9+/]{8})[A-Za-z0-9+/=]*"),
        _whole,
        (),
    ),
)
"""Secrets with no label and no prefix of their own, by shape alone: a 40-character key of
letters of both cases and digits (an AWS secret access key), the base64 body of a private
key (OpenSSH's ``openssh-key-v1`` or DER's ``MII``). Too costly and too broad for every
summary text; applied to what a model is sent and what it writes (:func:`redact_for_model`)."""

_MIN_SECRET = 8
"""A value shorter than this is not looked for elsewhere (it would match ordinary words)."""


def redact_for_model(text: str, known: frozenset[str] = frozenset()) -> str:
    """:func:`redact`, then the bare shapes of :data:`_BARE_RULES`, then every value of
    ``known`` (the secrets :func:`secrets_in` found in what the model was given), wherever
    it stands: a model may write back a secret without the label that gave it away."""
    text = redact(text)
    for rule in _BARE_RULES:
        text = rule.pattern.sub(rule.replace, text)
    for value in sorted(known, key=len, reverse=True):
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def secrets_in(text: str) -> frozenset[str]:
    """The secret values :func:`redact_for_model` removes from ``text``, as they stand there,
    with each line, ``.``- and ``/``-separated piece of 16 or more characters (a key's
    body, a token's signature, a webhook's key): what an answer must not hold either."""
    found: set[str] = set()
    folded = text.lower()
    for rule in (*_RULES, *_BARE_RULES):
        if rule.hints and not rule.may_match(text, folded):
            continue
        text = rule.pattern.sub(partial(_noting, rule.replace, found), text)
    pieces = {piece for value in found for piece in re.split(r"[./\s]|\\n", value)}
    return frozenset(
        value.strip("\"'")
        for value in found | {p for p in pieces if len(p) >= 16}
        if len(value.strip("\"'")) >= _MIN_SECRET and REDACTED not in value
    )


def _noting(replace: Callable[[re.Match[str]], str], found: set[str], match: re.Match[str]) -> str:
    """``replace(match)``, noting in ``found`` the part of the match it removes (one pass
    over the text finds and replaces)."""
    new = replace(match)
    if new != match.group(0):
        found.add(_replaced_part(match.group(0), new))
    return new


def _replaced_part(whole: str, new: str) -> str:
    """The part of ``whole`` its replacement ``new`` does not keep (prefix and suffix off)."""
    start = 0
    while start < min(len(whole), len(new)) and whole[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(whole), len(new)) - start and whole[-1 - end] == new[-1 - end]:
        end += 1
    return whole[start : len(whole) - end]
