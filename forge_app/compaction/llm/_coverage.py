"""Check a model-written summary against the deterministic frame of the same span.

A summarising model can leave things out. The frame of the span
(:class:`ContextSummary` after the :class:`SummaryTransformer`) knows for
certain which files were modified, which operations failed and with what error,
and which user asks were left unanswered; the protected head holds the task.
:func:`check_coverage` looks for each of those facts in what the next model will
read (the summary, and the head kept verbatim for the task), :class:`Coverage`
names what was checked and what was missing, and :func:`with_verified_facts`
appends the missing facts in a deterministic section, so nothing the agent needs
is lost to a sloppy summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from forge_app.compaction.llm._prompt import VERIFIED_FACTS_HEADING
from forge_app.summary._redaction import redact_for_model as redact
from forge_domain import Role
from forge_domain.summary import ContextSummary, TextItem
from forge_domain.tools import EVIDENCE_SEPARATOR, FILE_CHANGING_KINDS, FileTool, SummaryTool

__all__ = ["Coverage", "Facts", "FailedOperation", "check_coverage"]

_WORD = re.compile(r"[^\W_]{4,}", re.UNICODE)
_ASK_CHARS = 500
_COMMAND_CHARS = 200
_OPERATION_PREFIX = 60
"""Characters of a failed operation (its start) a summary must quote."""
_EVIDENCE_PREFIX = 60
"""Characters of a failure's error line (its start) a summary must quote, or most of its words."""
_TRUNCATED = re.compile(r"\s*… \[truncated \d+ chars\]$")
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


class FailedOperation(BaseModel):
    """An operation whose (last) call failed, and the output that shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    operation: str
    """What the call acted on, on one line: the command, the path, the URL …"""
    evidence: str | None = None
    """The error line of its output (the first part of the frame's evidence), if any."""

    def name(self) -> str:
        """The fact as reported: the operation, then its error line."""
        error = f" -> {self.evidence}" if self.evidence else ""
        return f"failed operation `{self.operation}`{error}"


class Facts(BaseModel):
    """What any summary of a span must mention."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str | None = None
    """The task (the user messages before the first assistant message), on one line."""
    modified_paths: tuple[str, ...] = ()
    """Files written, patched, deleted or reverted, in first-touched order."""
    failed_operations: tuple[FailedOperation, ...] = ()
    """Operations whose last call failed, each with its error line."""
    pending_asks: tuple[str, ...] = ()
    """User requests the span ends without an assistant answer to."""

    def count(self) -> int:
        """How many facts there are."""
        return (
            (self.task is not None)
            + len(self.modified_paths)
            + len(self.failed_operations)
            + len(self.pending_asks)
        )

    def names(self) -> tuple[str, ...]:
        """Every fact, named (the task by its first words)."""
        task = () if self.task is None else (f"task {_one_line(self.task, 60)!r}",)
        return (
            *task,
            *(f"modified path `{path}`" for path in self.modified_paths),
            *(failure.name() for failure in self.failed_operations),
            *(f"pending ask {_one_line(ask, 60)!r}" for ask in self.pending_asks),
        )

    def describe(self) -> str:
        """How many facts of each kind, e.g. ``task, 4 modified paths, 1 failed operation``."""
        counts = (
            (len(self.modified_paths), "modified path"),
            (len(self.failed_operations), "failed operation"),
            (len(self.pending_asks), "pending ask"),
        )
        parts = ["task"] if self.task is not None else []
        parts += [f"{n} {what}{'s' if n > 1 else ''}" for n, what in counts if n]
        return ", ".join(parts) or "nothing"


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

    def report(self) -> str:
        """What was checked and what was missing, for the log."""
        missing = "; ".join(self.missing.names()) or "none"
        return f"checked {self.facts.describe()}; missing: {missing}"


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


def _operation(tool: SummaryTool) -> str:
    """What a call acted on: the value of its kind's resource field, else the kind's label."""
    definition = tool.definition
    value = getattr(tool, definition.resource) if definition.resource else None
    return value if isinstance(value, str) and value.strip() else definition.label


def _error_line(evidence: str | None) -> str | None:
    if evidence is None or not evidence.strip():
        return None
    return _one_line(evidence.split(EVIDENCE_SEPARATOR, 1)[0], _COMMAND_CHARS)


def facts_of(raw: ContextSummary, transformed: ContextSummary, task: str | None = None) -> Facts:
    """The facts of a span: paths and failures from the transformed frame, asks from the raw one.

    Asks come from the untransformed summary because the transformer keeps
    only the first item of each user block. ``task`` is the head's task text.
    """
    paths: list[str] = []
    failures: list[FailedOperation] = []
    for item in transformed.tool_calls():
        tool = item.tool
        if isinstance(tool, FileTool) and tool.kind in FILE_CHANGING_KINDS:
            paths.append(tool.path)
        if not item.is_success:
            operation = _one_line(_TRUNCATED.sub("", _operation(tool)), _COMMAND_CHARS)
            evidence = _error_line(item.evidence)
            failures.append(FailedOperation(operation=operation, evidence=evidence))
    asks = [_one_line(text, _ASK_CHARS) for text in _pending_asks(raw)]
    return Facts(
        task=_one_line(task, _ASK_CHARS) if task and task.strip() else None,
        modified_paths=_unique(paths),
        failed_operations=tuple(dict.fromkeys(failures)),
        pending_asks=_unique(asks),
    )


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _mentions_words(words: set[str], text: str) -> bool:
    """Most (60%) of the non-filler words of ``text`` are among ``words``."""
    words_of_text = (word.casefold() for word in _WORD.findall(text))
    wanted = list(dict.fromkeys(w for w in words_of_text if w not in _FILLER))[:_ASK_WORDS]
    if not wanted:
        return False
    found = sum(word in words for word in wanted)
    return found / len(wanted) >= _ASK_WORD_SHARE


def _quoted(summary: str, text: str) -> bool:
    """``text`` (or, when it was cut to one line with an ellipsis, its start) is in ``summary``."""
    return _normal(text).removesuffix("…") in summary


def _mentions_ask(summary: str, words: set[str], ask: str) -> bool:
    return _quoted(summary, ask) or _mentions_words(words, ask)


def _mentions_failure(summary: str, words: set[str], failure: FailedOperation) -> bool:
    if _normal(failure.operation)[:_OPERATION_PREFIX] not in summary:
        return False
    if failure.evidence is None:
        return True
    error = _normal(failure.evidence)
    return error[:_EVIDENCE_PREFIX] in summary or _mentions_words(words, error)


def check_coverage(summary: str, facts: Facts, *, kept: str = "") -> Coverage:
    """Look for every fact in ``summary`` (case- and whitespace-insensitive).

    A path must appear verbatim; a failed operation by the start of its
    command (or path …) and its error line verbatim or by most of its words; a
    user ask verbatim or by most of its words. The task may instead be in
    ``kept``, the text the compaction keeps verbatim (the protected head).
    """
    text = _normal(summary)
    words = {word.casefold() for word in _WORD.findall(summary)}
    task = facts.task
    task_found = task is None or _quoted(_normal(kept), task) or _mentions_ask(text, words, task)
    missing = Facts(
        task=None if task_found else task,
        modified_paths=tuple(p for p in facts.modified_paths if _normal(p) not in text),
        failed_operations=tuple(
            f for f in facts.failed_operations if not _mentions_failure(text, words, f)
        ),
        pending_asks=tuple(a for a in facts.pending_asks if not _mentions_ask(text, words, a)),
    )
    return Coverage(facts=facts, missing=missing)


def with_verified_facts(summary: str, missing: Facts) -> str:
    """``summary`` with a deterministic section listing ``missing`` facts (redacted)."""
    if missing.count() == 0:
        return summary
    lines = [VERIFIED_FACTS_HEADING]
    if missing.task is not None:
        lines.append(f"- Task: {redact(missing.task)}")
    lines += [f"- Modified file: `{redact(path)}`" for path in missing.modified_paths]
    for failure in missing.failed_operations:
        error = f" -> `{redact(failure.evidence)}`" if failure.evidence else ""
        lines.append(f"- Failed: `{redact(failure.operation)}`{error}")
    lines += [f"- Pending user ask: {redact(ask)}" for ask in missing.pending_asks]
    return summary.rstrip() + "\n\n" + "\n".join(lines)
