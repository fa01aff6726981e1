"""The summary of a span's own messages, as every engine that writes a frame builds it.

:func:`build_summary` is :meth:`ContextSummary.from_messages` (forge's reading) plus the
one thing forge's reading cannot know: which error is the span's **last**. An output
that reports no exit code and no traceback has no outcome (``unknown``) and so no
evidence, although its lines may say plainly what went wrong (``Error: could not load
cache``, ``bash: ./ponyc: No such file or directory``). When the last output of the
span that shows an error is such a command's, its error lines become that line's
evidence, so the budget keeps them word for word (it keeps the last line with evidence
whole); earlier ones are left as they were, so they take no room from the failures the
outcome reading found.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge_domain.messages import ContextMessage, ToolResult
from forge_domain.summary import ContextSummary, ToolCallItem
from forge_domain.tool_catalog import ToolCatalog
from forge_domain.tool_outcome import failure_evidence, shows_error_line, shows_traceback

__all__ = ["build_summary"]


def _last_error(messages: Sequence[ContextMessage], catalog: ToolCatalog) -> ToolResult | None:
    """The last result of ``messages`` that shows an error, when it is one the outcome
    reading gives no evidence (no exit code, no traceback, but an error line)."""
    for message in reversed(messages):
        if not isinstance(message, ToolResult) or not message.call_id:
            continue
        output = message.text
        if catalog.outcome(message, output) == "failed" or shows_traceback(output):
            return None  # its line has its evidence already
        if shows_error_line(output):
            return message
    return None


def with_last_error(
    summary: ContextSummary, messages: Sequence[ContextMessage], catalog: ToolCatalog
) -> ContextSummary:
    """``summary`` of ``messages`` with the evidence of their last error on the command
    line it answers, when only its error lines show it (see the module)."""
    result = _last_error(messages, catalog)
    if result is None:
        return summary
    evidence = failure_evidence(result.text)
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if (
                isinstance(item, ToolCallItem)
                and item.id == result.call_id
                and item.tool.kind == "shell"
                and item.evidence is None
            ):
                contents = list(block.contents)
                contents[item_index] = item.model_copy(update={"evidence": evidence})
                blocks = list(summary.blocks)
                blocks[block_index] = block.model_copy(update={"contents": tuple(contents)})
                return summary.model_copy(update={"blocks": tuple(blocks)})
    return summary


def build_summary(messages: Sequence[ContextMessage], catalog: ToolCatalog) -> ContextSummary:
    """The summary of ``messages`` (a span's own, droppable ones left out by the caller)."""
    return with_last_error(ContextSummary.from_messages(messages, catalog), messages, catalog)
