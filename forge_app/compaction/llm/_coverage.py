"""Check a model-written summary against the deterministic frame of the same span.

A summarising model can leave things out. The frame of the span
(:class:`ContextSummary` after the :class:`SummaryTransformer`) knows for
certain which files were modified, which commands failed and which user asks
were left unanswered. :func:`check_coverage` looks for each of those facts in
the summary, and :func:`with_verified_facts` appends the missing ones in a
deterministic section, so nothing the agent needs is lost to a sloppy summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from forge_app.compaction.llm._prompt import VERIFIED_FACTS_HEADING
from forge_app.summary._redaction import redact
from forge_domain.messages import Role
from forge_domain.summary import ContextSummary, TextItem
from forge_domain.summary_tools import FILE_CHANGING_KINDS, FileTool, ShellTool

__all__ = ["Coverage", "Facts", "check_coverage"]

_WORD = re.compile(r"[^\W_]{4,}", re.UNICODE)
_ASK_CHARS = 500
_COMMAND_CHARS = 200
_ASK_WORDS = 30
_ASK_WORD_SHARE = 0.6
_FILLER = frozenset(
    [
        "also",
        "please",
        "could",
        "would",
        "should",
        "that",
        "this",
        "then",
        "than",
        "with",
        "from",
        "into",
        "have",
        "make",
        "sure",
        "just",
        "some",
        "what",
        "when",
        "where",
        "which",
        "there",
        "their",
        "them",
        "they",
        "your",
        "about",
        "again",
    ]
)


class Facts(BaseModel):
    """What any summary of a span must mention."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    modified_paths: tuple[str, ...] = ()
    """Files written, patched, deleted or reverted, in first-touched order."""
    failed_commands: tuple[str, ...] = ()
    """Shell commands whose result reported a failure."""
    pending_asks: tuple[str, ...] = ()
    """User requests the span ends without an assistant answer to."""

    def count(self) -> int:
        """How many facts there are."""
        return len(self.modified_paths) + len(self.failed_commands) + len(self.pending_asks)


class Coverage(BaseModel):
    """Which facts a summary mentions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: Facts
    """Every fact checked."""
    missing: Facts
    """The facts the summary does not mention."""

    @property
    def ratio(self) -> float:
        """Share of facts mentioned (1.0 when there was nothing to check)."""
        total = self.facts.count()
        return 1.0 if total == 0 else (total - self.missing.count()) / total


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value for value in values if value))


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _pending_asks(summary: ContextSummary) -> list[str]:
    pending: list[str] = []
    for block in summary.blocks:
        texts = [item.text for item in block.contents if isinstance(item, TextItem)]
        if block.role == Role.USER:
            pending = [text for text in texts if text.strip()]
        elif block.role == Role.ASSISTANT and any(text.strip() for text in texts):
            pending = []
    return pending


def facts_of(raw: ContextSummary, transformed: ContextSummary) -> Facts:
    """The facts of a span: paths and commands from the transformed frame, asks from the raw one.

    Asks come from the untransformed summary because the transformer keeps
    only the first item of each user block.
    """
    paths: list[str] = []
    commands: list[str] = []
    for item in transformed.tool_calls():
        tool = item.tool
        if isinstance(tool, FileTool) and tool.kind in FILE_CHANGING_KINDS:
            paths.append(tool.path)
        elif isinstance(tool, ShellTool) and not item.is_success:
            commands.append(_one_line(tool.command, _COMMAND_CHARS))
    asks = [_one_line(text, _ASK_CHARS) for text in _pending_asks(raw)]
    return Facts(
        modified_paths=_unique(paths),
        failed_commands=_unique(commands),
        pending_asks=_unique(asks),
    )


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _mentions_ask(summary: str, words: set[str], ask: str) -> bool:
    if _normal(ask) in summary:
        return True
    words_of_ask = (word.casefold() for word in _WORD.findall(ask))
    wanted = list(dict.fromkeys(w for w in words_of_ask if w not in _FILLER))[:_ASK_WORDS]
    if not wanted:
        return False
    found = sum(word in words for word in wanted)
    return found / len(wanted) >= _ASK_WORD_SHARE


def check_coverage(summary: str, facts: Facts) -> Coverage:
    """Look for every fact in ``summary`` (case- and whitespace-insensitive).

    A path or command must appear verbatim; a user ask must appear verbatim or
    have most of its words present.
    """
    text = _normal(summary)
    words = {word.casefold() for word in _WORD.findall(summary)}
    missing = Facts(
        modified_paths=tuple(p for p in facts.modified_paths if _normal(p) not in text),
        failed_commands=tuple(c for c in facts.failed_commands if _normal(c) not in text),
        pending_asks=tuple(a for a in facts.pending_asks if not _mentions_ask(text, words, a)),
    )
    return Coverage(facts=facts, missing=missing)


def with_verified_facts(summary: str, missing: Facts) -> str:
    """``summary`` with a deterministic section listing ``missing`` facts (redacted)."""
    if missing.count() == 0:
        return summary
    lines = [VERIFIED_FACTS_HEADING]
    lines += [f"- Modified file: `{redact(path)}`" for path in missing.modified_paths]
    lines += [f"- Failed command: `{redact(command)}`" for command in missing.failed_commands]
    lines += [f"- Pending user ask: {redact(ask)}" for ask in missing.pending_asks]
    return summary.rstrip() + "\n\n" + "\n".join(lines)
