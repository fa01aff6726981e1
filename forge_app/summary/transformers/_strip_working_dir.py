"""StripWorkingDir: make file paths relative to the working directory."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import get_args

from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, ToolCallItem
from forge_domain.tools import FileTool

__all__ = [
    "StripWorkingDir",
]

_PATH_KINDS = frozenset(tool.model_fields["kind"].default for tool in get_args(FileTool))
"""The kinds of the tools whose ``path`` is rewritten (those of :data:`FileTool`)."""


def strip_dir(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when ``cwd`` is a component-wise prefix; else ``path``.

    ``/p/project2/x`` is not under ``/p/project``; a trailing slash on ``cwd`` is
    ignored; ``path == cwd`` gives ``""``; relative paths and backslash (Windows)
    paths are left alone, as on Unix.
    """
    base = _parts(cwd)
    if not base or base[-1] not in path:
        return path
    parts = _parts(path)
    if parts[: len(base)] != base:
        return path
    rest = parts[len(base) :]
    return str(PurePosixPath(*rest)) if rest else ""


@lru_cache(maxsize=4096)
def _parts(path: str) -> tuple[str, ...]:
    """Path components (sessions touch the same few files again and again)."""
    return PurePosixPath(path).parts


@dataclass(frozen=True)
class StripWorkingDir:
    """Rewrite the paths of file reads, updates, removals and undos, in blocks of every role.

    Shell commands, search patterns and other tools are left unchanged.
    """

    cwd: str
    """The working directory to strip."""

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """The summary with paths under ``cwd`` made relative."""
        base = _parts(self.cwd)
        if not base:
            return summary
        blocks = tuple(self._block(block, base[-1]) for block in summary.blocks)
        return summary.model_copy(update={"blocks": blocks})

    def _block(self, block: SummaryBlock, last_part: str) -> SummaryBlock:
        # Most items name no path under cwd: find one before building anything. A path
        # under cwd contains cwd's last component, so the substring test rules out the rest.
        for item in block.contents:
            if (
                item.kind == "tool_call"
                and item.tool.kind in _PATH_KINDS
                and last_part in getattr(item.tool, "path", "")
            ):
                break
        else:
            return block
        contents = tuple(self._item(item) for item in block.contents)
        if all(new is old for new, old in zip(contents, block.contents, strict=True)):
            return block
        return block.model_copy(update={"contents": contents})

    def _item(self, item: SummaryItem) -> SummaryItem:
        if not isinstance(item, ToolCallItem):
            return item
        tool = item.tool
        if not isinstance(tool, FileTool):
            return item
        path = strip_dir(tool.path, self.cwd)
        if path == tool.path:
            return item
        return item.model_copy(update={"tool": tool.model_copy(update={"path": path})})
