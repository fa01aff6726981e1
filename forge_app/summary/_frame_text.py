"""The bundled summary template's text, written in Python: what its Jinja render gives,
at a fraction of the cost.

A compaction renders its frame three times or more (the fit renders the whole summary,
then each cut it tries: plans/008-performance.md, round 9b), and Jinja spends about 3 µs
an item on attribute look-ups and tests. :func:`frame_text` lays the frame out as
``templates/forge-partial-summary-frame.md`` does, with the template's own filters
(:func:`~forge_app.summary._frame.fence`, ``code``, ``oneline``), and each item's lines
are kept from the last frame laid out (by identity: the cuts of one fit share most of
their items), so a second render of nearly the same summary costs little more than a join.

It stands in for the template only while the bundled file is the one it was written for
(:data:`TEMPLATE_SHA256`: :class:`~forge_app.summary._frame.SummaryFrame` checks it when
it loads the template; ``tests/app/test_frame_text.py`` fails when the template changes,
and checks this layout against Jinja's render on every kind of item).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from forge_app.summary._frame_filters import code, fence, oneline
from forge_domain.summary import ContextSummary, SummaryItem, TextItem, ToolCallItem
from forge_domain.tools import GenericTool, SemSearchTool, ShellTool, TodoWriteTool

__all__: list[str] = []  # internal: SummaryFrame's

TEMPLATE_SHA256 = "5c050a23e8631b8caab56096b1673eb0f02362c4567c5677b58da3bffccdada3"
"""The SHA-256 of the bundled template this layout reproduces."""

_FOOTER = "---\n\nPick up the work from the state recorded above.\n"


def _todo_line(kind: str, status: str, content: str) -> str:
    if kind == "added":
        return f"- [ADD] {content}\n"
    if kind == "removed":
        return f"- [CANCELLED] ~~{content}~~\n"
    if status == "completed":
        return f"- [DONE] ~~{content}~~\n"
    if status == "in_progress":
        return f"- [IN_PROGRESS] {content}\n"
    return f"- [UPDATE] {content}\n"


def _tool_lines(item: ToolCallItem) -> str:
    """The lines of a tool-call item, its evidence's included."""
    tool = item.tool
    status = "" if item.is_success else " (failed)"
    if item.earlier:
        failed = item.earlier_failures
        also = f", {failed} earlier failed" if failed else ""
        status = f"{status} (×{item.earlier + 1}{also})"  # noqa: RUF001 (the template's sign)
    definition = tool.definition
    label, kind = definition.label, tool.kind
    if kind == "shell":
        lines = f"**{label}:**{status}\n{fence(cast(ShellTool, tool).command, 3)}\n"
    elif kind == "sem_search":
        queries = "".join(
            f"- {code(query.query)}: {oneline(query.use_case)}\n"
            for query in cast(SemSearchTool, tool).queries
        )
        lines = f"**{label}:**{status}\n{queries}"
    elif kind == "todo_write":
        changes = "".join(
            _todo_line(change.kind, change.todo.status, oneline(change.todo.content))
            for change in cast(TodoWriteTool, tool).changes
        )
        lines = f"**{label}:**{status}\n{changes}"
    elif kind == "generic":
        generic = cast(GenericTool, tool)
        shown = f" {code(generic.arguments)}" if generic.arguments else ""
        lines = f"**{label}:** {code(generic.name)}{shown}{status}\n"
    elif definition.resource is None:
        lines = f"**{label}**{status}\n"
    else:
        value = getattr(tool, definition.resource)
        shown = (value or ".") if definition.reading == "path" else value
        lines = f"**{label}:** {code(shown)}{status}\n"
    if item.evidence:
        lines += f"Error: {code(item.evidence)}\n"
    return lines


def _item_lines(item: SummaryItem) -> str:
    """What the template prints for ``item``."""
    if isinstance(item, TextItem):
        if item.omitted:
            return oneline(item.text) + "\n"
        return fence(item.text, 4) + "\n" if item.text else ""
    return _tool_lines(item)


@dataclass
class FrameText:
    """Lays frames out; remembers the last frame's item lines (by identity, the items kept
    alive here until the next frame) for the next one."""

    head: str
    """The frame's first lines: its marker, its preamble, the heading."""
    _last: dict[int, tuple[SummaryItem, str]] = field(default_factory=dict)

    def __call__(self, summary: ContextSummary) -> str:
        """The frame of ``summary``, as the bundled template renders it."""
        last = self._last
        kept: dict[int, tuple[SummaryItem, str]] = {}
        parts = [self.head]
        for number, block in enumerate(summary.blocks, 1):
            parts.append(f"### {number}. {block.role.title}\n\n")
            for item in block.contents:
                seen = last.get(id(item))  # (the item is alive in ``last``: that same item)
                lines = _item_lines(item) if seen is None else seen[1]
                kept[id(item)] = (item, lines)
                parts.append(lines)
            parts.append("\n")
        parts.append(_FOOTER)
        self._last = kept
        return "".join(parts)
