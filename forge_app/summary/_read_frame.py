"""Read a frame rendered by the default template back into its :class:`ContextSummary`.

A summary's structure (``TextMessage.summary_data``) lives in memory only: a transcript
written to a file, or a framework that keeps only message text, has the frame's text
alone. Folding that text as conversation would quote the old frame inside the new one
(a second marker, and the task and paths cut away after a few rounds). The default
template is deterministic, so its text is read back instead:

* :func:`read_frame` parses the text line by line and accepts the result only when
  rendering it again gives the text exactly (nothing is guessed: anything the template
  would not have written, or would have written differently, is not a frame). Text
  after the frame's last line (a store's ``[archived: ref c3, …]`` line, say) is kept
  as a user text after the frame's blocks.
* :func:`earlier_summary` is what a compaction folds: the parsed frame, or, for text
  that opens with the marker but is not such a frame (a custom template, an edited
  frame), one user text holding its body without the marker and preamble, bounded. A
  frame that quotes an older frame as a user text (written before frames were read back)
  has that text folded the same way, so the nesting goes at the next compaction.

What the template does not print cannot come back: call ids (None), the status of an
added or the previous status of a cancelled todo (``pending``), line breaks inside a
path, a pattern or an error excerpt (folded to spaces), an empty path (``.``) and empty
texts (left out). Reading again what was read gives the same summary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from pydantic import ValidationError

from forge_app.summary._budget import truncate_text
from forge_app.summary._frame import (
    SUMMARY_MARKER,
    SUMMARY_PREAMBLE,
    SummaryFrame,
    is_summary_text,
)
from forge_app.summary._omission import OMISSION_NOTE, omission_note
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.summary._summary import OmittedKind
from forge_domain.tools import (
    TOOL_KIND_TABLE,
    TOOL_KINDS,
    GenericTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SummaryTool,
    Todo,
    TodoChange,
    TodoWriteTool,
    ToolKindDefinition,
)

__all__ = ["EARLIER_SUMMARY_LIMIT", "EARLIER_SUMMARY_NOTE", "earlier_summary", "read_frame"]

EARLIER_SUMMARY_LIMIT = 4_000
"""Characters kept of an earlier summary that is not a frame of the default template."""
EARLIER_SUMMARY_NOTE = "[an earlier summary, not in the default frame; its text as it was:]"
"""The first line of the text such a summary is folded as."""

_ROLES = {role.title: role for role in Role}
_LABELS = {row.label: row for row in TOOL_KIND_TABLE}
_BLOCK = re.compile(r"### (\d+)\. (\w+)")
_LINE = re.compile(r"\*\*(?P<label>[^*]+?)(?P<colon>:?)\*\*(?P<tail>.*)")
_STATUS = re.compile(
    r"(?P<failed> \(failed\))?(?: \(\u00d7(?P<calls>\d+)(?:, (?P<ef>\d+) earlier failed)?\))?"
)
_FENCE = re.compile(r"`{3,}")
_TODO = {
    "[ADD] ": ("added", "pending"),
    "[CANCELLED] ": ("removed", "pending"),
    "[DONE] ": ("updated", "completed"),
    "[IN_PROGRESS] ": ("updated", "in_progress"),
    "[UPDATE] ": ("updated", "pending"),
}
"""A todo change's prefix: its kind and the status it is read with (see the module doc)."""
_STRUCK = ("[CANCELLED] ", "[DONE] ")
"""The prefixes whose content is struck through (``~~content~~``)."""


class _NotAFrame(Exception):
    """The text is not what the default template renders (internal: read_frame says None)."""


@lru_cache(maxsize=1)
def _default_frame() -> tuple[SummaryFrame, str, str]:
    """The default template, and the text of its frame before and after the blocks."""
    frame = SummaryFrame()
    empty = frame.render(ContextSummary())
    heading = "## Summary\n\n"
    cut = empty.index(heading) + len(heading)
    return frame, empty[:cut], empty[cut:].rstrip("\n")


@lru_cache(maxsize=1)
def _nouns() -> dict[str, OmittedKind]:
    """What an omission note calls each kind, singular and plural, read from the note itself."""
    kinds: tuple[OmittedKind, ...] = (*TOOL_KINDS, "narration", "repeated_ask", "ask")
    nouns: dict[str, OmittedKind] = {}
    for kind in kinds:
        for count in (1, 2):
            what = _what(omission_note({kind: count}).text)
            nouns[what.split(" ", 1)[1]] = kind
    return nouns


def _what(note: str) -> str:
    """The ``{what}`` of an omission note (``14 commands, 3 assistant notes``)."""
    start, end = OMISSION_NOTE.split("{what}")
    if not (note.startswith(start) and note.endswith(end)) or len(note) < len(start + end):
        raise _NotAFrame(note)
    return note[len(start) : len(note) - len(end)]


def read_frame(text: str) -> ContextSummary | None:
    """The summary the default template rendered as ``text``; None when it is not one.

    Text after the frame's last line is kept as a user text after its blocks (a store
    appends its ref line there). A frame whose last line is cut off at its line break
    (as a model-written summary's fallback frame is stored) is read too.
    """
    frame, head, foot = _default_frame()
    if not text.startswith(head):
        return None
    try:
        summary, end = _Reader(text, len(head), foot).read()
    except (_NotAFrame, ValidationError, ValueError, KeyError):
        return None
    if frame.render(summary).rstrip("\n") != text[:end]:
        return None  # the template would not have written this text: not read, not guessed
    rest = text[end:].strip()
    if not rest:
        return summary
    after = SummaryBlock(role=Role.USER, contents=(TextItem(text=rest),))
    return ContextSummary.of_blocks((*summary.blocks, after))


@lru_cache(maxsize=16)
def earlier_summary(text: str) -> ContextSummary:
    """What an earlier summary kept only as ``text`` folds as: its frame read back, else
    (for text that is not a frame of the default template) one user text holding its body,
    without the marker and preamble (of the frames it quotes too: the text of frames nested
    by earlier versions), at most :data:`EARLIER_SUMMARY_LIMIT` characters.

    Cached (the summary is frozen): a compaction fitting ``max_tokens`` builds the summary
    of a span many times, and reading a large frame renders it again to check it.
    """
    read = read_frame(text)
    if read is not None:
        return _unnested(read)
    body = text.replace(SUMMARY_MARKER, "").replace(SUMMARY_PREAMBLE, "").strip()
    kept = truncate_text(body, EARLIER_SUMMARY_LIMIT)
    item = TextItem(text=f"{EARLIER_SUMMARY_NOTE}\n{kept}" if kept else EARLIER_SUMMARY_NOTE)
    return ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=(item,)),))


def _unnested(summary: ContextSummary) -> ContextSummary:
    """``summary`` with each user text that is itself a summary's frame (quoted whole by a
    compaction that could not read it back) replaced by what that summary folds as."""
    if not any(
        block.role == Role.USER and isinstance(item, TextItem) and is_summary_text(item.text)
        for block in summary.blocks
        for item in block.contents
    ):
        return summary
    blocks: list[SummaryBlock] = []
    for block in summary.blocks:
        contents: list[SummaryItem] = []
        for item in block.contents:
            if (
                block.role == Role.USER
                and isinstance(item, TextItem)
                and is_summary_text(item.text)
            ):
                blocks += [SummaryBlock(role=block.role, contents=tuple(contents))]
                blocks += earlier_summary(item.text).blocks
                contents = []
            else:
                contents.append(item)
        blocks.append(SummaryBlock(role=block.role, contents=tuple(contents)))
    return ContextSummary.of_blocks(blocks)


class _Reader:
    """Reads the blocks of a frame, line by line, from ``start`` of ``text``."""

    def __init__(self, text: str, start: int, foot: str) -> None:
        self.lines = text[start:].split("\n")
        self.text, self.foot = text, foot
        self.at = 0
        self.offsets = [start]  # where each line starts in ``text``
        for line in self.lines:
            self.offsets.append(self.offsets[-1] + len(line) + 1)

    def _line(self) -> str:
        if self.at >= len(self.lines):
            raise _NotAFrame("the frame ends early")
        line = self.lines[self.at]
        self.at += 1
        return line

    def _peek(self) -> str | None:
        return self.lines[self.at] if self.at < len(self.lines) else None

    def read(self) -> tuple[ContextSummary, int]:
        """The summary, and where the frame's text ends (its last line break left out)."""
        blocks: list[SummaryBlock] = []
        while True:
            offset = self.offsets[self.at]
            if self.text.startswith(self.foot, offset):
                return ContextSummary(blocks=tuple(blocks)), offset + len(self.foot)
            blocks.append(self._block(len(blocks) + 1))

    def _block(self, number: int) -> SummaryBlock:
        heading = _BLOCK.fullmatch(self._line())
        if heading is None or int(heading.group(1)) != number or self._line() != "":
            raise _NotAFrame(f"block {number}")
        role = _ROLES[heading.group(2)]
        contents: list[SummaryItem] = []
        while (line := self._line()) != "":
            contents.append(self._item(line))
        return SummaryBlock(role=role, contents=tuple(contents))

    def _item(self, line: str) -> SummaryItem:
        if _FENCE.fullmatch(line) and len(line) >= 4:
            return TextItem(text=self._fenced(line))
        if line.startswith("["):
            counts: dict[OmittedKind, int] = {}
            for part in _what(line).split(", "):
                count, noun = part.split(" ", 1)
                counts[_nouns()[noun]] = int(count)
            return omission_note(counts)
        found = _LINE.fullmatch(line)
        if found is None:
            raise _NotAFrame(line)
        row = _LABELS[found.group("label")]
        tool, status = self._tool(row, found.group("colon") == ":", found.group("tail"))
        flags = _STATUS.fullmatch(status)
        if flags is None:
            raise _NotAFrame(line)
        calls = int(flags.group("calls") or 1)
        evidence = None
        following = self._peek()
        if following is not None and following.startswith("Error: "):
            self.at += 1
            evidence, _ = _code(following[len("Error: ") :], lambda rest: not rest)
        return ToolCallItem(
            id=None,
            tool=tool,
            is_success=flags.group("failed") is None,
            earlier=calls - 1,
            earlier_failures=int(flags.group("ef") or 0),
            evidence=evidence,
        )

    def _fenced(self, fence: str) -> str:
        inner: list[str] = []
        while (line := self._line()) != fence:
            inner.append(line)
        return "\n".join(inner)

    def _tool(self, row: ToolKindDefinition, colon: bool, tail: str) -> tuple[SummaryTool, str]:
        """The tool of a line of kind ``row`` and the line's status part."""
        if row.model is ShellTool:
            fence = self._line()
            if not _FENCE.fullmatch(fence):
                raise _NotAFrame(fence)
            return ShellTool(command=self._fenced(fence)), tail
        if row.model is SemSearchTool:
            queries: list[SemanticQuery] = []
            while (line := self._peek()) is not None and line.startswith("- "):
                self.at += 1
                query, rest = _code(line[2:], lambda rest: rest.startswith(": "))
                queries.append(SemanticQuery(query=query, use_case=rest[2:]))
            return SemSearchTool(queries=tuple(queries)), tail
        if row.model is TodoWriteTool:
            return TodoWriteTool(changes=self._todos()), tail
        if row.resource is None:
            if colon:
                raise _NotAFrame(row.label)
            return row.model.model_validate({}), tail
        if not tail.startswith(" "):
            raise _NotAFrame(row.label)
        if row.model is not GenericTool:
            value, rest = _code(tail[1:], _is_status)
            return row.model.model_validate({row.resource: value}), rest
        name, rest = _code(tail[1:], lambda rest: _is_status(rest) or rest.startswith(" `"))
        if _is_status(rest):
            return GenericTool(name=name), rest
        arguments, rest = _code(rest[1:], _is_status)
        return GenericTool(name=name, arguments=arguments), rest

    def _todos(self) -> tuple[TodoChange, ...]:
        changes: list[TodoChange] = []
        while (line := self._peek()) is not None and line.startswith("- ["):
            self.at += 1
            prefix = next((p for p in _TODO if line.startswith(p, 2)), None)
            if prefix is None:
                raise _NotAFrame(line)
            content = line[2 + len(prefix) :]
            if prefix in _STRUCK:
                if not (content.startswith("~~") and content.endswith("~~")):
                    raise _NotAFrame(line)
                content = content[2:-2]
            kind, status = _TODO[prefix]
            todo = Todo.model_validate({"content": content, "status": status})
            changes.append(TodoChange.model_validate({"todo": todo, "kind": kind}))
        return tuple(changes)


def _is_status(text: str) -> bool:
    return _STATUS.fullmatch(text) is not None


def _code(text: str, fits: Callable[[str], bool]) -> tuple[str, str]:
    """The value of the inline code span ``text`` starts with, and the text after it, which
    must ``fit`` what the template prints after the span.

    ``code`` prints a value stripped, padded with a space only when it starts or ends with
    a backtick, and an empty one as two backticks: two backticks may open a value or be an
    empty one, and the text after them decides.
    A reading ``code`` could not have printed is not taken.
    """
    marks = len(text) - len(text.lstrip("`"))
    found = re.compile(rf"(?<!`)`{{{marks}}}(?!`)").search(text, marks) if marks else None
    if found is not None:
        value = text[marks : found.start()]
        if len(value) >= 2 and value[0] == value[-1] == " " and "`" in (value[1], value[-2]):
            value = value[1:-1]
        if value and value == value.strip() and fits(text[found.end() :]):
            return value, text[found.end() :]
    if marks == 2 and fits(text[2:]):
        return "", text[2:]
    raise _NotAFrame(text)
