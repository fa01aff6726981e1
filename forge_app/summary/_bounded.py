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

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from forge_app.summary._budget import SHORT_COMMAND, narration_kept
from forge_app.summary._build import REACH, with_last_error
from forge_app.summary._fit_cuts import LINE_CHARS, TEXT_CHARS, chars
from forge_app.summary._omission import omission_note
from forge_app.summary.transformers._keep_last_operation import operation_key
from forge_domain import ContextMessage, Role, TextMessage, ToolResult, content_text
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
    answers_text_action,
    looks_like_observation,
)
from forge_domain.tools._outcome import output_shows_error

__all__: list[str] = []  # internal: used by the compactor

SLACK = 1.5
"""How much more than the room left for plain lines is built (estimates are estimates)."""
SLACK_CHARS = 4_000
"""Characters of plain lines built beyond that, for the fit to choose from."""

_MERGEABLE = frozenset(row.kind for row in TOOL_KIND_TABLE if row.is_mergeable)

_Reading = tuple[tuple[SummaryTool, ...], bool, Hashable | None]
"""A call's tools, whether they are a command's (the first is a shell line), its plain
operation key (before its output is read)."""


@dataclass(slots=True)
class _SpanReading:
    """What :func:`_read_span` reads of a span, for :func:`_planned` to decide on.

    Calls are in parallel lists, newest first, one entry each (no object per call: a
    50,000-message span has 25,000 calls, and what lives through the plan is what the
    collector's passes walk; plans/008-performance.md round 7c)."""

    ids: list[str]
    """Each call's id."""
    indexes: list[int]
    """The position of its message in the span."""
    blocks: list[int]
    """Its assistant block, counted from the newest."""
    keys: list[Hashable | None]
    """Its plain operation key; None when it is never left out (error, file change, …)."""
    tools: list[tuple[SummaryTool, ...]]
    """What it did (its line's size and kind are read from them)."""
    protected: list[int]
    """Positions of the calls kept whatever the budget: the newest commands, read for the
    last error."""
    texts: list[int | None]
    """Per block, from the newest: the index of its newest text."""
    narrated: list[int]
    """The assistant messages with a text."""
    asks: list[str]
    """The user texts, newest first."""
    ask_starts: list[int]
    """Per block: where in :attr:`asks` the user texts older than it start (those
    between it and the next older block, then older ones)."""
    read_always: list[int]
    """User texts, and the newest message of each run of one speaker."""
    kept_chars: int
    """What the asks and the lines never left out add to the frame."""
    results: dict[str, ToolResult]
    """The span's results by call id."""

    def asks_before(self, block: int) -> tuple[int, int]:
        """Where in :attr:`asks` the user texts between ``block`` and the next older one
        are (``-1``: those newer than every block), as a ``(start, end)`` range."""
        start = 0 if block < 0 else self.ask_starts[block]
        end = self.ask_starts[block + 1] if block + 1 < len(self.ask_starts) else len(self.asks)
        return start, end


@dataclass(frozen=True, slots=True)
class NarrationBudget:
    """The cap on a summary's assistant texts that follows the build
    (:func:`~forge_app.summary._budget.drop_oldest_narration` of the transformed texts)."""

    final: Callable[[str], str]
    """What the transformers make of an assistant text (its redaction, or the text)."""
    budget: int
    """Characters of assistant text kept."""


@dataclass(frozen=True, slots=True)
class _Decided:
    """What :func:`_planned` decides: the calls and assistant texts built (None: every
    text), each built call's ``earlier``, what is left out."""

    calls: set[str]
    earlier: dict[str, int]
    texts: set[int] | None
    omitted: dict[OmittedKind, int]
    clean: set[str]
    """The calls built with a plain key: answered, and their outputs show no error."""


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
    messages: Sequence[ContextMessage],
    catalog: ToolCatalog,
    max_chars: int,
    text_limit: int,
    narration: NarrationBudget | None = None,
    joined: bool = False,
) -> ContextSummary:
    """:func:`~forge_app.summary._build.build_summary` of ``messages`` for a frame of
    ``max_chars``, built from what :func:`plan_span` selects (the whole span when it is
    None); ``narration``: the cap its caller puts on the assistant texts, which then builds
    none of those it is certain to drop (see :func:`plan_span`); ``joined``: for a caller
    that joins runs of one role's blocks (``ContextSummary.from_messages``)."""
    classifier = catalog.classifier()
    plan = plan_span(messages, catalog, classifier, max_chars, text_limit, narration)
    if plan is None:
        summary = ContextSummary.from_messages(
            messages, catalog, classifier=classifier, joined=joined
        )
    else:
        summary = plan.noted(
            ContextSummary.from_messages(
                messages, catalog, classifier=classifier, selection=plan.selection, joined=joined
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
            size += min(len(tool.command), SHORT_COMMAND + 2) + LINE_CHARS
        else:
            size += chars(tool)
        size += 2 * LINE_CHARS
    return size


def plan_span(
    messages: Sequence[ContextMessage],
    catalog: ToolCatalog,
    classifier: CallClassifier,
    max_chars: int,
    text_limit: int,
    narration: NarrationBudget | None = None,
) -> SpanPlan | None:
    """What to build of ``messages`` for a frame of ``max_chars`` (see the module); None
    when the span is to be built as it is.

    With ``narration`` (the cap the caller puts on the transformed assistant texts, cut to
    ``text_limit``), the texts older than the newest one that cap drops are not built
    (:func:`_narration_built`), counted in the note as the cap counts them."""
    reading = _read_span(messages, catalog, classifier, text_limit)
    if reading is None:
        return None
    narration_built = (
        _narration_built(messages, reading, narration, text_limit)
        if narration is not None
        else None
    )
    decided = _planned(reading, max_chars - reading.kept_chars, narration_built)
    kept, kept_texts = decided.calls, decided.texts
    visit = set(reading.read_always)  # and every message that builds an item
    visit.update(reading.narrated if kept_texts is None else kept_texts)
    ids = reading.ids
    visit.update(index for position, index in enumerate(reading.indexes) if ids[position] in kept)
    selection = Selection(
        kept, decided.earlier, kept_texts, sorted(visit), reading.results, decided.clean
    )
    return SpanPlan(selection, decided.omitted)


def _read_span(
    messages: Sequence[ContextMessage],
    catalog: ToolCatalog,
    classifier: CallClassifier,
    text_limit: int,
) -> _SpanReading | None:
    """One walk over ``messages``, newest first: each call's tools and plain operation key
    (from ``classifier``; a pure call read once), whether its output shows an error, the
    blocks, texts and asks; None for a span with text-protocol turns (:func:`text_turns`),
    a call without an id or two calls sharing one."""
    results: dict[str, ToolResult] = {}  # the newest of each id, walked before its call
    ids: list[str] = []
    indexes: list[int] = []
    blocks: list[int] = []
    keys: list[Hashable | None] = []
    tools_of: list[tuple[SummaryTool, ...]] = []
    protected: list[int] = []
    texts: list[int | None] = []
    narrated: list[int] = []
    asks: list[str] = []
    ask_starts: list[int] = []
    read_always: list[int] = []
    seen_ids: set[str] = set()
    kept_chars = 0  # asks, and lines never left out
    shell_seen = 0
    # Per tool name, the reading of each pure call by its arguments (``impure``, never
    # written, for a name whose calls are read one by one); per pure call's tools (by
    # identity: they stay alive in ``tools_of``, and the classifier gives one tuple to the
    # calls of one file), that same reading: its tools, plain key and whether it is a command.
    read: dict[str, dict[str, _Reading]] = {}
    impure: dict[str, _Reading] = {}
    by_tools: dict[int, _Reading] = {}
    inferring = catalog.failure_inference == "output"
    in_block = False
    speaker: Role | None = None  # of the run walked, as from_messages' blocks see runs
    newer: TextMessage | None = None  # the last non-system text message walked
    system, assistant = Role.SYSTEM, Role.ASSISTANT  # (an enum's member is slow to look up)
    # A call's results are newer than it in a valid span, so the walk has them when it reads
    # the call; a result out of place leaves its call without one, which keeps the call.
    add_id, find_result, find_reading = seen_ids.add, results.get, read.get
    add_index, add_block, add_key, add_tools = (
        indexes.append,
        blocks.append,
        keys.append,
        tools_of.append,
    )
    for index in range(len(messages) - 1, -1, -1):  # newest first, for the REACH
        message = messages[index]
        if type(message) is not TextMessage:
            if type(message) is ToolResult and message.call_id:
                results.setdefault(message.call_id, message)
            continue
        role = message.role
        if role == system:
            continue
        tool_calls = message.tool_calls
        if role == assistant and not tool_calls and answers_text_action(message, newer):
            return None  # a text-protocol action and its answer: built as they are
        newer = message
        if role != speaker and not is_only_media(message):
            speaker = role
            read_always.append(index)
        if role != assistant:
            read_always.append(index)
            ask = message.text
            kept_chars += min(len(ask), text_limit) + TEXT_CHARS
            asks.append(ask)
            in_block = False
            continue
        if not in_block:
            texts.append(None)
            ask_starts.append(len(asks))
            in_block = True
        block = len(texts) - 1
        content = message.content  # message.text, without building it for a test
        if content if type(content) is str else content is not None and content_text(content):
            narrated.append(index)
            if texts[block] is None:
                texts[block] = index
        if not tool_calls:
            continue
        for call in reversed(tool_calls):
            call_id = call.id
            if not call_id or call_id in seen_ids:
                return None
            add_id(call_id)
            result = find_result(call_id)
            name = call.name
            by_arguments = find_reading(name)
            if by_arguments is None:
                by_arguments = read[name] = {} if classifier.is_pure(name) else impure
            reading = by_arguments.get(call.arguments)  # a pure call read before
            if reading is None:
                if by_arguments is impure:  # its tools may depend on its output
                    tools = classifier.tools(call, None if result is None else result.text, ())
                    key = _plain_key(tools)
                    if key is not None and classifier.written_todos(call) is not None:
                        key = None  # a todo writer is never left out
                    reading = (tools, tools[0].kind == "shell", key)
                else:
                    tools = classifier.tools(call)
                    reading = by_tools.get(id(tools))
                    if reading is None:
                        reading = by_tools[id(tools)] = (
                            tools,
                            tools[0].kind == "shell",
                            _plain_key(tools),
                        )
                    by_arguments[call.arguments] = reading
            tools, shell, key = reading
            if key is not None:
                if result is None or result.is_error:
                    key = None
                elif inferring:
                    output = result.content
                    if output_shows_error(output if type(output) is str else content_text(output)):
                        key = None
            if shell:
                shell_seen += 1
                if shell_seen <= REACH:
                    protected.append(len(ids))
            if key is None:
                kept_chars += _line_size(tools)
            ids.append(call_id)
            add_index(index)
            add_block(block)
            add_key(key)
            add_tools(tools)
    if newer is not None and newer.role != assistant and looks_like_observation(newer.text):
        return None  # the span starts with the answer to an action before it
    return _SpanReading(
        ids,
        indexes,
        blocks,
        keys,
        tools_of,
        protected,
        texts,
        narrated,
        asks,
        ask_starts,
        read_always,
        kept_chars,
        results,
    )


def _narration_built(
    messages: Sequence[ContextMessage],
    reading: _SpanReading,
    narration: NarrationBudget,
    text_limit: int,
) -> set[int] | None:
    """The assistant texts (by message index) built when :func:`_planned` builds every text
    but those ``narration`` is certain to drop: the newest texts it keeps, the newest one
    it drops, and the oldest text; None when that leaves none out.

    :func:`~forge_app.summary._budget.drop_oldest_narration` drops the oldest texts while
    the rest is over its budget, so the texts older than the newest one it drops go
    whatever they read (:func:`~forge_app.summary._budget.narration_certain_to_go`). The
    newest one it drops and the oldest stay built, for it to drop: its omission note goes
    where the oldest text was, and counts the plan's note (first in the first assistant
    block: that text's block, as no call is older than it). None (all built) when a call
    is older than the oldest text."""
    narrated = reading.narrated  # newest first
    if len(narrated) < 3 or (reading.indexes and min(reading.indexes) < narrated[-1]):
        return None  # too few texts to leave one out, or a call before them
    texts = (messages[index].text for index in narrated)
    kept = narration_kept(texts, narration.final, text_limit, narration.budget)
    if kept + 2 >= len(narrated):
        return None  # none left out
    return {*narrated[: kept + 1], narrated[-1]}


def _planned(reading: _SpanReading, room: int, narration_built: set[int] | None = None) -> _Decided:
    """The plan, given the span's reading, the room left for plain lines, and the
    assistant texts built when every text would be (:func:`_narration_built`; None: every
    one). The oldest text is one of them."""
    ids, blocks, keys, tools = reading.ids, reading.blocks, reading.keys, reading.tools
    texts, asks = reading.texts, reading.asks
    newest: dict[Hashable, int] = {}  # per plain key, the position of its newest call
    first = newest.setdefault
    for position, key in enumerate(keys):
        if key is not None:
            first(key, position)
    keys_kept: set[Hashable] = set()
    used = 0
    limit = room * SLACK + SLACK_CHARS
    for key, position in newest.items():  # newest first
        size = _line_size(tools[position])
        if used + size > limit:
            break
        used += size
        keys_kept.add(key)
    drop_narration = len(keys_kept) < len(newest)
    kept: set[str] = set()
    clean: set[str] = set()  # of ``kept``, those with a plain key
    filled = [False] * len(texts)  # per block, whether an item of it is built
    first_call: list[int | None] = [None] * len(texts)  # per block, its newest call
    for position in range(len(ids) - 1, -1, -1):
        first_call[blocks[position]] = position
    for position, key in enumerate(keys):
        if key is None:
            kept.add(ids[position])
            filled[blocks[position]] = True
        elif key in keys_kept and newest[key] == position:
            kept.add(ids[position])
            clean.add(ids[position])
            filled[blocks[position]] = True
    for position in reading.protected:
        kept.add(ids[position])
        if keys[position] is not None:
            clean.add(ids[position])
        filled[blocks[position]] = True
    kept_texts: set[int] | None = set() if drop_narration else None
    narrated = reading.narrated
    if kept_texts is None and narration_built is not None:
        kept_texts = set(narration_built)
        filled[max(b for b, text in enumerate(texts) if text is not None)] = True  # the oldest's
    # The user texts DedupeRole will see as one run: asks[start:run_end] (runs joined
    # across emptied blocks are neighbours in ``asks``, so a run is always one range).
    # ``in_run`` holds asks[run_from:run_end], grown as the walk reaches newer asks (a set
    # of the whole run per emptied block was quadratic in a chat whose every block goes).
    run_end = run_from = len(asks)
    in_run: set[str] = set()
    for block in range(len(texts) - 1, -1, -1):  # oldest first
        start, end = reading.asks_before(block - 1)  # the user texts newer than ``block``
        text = texts[block]
        if filled[block] or (text is not None and (kept_texts is None or text in kept_texts)):
            run_end = run_from = end
            in_run = set()
            continue
        if end not in (start, run_end):
            in_run.update(asks[end:run_from])
            run_from = end
        if end in (start, run_end) or in_run.isdisjoint(asks[start:end]):
            pass  # emptied: the runs join, and DedupeRole folds nothing more
        else:  # emptied, the joined run would fold an ask: the block keeps one item
            placeholder = first_call[block]
            if placeholder is not None:  # its newest call, else its newest text
                kept.add(ids[placeholder])
                clean.add(ids[placeholder])  # plain: a block with a keyless call is filled
            elif text is not None and kept_texts is not None:
                kept_texts.add(text)
            run_end = run_from = end
            in_run = set()
    earlier: dict[str, int] = {}
    pending: dict[Hashable, int] = {}
    for position in range(len(ids) - 1, -1, -1):  # oldest first: left-out calls count on
        key = keys[position]  # the next kept one
        if key is None:
            continue
        call_id = ids[position]
        if call_id in kept:
            waiting = pending.pop(key, 0)
            if waiting:
                earlier[call_id] = waiting
        else:
            pending[key] = pending.get(key, 0) + 1
    omitted: dict[OmittedKind, int] = {}
    for key, count in pending.items():
        kind = tools[newest[key]][0].kind
        omitted[kind] = omitted.get(kind, 0) + count
    if kept_texts is not None and len(narrated) > len(kept_texts):
        omitted["narration"] = len(narrated) - len(kept_texts)
    return _Decided(kept, earlier, kept_texts, omitted, clean)
