"""RedactSecrets: hide the secrets a summary would otherwise carry into the next request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from forge_app.summary._redaction import redact
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem

__all__ = [
    "RedactSecrets",
]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class RedactSecrets:
    """Replace every recognised secret (:func:`redact`) with ``[REDACTED]``.

    Applies to the texts and to every string a tool call shows: commands, paths,
    patterns, URLs, queries, argument excerpts, todo items. Omission notes, roles,
    ids and counts are kept; a summary without secrets is returned unchanged.
    """

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary with its secrets redacted."""
        blocks = tuple(_block(block) for block in summary.blocks)
        if all(new is old for new, old in zip(blocks, summary.blocks, strict=True)):
            return summary
        return summary.model_copy(update={"blocks": blocks})


def _block(block: SummaryBlock) -> SummaryBlock:
    contents = tuple(_item(item) for item in block.contents)
    if all(new is old for new, old in zip(contents, block.contents, strict=True)):
        return block
    return block.model_copy(update={"contents": contents})


def _item(item: SummaryItem) -> SummaryItem:
    if isinstance(item, TextItem):
        if item.is_omission:
            return item
        text = redact(item.text)
        return item if text == item.text else item.model_copy(update={"text": text})
    tool = _redacted(item.tool)
    return item if tool is item.tool else item.model_copy(update={"tool": tool})


def _redacted(model: M) -> M:
    """``model`` with :func:`redact` applied to its strings, in nested models and tuples too."""
    updates = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        new = _value(value)
        if new is not value:
            updates[name] = new
    return model.model_copy(update=updates) if updates else model


def _value(value: object) -> object:
    if isinstance(value, str):
        redacted = redact(value)
        return value if redacted == value else redacted
    if isinstance(value, BaseModel):
        return _redacted(value)
    if isinstance(value, tuple):
        items = tuple(_value(item) for item in value)
        return value if all(n is o for n, o in zip(items, value, strict=True)) else items
    return value
