"""The summary of a span's own messages, as every engine that writes a frame builds it.

:func:`build_summary` is :meth:`ContextSummary.from_messages` (forge's reading) plus the
one thing forge's reading cannot know: which error is the span's **last**. An output
that reports no exit code and no traceback has no outcome (``unknown``) and so no
evidence, although its lines may say plainly what went wrong (``Error: could not load
cache``, ``bash: ./ponyc: No such file or directory``). When the last line of the
summary that shows an error is such a command's, its error lines become that line's
evidence, so the budget keeps them word for word (it keeps the last line with evidence
whole); earlier ones are left as they were, so they take no room from the failures the
outcome reading found.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_domain.messages import ContextMessage, ToolResult
from forge_domain.summary import ContextSummary, ToolCallItem
from forge_domain.tool_catalog import ToolCatalog
from forge_domain.tool_outcome import failure_evidence, shows_error_line

__all__ = ["build_summary"]


def with_last_error(summary: ContextSummary, messages: Sequence[ContextMessage]) -> ContextSummary:
    """``summary`` of ``messages`` with the evidence of its last error on the command
    line it belongs to, when only the output's error lines show it (see the module).

    Walks the command lines from the newest and stops at the first line that already
    shows an error (failed, or with evidence): that one is the last error. Only the
    outputs of commands (``Execute`` lines) are read.
    """
    outputs = {m.call_id: m for m in messages if isinstance(m, ToolResult) and m.call_id}
    for block_index in range(len(summary.blocks) - 1, -1, -1):
        block = summary.blocks[block_index]
        for item_index in range(len(block.contents) - 1, -1, -1):
            item = block.contents[item_index]
            if not isinstance(item, ToolCallItem):
                continue
            if not item.is_success or item.evidence is not None:
                return summary
            result = outputs.get(item.id) if item.id and item.tool.kind == "shell" else None
            if result is None or not shows_error_line(result.text):
                continue
            contents = list(block.contents)
            contents[item_index] = item.model_copy(
                update={"evidence": failure_evidence(result.text)}
            )
            blocks = list(summary.blocks)
            blocks[block_index] = block.model_copy(update={"contents": tuple(contents)})
            return summary.model_copy(update={"blocks": tuple(blocks)})
    return summary


def build_summary(messages: Sequence[ContextMessage], catalog: ToolCatalog) -> ContextSummary:
    """The summary of ``messages`` (a span's own, droppable ones left out by the caller)."""
    return with_last_error(ContextSummary.from_messages(messages, catalog), messages)
