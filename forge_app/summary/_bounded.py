"""The bounded build: decide which calls and texts a span's summary needs before any item is built.

A 5,000-message span holds thousands of calls; its summary, fitted to its budget, keeps a
few hundred lines. :func:`plan_span` reads the span's messages once (each call's kind and
operation key from the catalog, whether its output shows an error, the size of its line)
and gives the messages :meth:`ContextSummary.from_messages` needs to build that summary:

* **One call per operation key.** Calls of one key that all succeeded and showed no error
  (*plain* keys) become one line at the last call's place anyway
  (``aggregate_operations``); only that call is built, and it counts the others as its
  ``earlier`` calls. Keys with a failure or an error's evidence keep every call (their
  merged line is the transformers' to make: which evidence, which earlier failures).
* **Only the plain lines the budget can keep.** The fit drops plain lines oldest first,
  and only after every assistant text; it never drops a user ask, a line that changed a
  file, or an error before them. So plain keys are taken newest first while their line
  sizes fit, with room to spare (:data:`SLACK`, :data:`SLACK_CHARS`), in what the asks and
  the error and file lines leave of the budget; older ones are left out, and then every
  assistant text is too. What is left out is counted, by kind, in the omission note.
* **What the transformers see is otherwise unchanged.** User texts are never left out; an
  assistant block keeps at least one of its items (its newest call, else its newest text),
  so no user runs join that were apart and ``DedupeRole`` folds what it folded before; the
  newest :data:`~forge_app.summary._build.REACH` command calls are all kept, so the last
  error is found on the same line.

A span with text-protocol actions (:func:`text_turns`), a call without an id, or two calls
sharing an id is built as it is (None).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from forge_app.summary._budget import SHORT_COMMAND
from forge_app.summary._build import REACH, with_last_error
from forge_app.summary._fit_summary import _LINE_CHARS, _TEXT_CHARS, _chars
from forge_app.summary._omission import omission_note
from forge_app.summary.transformers._keep_last_operation import operation_key
from forge_domain.messages import ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import (
    ContextSummary,
    OmittedKind,
    SummaryBlock,
    SummaryItem,
    ToolCallItem,
)
from forge_domain.summary_tools import FILE_CHANGING_KINDS, TOOL_KIND_TABLE, ShellTool, SummaryTool
from forge_domain.text_protocol import text_turns
from forge_domain.tool_catalog import CallClassifier, ToolCatalog
from forge_domain.tool_outcome import output_shows_error

__all__: list[str] = []  # internal: used by the compactor

SLACK = 1.5
"""How much more than the room left for plain lines is built (estimates are estimates)."""
SLACK_CHARS = 4_000
"""Characters of plain lines built beyond that, for the fit to choose from."""

_MERGEABLE = frozenset(row.kind for row in TOOL_KIND_TABLE if row.is_mergeable)


@dataclass(slots=True)
class _Call:
    """What the pre-pass knows of one call."""

    index: int
    """The position of its message in the span."""
    call: ToolCall
    key: Hashable | None
    """Its plain operation key; None when it is never left out (error, file change, …)."""
    kind: str
    size: int
    """About what its line adds to the frame."""
    protected: bool
    """Kept whatever the budget: one of the newest commands, read for the last error."""


@dataclass
class SpanPlan:
    """The messages to build a span's summary from, and what it must add to that summary."""

    messages: list[ContextMessage]
    """The span without the calls, results and texts left out."""
    earlier: dict[str, int] = field(default_factory=dict)
    """Per call id kept, the calls of its key left out before it (its ``earlier``)."""
    omitted: dict[OmittedKind, int] = field(default_factory=dict)
    """What is left out and not counted on a kept line, by kind."""

    def applied(self, summary: ContextSummary) -> ContextSummary:
        """``summary`` (built from :attr:`messages`) with the counts of what was left out:
        ``earlier`` on the kept calls, the rest in an omission note in the first assistant
        block."""
        blocks: list[SummaryBlock] = []
        note_placed = not self.omitted
        for block in summary.blocks:
            contents: list[SummaryItem] = []
            changed = False
            for item in block.contents:
                if type(item) is ToolCallItem and item.id and item.id in self.earlier:
                    item = item.model_copy(update={"earlier": item.earlier + self.earlier[item.id]})
                    changed = True
                contents.append(item)
            if not note_placed and block.role == Role.ASSISTANT:
                contents.insert(0, omission_note(self.omitted))
                note_placed = changed = True
            blocks.append(
                block.model_copy(update={"contents": tuple(contents)}) if changed else block
            )
        if not note_placed:
            blocks.insert(
                0, SummaryBlock(role=Role.ASSISTANT, contents=(omission_note(self.omitted),))
            )
        return ContextSummary(blocks=tuple(blocks))


def bounded_summary(
    messages: Sequence[ContextMessage], catalog: ToolCatalog, max_chars: int, text_limit: int
) -> ContextSummary:
    """:func:`~forge_app.summary._build.build_summary` of ``messages`` for a frame of
    ``max_chars``, built from what :func:`plan_span` keeps (the whole span when it keeps all)."""
    classifier = catalog.classifier()
    plan = plan_span(messages, catalog, classifier, max_chars, text_limit)
    if plan is None:
        built = messages
        summary = ContextSummary.from_messages(messages, catalog, classifier=classifier)
    else:
        built = plan.messages
        summary = plan.applied(ContextSummary.from_messages(built, catalog, classifier=classifier))
    return with_last_error(summary, built)


def _plain_key(tools: Sequence[SummaryTool]) -> Hashable | None:
    """The operation key of a call's one line when it may be left out for the call's
    output alone: one tool, of a kind that merges and changes no file; else None."""
    kind = tools[0].kind
    if len(tools) != 1 or kind not in _MERGEABLE or kind in FILE_CHANGING_KINDS:
        return None
    return operation_key(tools[0])


def _line_size(tools: Sequence[SummaryTool]) -> int:
    """About what a line of ``tools`` adds to the frame, its command shortened as the fit
    would shorten it before dropping any plain line."""
    size = 0
    for tool in tools:
        if isinstance(tool, ShellTool):
            size += min(len(tool.command), SHORT_COMMAND + 2) + _LINE_CHARS
        else:
            size += _chars(tool)
        size += 2 * _LINE_CHARS
    return size


def plan_span(
    messages: Sequence[ContextMessage],
    catalog: ToolCatalog,
    classifier: CallClassifier,
    max_chars: int,
    text_limit: int,
) -> SpanPlan | None:
    """What to build of ``messages`` for a frame of ``max_chars`` (see the module); None
    when the span is to be built as it is."""
    results: dict[str, ToolResult] = {}
    for message in messages:
        if type(message) is ToolResult and message.call_id:
            results[message.call_id] = message
    turns = text_turns(messages)
    if turns.answered or turns.orphans:
        return None
    calls: list[_Call] = []
    ids: set[str] = set()
    kept_chars = 0  # asks, and lines never left out
    shell_seen = 0
    read: dict[int, tuple[tuple[SummaryTool, ...], str, int, Hashable | None]] = {}
    inferring = catalog.failure_inference == "output"
    for index in range(len(messages) - 1, -1, -1):  # newest first, for the REACH
        message = messages[index]
        if type(message) is not TextMessage or message.role == Role.SYSTEM:
            continue
        if message.role == Role.USER:
            kept_chars += min(len(message.text), text_limit) + _TEXT_CHARS
            continue
        for call in reversed(message.tool_calls or ()):
            if not call.id or call.id in ids:
                return None
            ids.add(call.id)
            result = results.get(call.id)
            output = None if result is None else result.text
            tools = classifier.tools(call, output, ())
            known = read.get(id(tools))
            if known is None or known[0] is not tools:  # identical pure calls share ``tools``
                known = read[id(tools)] = (
                    tools,
                    tools[0].kind,
                    _line_size(tools),
                    _plain_key(tools),
                )
            _, kind, size, key = known
            if key is not None and (
                result is None
                or result.is_error
                or (inferring and output_shows_error(output or ""))
                or classifier.written_todos(call) is not None
            ):
                key = None
            protected = False
            if kind == "shell":
                shell_seen += 1
                protected = shell_seen <= REACH
            if key is None:
                kept_chars += size
            calls.append(_Call(index, call, key, kind, size, protected))
    calls.reverse()
    return _read_alike(_planned(messages, calls, max_chars - kept_chars))


def _planned(messages: Sequence[ContextMessage], calls: list[_Call], room: int) -> SpanPlan:
    """The plan, given each call's reading and the room left for plain lines."""
    newest: dict[object, _Call] = {}
    for call in calls:
        if call.key is not None:
            newest[call.key] = call
    keys_kept: set[object] = set()
    used = 0
    limit = room * SLACK + SLACK_CHARS
    for call in sorted(newest.values(), key=lambda c: c.index, reverse=True):
        if used + call.size > limit:
            break
        used += call.size
        keys_kept.add(call.key)
    drop_narration = len(keys_kept) < len(newest)
    kept_calls: set[str] = {
        c.call.id
        for c in calls
        if c.key is None or c.protected or (c.key in keys_kept and newest[c.key] is c)
    }
    by_index: dict[int, list[_Call]] = {}
    for call in calls:
        by_index.setdefault(call.index, []).append(call)
    keep_text = _placeholders(messages, by_index, kept_calls, drop_narration)
    all_ids = {c.call.id for c in calls}
    plan = SpanPlan([])
    pending: dict[object, int] = {}
    for call in calls:
        if call.key is None:
            continue
        if call.call.id in kept_calls:
            waiting = pending.pop(call.key, 0)
            if waiting:
                plan.earlier[call.call.id] = waiting
        else:
            pending[call.key] = pending.get(call.key, 0) + 1
    for key, count in pending.items():
        kind = newest[key].kind
        plan.omitted[kind] = plan.omitted.get(kind, 0) + count
    narration = 0
    for index, message in enumerate(messages):
        if type(message) is ToolResult:
            if message.call_id in kept_calls or message.call_id not in all_ids:
                plan.messages.append(message)
            continue
        if type(message) is not TextMessage or message.role != Role.ASSISTANT:
            plan.messages.append(message)
            continue
        own = by_index.get(index, [])
        kept = tuple(c.call for c in own if c.call.id in kept_calls)
        text_kept = index in keep_text or not drop_narration
        if not text_kept and message.text:
            narration += 1
        if len(kept) == len(own) and text_kept:
            plan.messages.append(message)
        elif kept or (text_kept and message.text):
            content = message.content if text_kept else None
            plan.messages.append(
                message.model_copy(update={"tool_calls": kept or None, "content": content})
            )
    if narration:
        plan.omitted["narration"] = narration
    return plan


def _read_alike(plan: SpanPlan | None) -> SpanPlan | None:
    """``plan``, unless its messages read as text-protocol turns (a text left without its
    calls, or a message without calls now followed by an observation): then None."""
    if plan is None:
        return None
    turns = text_turns(plan.messages)
    return None if turns.answered or turns.orphans else plan


def _placeholders(
    messages: Sequence[ContextMessage],
    by_index: dict[int, list[_Call]],
    kept_calls: set[str],
    drop_narration: bool,
) -> set[int]:
    """Keep one item of every assistant block that would otherwise be left empty (its
    newest call, added to ``kept_calls``, else its newest text); the indexes of the
    messages whose text is kept that way.

    Blocks are read as :meth:`ContextSummary.from_messages` reads them, except that every
    user message ends one (a media-only one too): a block split more finely keeps more,
    never less.
    """
    keep_text: set[int] = set()
    block: list[int] = []  # the assistant messages of the current block

    def close() -> None:
        newest_call: _Call | None = None
        newest_text: int | None = None
        for index in block:
            message = messages[index]
            for call in by_index.get(index, ()):
                if call.call.id in kept_calls:
                    return
                newest_call = call
            if message.text:
                if not drop_narration:
                    return
                newest_text = index
        if newest_call is not None:
            kept_calls.add(newest_call.call.id)
        elif newest_text is not None:
            keep_text.add(newest_text)

    for index, message in enumerate(messages):
        if type(message) is not TextMessage or message.role == Role.SYSTEM:
            continue
        if message.role == Role.ASSISTANT:
            block.append(index)
        elif block:
            close()
            block = []
    if block:
        close()
    return keep_text
