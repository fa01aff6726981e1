"""Which paths a shell command writes, read from its words (for the eval's facts).

Part of the eval's own rules (see :mod:`._facts`): redirections (``>``, ``>>``, ``tee``),
``sed -i``, ``cp``/``mv``/``touch``/``rm`` operands, ``open(..., 'w')`` in inline Python
and the targets of a diff that ``patch`` or ``git apply`` runs. Quotes, here-documents
and line breaks are read as a shell reads them, so a ``>`` inside quotes is not a
redirection.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

__all__: list[str] = []  # internal: shell_targets and DIFF_TARGET, for ._facts

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([\w.-]+)\1")
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", ";&"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})
_PY_OPEN_W = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")
DIFF_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)


def _unquoted_newlines(command: str) -> str:
    """``command`` with the line breaks outside quotes made ``;`` (shlex reads them as spaces)."""
    out: list[str] = []
    quote: str | None = None
    escaped = False
    for char in command:
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        elif char == "\n" and quote is None:
            char = " ; "
        out.append(char)
    return "".join(out)


def _without_heredocs(command: str) -> str:
    """``command`` without the bodies of its here-documents (their text is data)."""
    kept: list[str] = []
    waiting: list[str] = []
    for line in command.splitlines():
        if waiting:
            if line.strip() == waiting[0]:
                waiting.pop(0)
            continue
        kept.append(line)
        waiting = [match.group(2) for match in _HEREDOC.finditer(line)]
    return "\n".join(kept)


def _tokens(command: str) -> list[str]:
    """Shell words and operators of ``command`` (here-documents removed); none when a quote
    is never closed (a shell runs none of such a line)."""
    lexer = shlex.shlex(
        _unquoted_newlines(_without_heredocs(command)), posix=True, punctuation_chars=True
    )
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return []


def _simple_commands(tokens: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """Per simple command: its words, and the files its output is redirected to."""
    words: list[str] = []
    targets: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in _OPERATORS:
            yield words, targets
            words, targets = [], []
        elif token in _WRITES or (token[:1] in ("<", ">") and set(token) <= set("<>&|")):
            if words and words[-1].isdigit():
                words.pop()  # the descriptor of ``2>``
            if token in _WRITES and index + 1 < len(tokens):
                targets.append(tokens[index + 1])
            index += 1
        else:
            words.append(token)
        index += 1
    yield words, targets


def shell_targets(command: str) -> Iterator[str]:
    """Paths a shell command writes (a diff's target only when ``patch`` or ``git apply``
    runs: a diff written to a file changes nothing)."""
    applies = False
    for words, targets in _simple_commands(_tokens(command)):
        yield from targets
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        applies = applies or program == "patch" or words[:2] == ["git", "apply"]
        options = [w for w in words[1:] if w.startswith("-")]
        rest = [w for w in words[1:] if not w.startswith("-")]
        in_place = any(o == "--in-place" or (o[:2] != "--" and "i" in o) for o in options)
        if program == "sed" and in_place and len(rest) >= 2:
            yield rest[-1]
        elif program == "tee" and rest:
            yield from rest
        elif program in {"cp", "mv"} and len(rest) >= 2:
            yield rest[-1]
            if program == "mv":
                yield from rest[:-1]
        elif program in {"touch", "rm"}:
            yield from rest
    for match in _PY_OPEN_W.finditer(command):
        yield match.group(1)
    if applies:
        yield from DIFF_TARGET.findall(command)
