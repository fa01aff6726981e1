"""What a fit may cut of a summary, in the order it cuts (:func:`fit_candidates`), and how it
cuts the user's asks (:func:`asks_limited`).

One job, two users: :func:`~forge_app.summary._fit_summary.fit_summary` plans its cuts from
these, and :func:`~forge_app.summary._ask_bound.bound_asks` applies all of them ahead of the
fit when the fit is certain to reach its last step (dropping the oldest asks), which the
fit takes only from its hardest cut: every candidate applied (:func:`cuts_applied`), the
asks cut to ``MIN_TEXT_LIMIT`` (``tests/app/test_fit_cuts.py`` pins that).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from pydantic import BaseModel

from forge_app.summary._budget import SHORT_COMMAND, narration_texts, truncate_text
from forge_app.summary._omission import Position, without_items
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.summary._summary import OmittedKind
from forge_domain.tools import (
    EARLIER_EVIDENCE,
    EVIDENCE_SEPARATOR,
    FILE_CHANGING_KINDS,
    ShellTool,
    evidence_runs,
)

__all__: list[str] = []  # internal: the fit, the ask bound and the bounded build

SHORT_EVIDENCE = 80
"""Characters kept of a failure's evidence when a summary is squeezed (its first part)."""

KEPT_KINDS = FILE_CHANGING_KINDS
"""Tool lines that changed a file: a budget never drops them."""

TEXT_CHARS = 10
"""About what the frame adds around a text (its fence and line breaks)."""
LINE_CHARS = 16
"""About what the frame adds around a tool line (label, code span, status)."""

Change = OmittedKind | SummaryItem
"""What a plan does to an item: drop it (counted as that kind in the note) or replace it."""


def _lines(summary: ContextSummary) -> Iterator[tuple[Position, ToolCallItem]]:
    """Every tool line, oldest first."""
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if isinstance(item, ToolCallItem):
                yield (block_index, item_index), item


def shows_error(item: ToolCallItem) -> bool:
    """True for a line whose (last) call failed, or that keeps the evidence of an error."""
    return not item.is_success or item.evidence is not None


def _last_errors(lines: dict[Position, ToolCallItem]) -> set[Position]:
    """The last failed line and the last line with evidence, of a summary's ``lines`` (in
    order): the budget keeps them whole."""
    newest = list(reversed(lines.items()))
    failed = next((position for position, item in newest if not item.is_success), None)
    shown = next((position for position, item in newest if item.evidence is not None), None)
    return {position for position in (failed, shown) if position is not None}


def user_texts(summary: ContextSummary) -> Iterator[tuple[Position, TextItem]]:
    """The user's texts (omission notes aside), oldest first."""
    for block_index, block in enumerate(summary.blocks):
        if block.role != Role.USER:
            continue
        for item_index, item in enumerate(block.contents):
            if isinstance(item, TextItem) and not item.omitted:  # (is_omission, read directly)
                yield (block_index, item_index), item


def _repeated_asks(
    asks: list[tuple[Position, TextItem]],
) -> Iterator[tuple[Position, TextItem]]:
    """Of ``asks`` (a summary's :func:`user_texts`), those said again later word for word,
    oldest first (the last saying is not)."""
    last = {item.text: index for index, (_, item) in enumerate(asks)}
    if len(last) == len(asks):
        return  # none said again (a long chat's tens of thousands of asks)
    for index, (position, item) in enumerate(asks):
        if last[item.text] != index:
            yield position, item


def chars(value: object) -> int:
    """The characters of the strings in a tool (the ``kind`` tag aside), about what it shows."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, tuple):
        return sum(chars(part) + TEXT_CHARS for part in value)
    if isinstance(value, BaseModel):
        return sum(chars(v) for name, v in value.__dict__.items() if name != "kind")
    return 0


def estimate(item: SummaryItem) -> int:
    """About how many characters ``item`` adds to a rendered frame."""
    if isinstance(item, TextItem):
        return len(item.text) + TEXT_CHARS
    evidence = len(item.evidence) + TEXT_CHARS if item.evidence is not None else 0
    return chars(item.tool) + LINE_CHARS + (LINE_CHARS if item.earlier else 0) + evidence


def short_command(item: ToolCallItem) -> ToolCallItem:
    """``item`` with its shell command cut to ``SHORT_COMMAND`` characters, runs of white
    space folded first and ``…`` marking the cut (the start names a command; a
    here-document's text is on disk); the item itself when the command is not longer."""
    tool = item.tool
    if not isinstance(tool, ShellTool) or len(tool.command) <= SHORT_COMMAND + LINE_CHARS:
        return item
    command = " ".join(tool.command.split())[:SHORT_COMMAND].rstrip() + " …"
    return item.model_copy(update={"tool": tool.model_copy(update={"command": command})})


def _error_line(run: str) -> str:
    """The first part of one failure's evidence (its error line), at most ``SHORT_EVIDENCE``
    characters."""
    first = run.split(EVIDENCE_SEPARATOR, 1)[0]
    return first if len(first) <= SHORT_EVIDENCE else first[: SHORT_EVIDENCE - 1] + "…"


def short_evidence(item: ToolCallItem) -> ToolCallItem:
    """``item`` with the evidence of each failure it keeps cut to its error line (at most
    ``SHORT_EVIDENCE`` characters); the item itself when that is not shorter."""
    if item.evidence is None:
        return item
    cut = EARLIER_EVIDENCE.join(_error_line(run) for run in evidence_runs(item.evidence))
    return item.model_copy(update={"evidence": cut}) if len(cut) < len(item.evidence) else item


def fit_candidates(
    summary: ContextSummary, asks: list[tuple[Position, TextItem]] | None = None
) -> list[tuple[Position, int, Change]]:
    """What may go, in the order it goes, with about what each saves: the oldest assistant
    texts; long commands shortened; tool lines that changed no file and showed no error;
    repeated asks; the evidence of old errors shortened to its error line; then the lines
    of old errors that changed no file. The last error keeps its line and its evidence
    (its command only shortened). ``asks``: the summary's :func:`user_texts`, when the
    caller has read them."""
    candidates: list[tuple[Position, int, Change]] = [
        (position, estimate(item), "narration") for position, item in narration_texts(summary)
    ]
    current = dict(_lines(summary))
    kept = _last_errors(current)
    for position, item in current.items():
        shorter = short_command(item)
        if shorter is not item:
            candidates.append((position, estimate(item) - estimate(shorter), shorter))
            current[position] = shorter
    errors = {position: item for position, item in current.items() if shows_error(item)}
    candidates += [
        (position, estimate(item), item.tool.kind)
        for position, item in current.items()
        if position not in errors and item.tool.kind not in KEPT_KINDS
    ]
    candidates += [
        (position, estimate(item), "repeated_ask")
        for position, item in _repeated_asks(list(user_texts(summary)) if asks is None else asks)
    ]
    old = {position: item for position, item in errors.items() if position not in kept}
    for position, item in old.items():
        shorter = short_evidence(item)
        if shorter is not item:
            candidates.append((position, estimate(item) - estimate(shorter), shorter))
            old[position] = shorter
    candidates += [
        (position, estimate(item), item.tool.kind)
        for position, item in old.items()
        if item.tool.kind not in KEPT_KINDS
    ]
    return candidates


def _cut_ask(item: SummaryItem, limit: int) -> SummaryItem:
    """A user text cut to ``limit`` characters (:func:`truncate_text`: only when shorter)."""
    if not isinstance(item, TextItem) or item.is_omission:
        return item
    cut = truncate_text(item.text, limit)
    return item if cut is item.text else item.model_copy(update={"text": cut})


def cuts_applied(
    summary: ContextSummary,
    changes: Iterable[tuple[Position, int, Change]],
    asks_dropped: Mapping[Position, OmittedKind] | None = None,
) -> ContextSummary:
    """``summary`` with ``changes`` (of :func:`fit_candidates`, a later one at a place
    winning) and ``asks_dropped`` applied in one :func:`without_items`: one note, where
    the first item dropped from an assistant block was."""
    drops: dict[Position, OmittedKind] = {}
    replaced: dict[Position, SummaryItem] = {}
    for position, _, change in changes:
        if isinstance(change, str):
            drops[position] = change
        else:
            replaced[position] = change
    if asks_dropped:
        drops.update(asks_dropped)
    return without_items(summary, drops, replaced)


def asks_limited(summary: ContextSummary, limit: int) -> ContextSummary:
    """``summary`` with the user's texts cut to ``limit`` characters where that shortens them."""
    blocks = tuple(
        _asks_cut(block, limit) if block.role == Role.USER else block for block in summary.blocks
    )
    return summary.model_copy(update={"blocks": blocks})


def _asks_cut(block: SummaryBlock, limit: int) -> SummaryBlock:
    contents = tuple(_cut_ask(item, limit) for item in block.contents)
    if all(new is old for new, old in zip(contents, block.contents, strict=True)):
        return block
    return block.model_copy(update={"contents": contents})
