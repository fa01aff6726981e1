"""The summary of a span's own messages, as every engine that writes a frame builds it.

:func:`build_summary` is :meth:`ContextSummary.from_messages` (forge's reading) plus the
one thing forge's reading cannot know: which error is the span's **last**. An output
that reports no exit code and no traceback has no outcome (``unknown``) and so no
evidence, although its lines may say plainly what went wrong (``Error: could not load
cache``, ``bash: ./ponyc: No such file or directory``). When the last line of the
summary that shows an error is such a command's, its error lines become that line's
evidence, so the budget keeps them word for word (it keeps the last line with evidence
whole); earlier ones are left as they were, so they take no room from the failures the
outcome reading found. Only the newest :data:`REACH` commands are read: an error that
many commands back is no longer the last thing that went wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_domain import ContextMessage, ToolResult
from forge_domain.summary import ContextSummary, ToolCallItem
from forge_domain.tools import ToolCatalog, failure_evidence
from forge_domain.tools._outcome import shows_error_line

__all__: list[str] = []  # internal: used by the compactor and the LLM engine

REACH = 64
"""How many of the newest command lines are read for the last error."""


def with_last_error(summary: ContextSummary, messages: Sequence[ContextMessage]) -> ContextSummary:
    """``summary`` of ``messages`` with the evidence of its last error on the command
    line it belongs to, when only the output's error lines show it (see the module).

    The candidates are the newest :data:`REACH` command lines after the last line that
    already shows an error (failed, or with evidence); their outputs are read newest first,
    and the first whose first or last line is an error (:func:`shows_error_line`) gets the
    evidence. The cost does not grow with the span.
    """
    candidates: dict[str, tuple[int, int]] = {}  # call id -> position of its line
    for block_index in range(len(summary.blocks) - 1, -1, -1):
        contents = summary.blocks[block_index].contents
        for item_index in range(len(contents) - 1, -1, -1):
            item = contents[item_index]
            if type(item) is not ToolCallItem:
                continue
            if not item.is_success or item.evidence is not None or len(candidates) >= REACH:
                break
            if item.id and item.tool.kind == "shell":
                candidates.setdefault(item.id, (block_index, item_index))
        else:
            continue
        break
    unread = len(candidates)
    for message in reversed(messages):
        if not unread:
            break
        if type(message) is not ToolResult or message.call_id not in candidates:
            continue
        if shows_error_line(message.text):
            return _with_evidence(summary, candidates[message.call_id], message.text)
        unread -= 1
    return summary


def _with_evidence(summary: ContextSummary, at: tuple[int, int], output: str) -> ContextSummary:
    """``summary`` with the line at ``at`` given the evidence of ``output``."""
    block_index, item_index = at
    block = summary.blocks[block_index]
    contents = list(block.contents)
    contents[item_index] = contents[item_index].model_copy(
        update={"evidence": failure_evidence(output)}
    )
    blocks = list(summary.blocks)
    blocks[block_index] = block.model_copy(update={"contents": tuple(contents)})
    return summary.model_copy(update={"blocks": tuple(blocks)})


def build_summary(messages: Sequence[ContextMessage], catalog: ToolCatalog) -> ContextSummary:
    """The summary of ``messages`` (a span's own, droppable ones left out by the caller)."""
    return with_last_error(ContextSummary.from_messages(messages, catalog), messages)
