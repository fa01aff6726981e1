"""RedactSecrets: hide the secrets a summary would otherwise carry into the next request."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar, cast

from pydantic import BaseModel

from forge_app.summary._redaction import keeps_prefix, redact
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem

__all__ = [
    "RedactSecrets",
    "redaction_memo",
]  # redacted_text: for SummaryTransformer; prefix_kept: for the compactor's ask bound

M = TypeVar("M", bound=BaseModel)


_SCOPE: ContextVar[_Redactor | None] = ContextVar("redaction_memo", default=None)
"""What the current compaction has redacted so far (None outside one)."""


@contextmanager
def redaction_memo() -> Iterator[None]:
    """Within this block, every :class:`RedactSecrets` redacts each distinct string once.

    One compaction may summarise nearly the same span several times (a budget is fitted
    by trying several spans, then the fallback tier summarises the summary tier's span
    again): ``Compactor.compact`` and ``TieredEngine.compress`` run inside one
    (plans/008-performance.md, round 3). A nested block shares the outer one; what was
    remembered (secrets included) is forgotten when the outermost block ends.
    """
    if _SCOPE.get() is not None:
        yield
        return
    token = _SCOPE.set(_Redactor())
    try:
        yield
    finally:
        _SCOPE.reset(token)


def redacted_text(text: str) -> str:
    """``text`` as :class:`RedactSecrets` leaves it (through the current memo, if any)."""
    redactor = _SCOPE.get()
    return redact(text) if redactor is None else redactor.text(text)


def prefix_kept(length: int) -> Callable[[str], bool]:
    """:func:`keeps_prefix` of a text and ``length`` (through the current memo, if any: a
    fit's spans share their asks, which are not redacted when the ask bound drops them)."""
    redactor = _SCOPE.get()
    if redactor is None:
        return lambda text: keeps_prefix(text, length)
    known = redactor.prefixes.setdefault(length, {})

    def kept(text: str) -> bool:
        found = known.get(text)
        if found is None:
            found = known[text] = keeps_prefix(text, length)
        return found

    return kept


@dataclass(frozen=True)
class RedactSecrets:
    """Replace every recognised secret (:func:`redact`) with ``[REDACTED]``.

    Applies to the texts and to every string a tool call shows: commands, paths,
    patterns, URLs, queries, argument excerpts, todo items, the evidence of a
    failure (an output excerpt can print a token). Omission notes, roles,
    ids and counts are kept; a summary without secrets is returned unchanged.
    Each distinct string is redacted once per summary, or once per
    :func:`redaction_memo` block.
    """

    spared: Collection[int] = frozenset()
    """The ids (``id()``) of text items left as they are: texts the caller drops before
    anything reads them (``prepared_summary``: the narration its budget drops anyway)."""

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary with its secrets redacted."""
        redactor = _SCOPE.get()
        if redactor is None:
            redactor = _Redactor()
        spared = self.spared
        blocks = tuple(redactor.block(block, spared) for block in summary.blocks)
        if all(new is old for new, old in zip(blocks, summary.blocks, strict=True)):
            return summary
        return summary.model_copy(update={"blocks": blocks})


@dataclass
class _Redactor:
    """:func:`redact` over one summary or one compaction, each distinct string redacted once.

    A summary repeats its strings (the same path or command on many lines): in a
    5,000-message compaction, 1,572 distinct strings of 6,882 (plans/008-performance.md).
    """

    redacted: dict[str, str] = field(default_factory=dict)
    """What each string seen so far redacts to."""
    models: dict[int, tuple[BaseModel, BaseModel]] = field(default_factory=dict)
    """Each model seen so far (by identity, kept alive here) and what it redacts to."""
    prefixes: dict[int, dict[str, bool]] = field(default_factory=dict)
    """Per length, whether each string seen so far keeps that prefix (:func:`prefix_kept`)."""

    def block(self, block: SummaryBlock, spared: Collection[int] = ()) -> SummaryBlock:
        """``block`` with its items redacted (those in ``spared`` left as they are); the
        block itself when none changed (most: nothing is built for them)."""
        contents = block.contents
        for index, item in enumerate(contents):
            if id(item) in spared:
                continue
            new = self.item(item)
            if new is not item:  # the first change: the rest is redacted into a new tuple
                rest = (
                    old if id(old) in spared else self.item(old) for old in contents[index + 1 :]
                )
                changed = (*contents[:index], new, *rest)
                return block.model_copy(update={"contents": changed})
        return block

    def item(self, item: SummaryItem) -> SummaryItem:
        if isinstance(item, TextItem):
            if item.is_omission:
                return item
            text = self.text(item.text)
            return item if text is item.text else item.model_copy(update={"text": text})
        tool = self.model(item.tool)
        evidence = item.evidence if item.evidence is None else self.text(item.evidence)
        if tool is item.tool and evidence is item.evidence:
            return item
        return item.model_copy(update={"tool": tool, "evidence": evidence})

    def text(self, text: str) -> str:
        """``text`` redacted; ``text`` itself when it holds no secret."""
        new = self.redacted.get(text)
        if new is None:
            new = self.redacted[text] = redact(text)
        return text if new == text else new

    def model(self, model: M) -> M:
        """``model`` with its strings redacted, in nested models and tuples too."""
        seen = self.models.get(id(model))
        if seen is not None and seen[0] is model:  # a tool shared by identical calls
            return cast(M, seen[1])
        updates = {}
        for name in type(model).model_fields:
            value = getattr(model, name)
            new = self.value(value)
            if new is not value:
                updates[name] = new
        redacted = model.model_copy(update=updates) if updates else model
        self.models[id(model)] = (model, redacted)
        return redacted

    def value(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, BaseModel):
            return self.model(value)
        if isinstance(value, tuple):
            items = tuple(self.value(item) for item in value)
            return value if all(n is o for n, o in zip(items, value, strict=True)) else items
        return value
