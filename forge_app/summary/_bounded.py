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
from dataclasses import dataclass

from forge_app.summary._budget import SHORT_COMMAND
from forge_app.summary._build import REACH, with_last_error
from forge_app.summary._fit_summary import _LINE_CHARS, _TEXT_CHARS, _chars
from forge_app.summary._omission import omission_note
from forge_app.summary.transformers._keep_last_operation import operation_key
from forge_domain import ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary, SummaryBlock
from forge_domain.summary._selection import Selection, is_only_media
from forge_domain.summary._summary import OmittedKind
from forge_domain.tools import (
    FILE_CHANGING_KINDS,
    TOOL_KIND_TABLE,
    CallClassifier,
    ShellTool,
    SummaryTool,
    ToolCatalog,
    text_turns,
)
from forge_domain.tools._outcome import output_shows_error

__all__: list[str] = []  # internal: used by the compactor

SLACK = 1.5
"""How much more than the room left for plain lines is built (estimates are estimates)."""
SLACK_CHARS = 4_000
"""Characters of plain lines built beyond that, for the fit to choose from."""

_MERGEABLE = frozenset(row.kind for row in TOOL_KIND_TABLE if row.is_mergeable)

_Reading = tuple[tuple[SummaryTool, ...], str, Hashable | None]
"""A call's tools, kind and plain operation key."""


@dataclass(slots=True)
class _Call:
    """What the pre-pass knows of one call."""

    index: int
    """The position of its message in the span."""
    block: int
    """Its assistant block, counted from the newest."""
    call: ToolCall
    key: Hashable | None
    """Its plain operation key; None when it is never left out (error, file change, …)."""
    kind: str
    tools: tuple[SummaryTool, ...]
    """What it did (its line's size is read from them when the budget needs it)."""
    protected: bool
    """Kept whatever the budget: one of the newest commands, read for the last error."""


@dataclass(frozen=True, slots=True)
class _Decided:
    """What :func:`_planned` decides: the calls and assistant texts built (None: every
    text), each built call's ``earlier``, what is left out."""

    calls: set[str]
    earlier: dict[str, int]
    texts: set[int] | None
    omitted: dict[OmittedKind, int]


@dataclass(frozen=True, slots=True)
class SpanPlan:
    """What to build of a span, and what it leaves out."""

    selection: Selection
    """The calls and assistant texts built."""
    omitted: dict[OmittedKind, int]
    """What is left out and not counted on a kept line, by kind."""

    def noted(self, summary: ContextSummary) -> ContextSummary:
        """``summary`` with the omission note counting :attr:`omitted`, first in its first
        assistant block."""
        if not self.omitted:
            return summary
        note = omission_note(self.omitted)
        blocks = list(summary.blocks)
        for position, block in enumerate(blocks):
            if block.role == Role.ASSISTANT:
                contents = (note, *block.contents)
                blocks[position] = block.model_copy(update={"contents": contents})
                break
        else:
            blocks.insert(0, SummaryBlock(role=Role.ASSISTANT, contents=(note,)))
        return ContextSummary(blocks=tuple(blocks))


def bounded_summary(
    messages: Sequence[ContextMessage], catalog: ToolCatalog, max_chars: int, text_limit: int
) -> ContextSummary:
    """:func:`~forge_app.summary._build.build_summary` of ``messages`` for a frame of
    ``max_chars``, built from what :func:`plan_span` selects (the whole span when it is
    None)."""
    classifier = catalog.classifier()
    plan = plan_span(messages, catalog, classifier, max_chars, text_limit)
    if plan is None:
        summary = ContextSummary.from_messages(messages, catalog, classifier=classifier)
    else:
        summary = plan.noted(
            ContextSummary.from_messages(
                messages, catalog, classifier=classifier, selection=plan.selection
            )
        )
    return with_last_error(summary, messages)


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
    turns = text_turns(messages)
    if turns.answered or turns.orphans:
        return None
    results: dict[str, ToolResult] = {}
    for message in messages:
        if isinstance(message, ToolResult) and message.call_id:
            results[message.call_id] = message
    calls: list[_Call] = []
    texts: list[int | None] = []  # per block, from the newest: its newest text
    narrated: list[int] = []  # the assistant messages with a text
    asks: dict[int, set[str]] = {
        -1: set()
    }  # per block, the user texts between it and the next older one
    ids: set[str] = set()
    kept_chars = 0  # asks, and lines never left out
    shell_seen = 0
    read: dict[tuple[str, str], _Reading] = {}  # per pure call (name and arguments)
    inferring = catalog.failure_inference == "output"
    in_block = False
    read_always: list[int] = []  # user texts, and the newest message of each run of a speaker
    speaker: Role | None = None  # of the run walked, as from_messages' blocks see runs
    system, assistant = Role.SYSTEM, Role.ASSISTANT  # (an enum's member is slow to look up)
    add_id, find_result, find_read, add_call = ids.add, results.get, read.get, calls.append
    for index in range(len(messages) - 1, -1, -1):  # newest first, for the REACH
        message = messages[index]
        if type(message) is not TextMessage:
            continue
        role = message.role
        if role == system:
            continue
        if role != speaker and not is_only_media(message):
            speaker = role
            read_always.append(index)
        if role != assistant:
            read_always.append(index)
            ask = message.text
            kept_chars += min(len(ask), text_limit) + _TEXT_CHARS
            asks[len(texts) - 1].add(ask)
            in_block = False
            continue
        if not in_block:
            texts.append(None)
            asks[len(texts) - 1] = set()
            in_block = True
        block = len(texts) - 1
        if message.text:
            narrated.append(index)
            if texts[block] is None:
                texts[block] = index
        tool_calls = message.tool_calls
        if not tool_calls:
            continue
        for call in reversed(tool_calls):
            call_id = call.id
            if not call_id or call_id in ids:
                return None
            add_id(call_id)
            result = find_result(call_id)
            pure = (call.name, call.arguments)
            known = find_read(pure)
            if known is None:
                tools = classifier.tools(call, None if result is None else result.text, ())
                known = (tools, tools[0].kind, _plain_key(tools))
                if classifier.is_pure(call.name):  # no todo writer either: key stays as read
                    read[pure] = known
                elif known[2] is not None and classifier.written_todos(call) is not None:
                    known = (known[0], known[1], None)
            tools, kind, key = known
            if key is not None and (
                result is None or result.is_error or (inferring and output_shows_error(result.text))
            ):
                key = None
            protected = False
            if kind == "shell":
                shell_seen += 1
                protected = shell_seen <= REACH
            if key is None:
                kept_chars += _line_size(tools)
            add_call(_Call(index, block, call, key, kind, tools, protected))
    room = max_chars - kept_chars
    decided = _planned(calls, texts, asks, len(narrated), room)
    kept, kept_texts = decided.calls, decided.texts
    visit = set(read_always)  # and every message that builds an item
    visit.update(narrated if kept_texts is None else kept_texts)
    visit.update(call.index for call in calls if call.call.id in kept)
    selection = Selection(kept, decided.earlier, kept_texts, sorted(visit), results)
    return SpanPlan(selection, decided.omitted)


def _planned(
    calls: list[_Call],
    texts: list[int | None],
    asks: dict[int, set[str]],
    narrated: int,
    room: int,
) -> _Decided:
    """The plan, given each call's reading (newest first), each block's newest text and the
    user texts after it, how many assistant messages have a text, and the room left for
    plain lines."""
    newest: dict[Hashable, _Call] = {}
    for call in calls:
        if call.key is not None and call.key not in newest:
            newest[call.key] = call
    keys_kept: set[Hashable] = set()
    used = 0
    limit = room * SLACK + SLACK_CHARS
    for call in newest.values():  # newest first
        size = _line_size(call.tools)
        if used + size > limit:
            break
        used += size
        keys_kept.add(call.key)
    drop_narration = len(keys_kept) < len(newest)
    kept: set[str] = set()
    first_call: list[_Call | None] = [None] * len(texts)  # per block, its newest call
    filled = [False] * len(texts)  # per block, whether an item of it is built
    for call in calls:
        if first_call[call.block] is None:
            first_call[call.block] = call
        if (
            call.key is None
            or call.protected
            or (call.key in keys_kept and newest[call.key] is call)
        ):
            kept.add(call.call.id)
            filled[call.block] = True
    kept_texts: set[int] | None = set() if drop_narration else None
    run: set[str] = asks[len(texts) - 1]  # the user texts DedupeRole will see as one run
    for block in range(len(texts) - 1, -1, -1):  # oldest first
        newer = asks[block - 1]
        text = texts[block]
        if filled[block] or (text is not None and kept_texts is None):
            run = newer
        elif run.isdisjoint(newer):
            run = run | newer  # emptied: the runs join, and DedupeRole folds nothing more
        else:  # emptied, the joined run would fold an ask: the block keeps one item
            placeholder = first_call[block]
            if placeholder is not None:  # its newest call, else its newest text
                kept.add(placeholder.call.id)
            elif text is not None and kept_texts is not None:
                kept_texts.add(text)
            run = newer
    earlier: dict[str, int] = {}
    pending: dict[Hashable, int] = {}
    for call in reversed(calls):  # oldest first: left-out calls count on the next kept one
        if call.key is None:
            continue
        if call.call.id in kept:
            waiting = pending.pop(call.key, 0)
            if waiting:
                earlier[call.call.id] = waiting
        else:
            pending[call.key] = pending.get(call.key, 0) + 1
    omitted: dict[OmittedKind, int] = {}
    for key, count in pending.items():
        kind = newest[key].kind
        omitted[kind] = omitted.get(kind, 0) + count
    if kept_texts is not None and narrated > len(kept_texts):
        omitted["narration"] = narrated - len(kept_texts)
    return _Decided(kept, earlier, kept_texts, omitted)
