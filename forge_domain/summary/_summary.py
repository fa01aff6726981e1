"""The structured summary of a span of conversation, built without calling a model.

A :class:`ContextSummary` is a list of role blocks. Each block holds text items and
one item per tool call (kind, resource, success). It is built exactly as forge
builds its ``ContextSummary`` (forge-spec §9):

* system messages are skipped, and do not end a block (``U S U`` is one user block);
* consecutive messages of one role merge into one block; tool results never end a
  block, so an assistant's calls and later assistant messages stay together;
* a call succeeded when its result is not an error (the catalog may also read the
  failure from the output text of agents that report exit codes in it,
  :mod:`forge_domain.tools._outcome`), and a failed call keeps a short excerpt of its
  output as evidence;
* a text-protocol agent's action and the user message answering it are summarised as
  a call and its result (:mod:`forge_domain.tools._text_protocol`);
* ``todo_write`` calls record what they changed in the todo list (§9.2);
* messages holding only images (or other non-text parts) are ignored.

Three fields go beyond forge, all with defaults that mean "nothing happened", so
summaries stored before them still validate: a :class:`ToolCallItem` may stand for
several calls of one operation (``earlier``, ``earlier_failures``) and keep the evidence
of a failure (``evidence``), and a :class:`TextItem` may be the note a budgeted summary
leaves where it dropped detail (``omitted``). None appears in forge's serde shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Annotated, Literal, Protocol, Self, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from forge_domain._json import JsonObject, JsonValue
from forge_domain._messages import ContextMessage, Role, TextMessage, ToolCall, ToolResult
from forge_domain._unvalidated import built as unvalidated
from forge_domain._unvalidated import key_sharing
from forge_domain.summary._selection import Selection, is_only_media
from forge_domain.tools._catalog import CallClassifier, ToolCatalog
from forge_domain.tools._kinds import (
    GenericTool,
    ShellTool,
    SummaryTool,
    ToolKind,
    tool_from_forge,
    tool_to_forge,
)
from forge_domain.tools._outcome import merged_evidence
from forge_domain.tools._text_protocol import NO_TURNS, text_turns
from forge_domain.tools._todo import Todo, apply_todos

__all__ = [
    "ContextSummary",
    "SummaryBlock",
    "SummaryItem",
    "TextItem",
    "ToolCallItem",
]  # built_once: for forge_app's compactor

_FROZEN = ConfigDict(frozen=True, extra="forbid")
EARLIER_ACTION = "(answer to the action above)"
"""The tool name of the line an observation gets when its action was summarised before it."""
_ROLES_BY_TITLE = {role.title: role for role in Role}


OmittedKind: TypeAlias = ToolKind | Literal["narration", "repeated_ask", "ask"]
"""What an omission note counts: calls of a tool kind, assistant texts (``narration``),
user texts said again later (``repeated_ask``), or the oldest user asks, when even cut
they would not fit (``ask``)."""


class TextItem(BaseModel):
    """Text written by the block's role, or a note of what a budgeted summary left out."""

    model_config = _FROZEN

    kind: Literal["text"] = "text"
    text: str
    """The text, verbatim (for a note: the note as rendered, made from ``omitted``)."""
    omitted: tuple[tuple[OmittedKind, PositiveInt], ...] = ()
    """Set only on an omission note: how many entries of each kind were left out."""

    @property
    def is_omission(self) -> bool:
        """True for the note a budgeted summary puts where it left detail out."""
        return bool(self.omitted)


_TEXT_ITEM_FIELDS = key_sharing({"kind": "text", "text": "", "omitted": ()})
_TEXT_ITEM_SET = {"text"}
"""A built text item's fields (its text replaced) and fields set, shared: what
``TextItem(text=...)`` holds."""
if tuple(TextItem.model_fields) != tuple(_TEXT_ITEM_FIELDS):  # pragma: no cover
    raise TypeError("TextItem changed: text_item must follow it")


def text_item(text: str) -> TextItem:
    """``TextItem(text=text)`` without its validation (``text`` is a message's text, a
    string): a long chat's summary builds one per ask, tens of thousands, at 192 bytes
    each instead of 488 (the fields set shared, the fields' dict sharing its keys)."""
    fields = _TEXT_ITEM_FIELDS.copy()
    fields["text"] = text
    return unvalidated(TextItem, fields, _TEXT_ITEM_SET)


class _MergedCalls(Protocol):
    """Calls of one operation counted together: a :class:`ToolCallItem`, or a running
    count of several (what :meth:`ToolCallItem.with_earlier` reads)."""

    @property
    def calls(self) -> int:
        """How many calls."""

    @property
    def failures(self) -> int:
        """How many of them failed."""

    @property
    def evidence(self) -> str | None:
        """Their evidence, newest first (:func:`merged_evidence`)."""


class ToolCallItem(BaseModel):
    """One tool call and how it went; or one line standing for repeats of one operation."""

    model_config = _FROZEN

    kind: Literal["tool_call"] = "tool_call"
    id: str | None
    """The call id, when the call had one (of the last call, for a merged line)."""
    tool: SummaryTool
    """What the call did."""
    is_success: bool
    """True when a result answered the (last) call and did not report a failure."""
    earlier: int = Field(default=0, ge=0)
    """Calls of the same operation merged into this line before the last one."""
    earlier_failures: int = Field(default=0, ge=0)
    """How many of the ``earlier`` calls failed."""
    evidence: str | None = None
    """A short excerpt of the output that shows the last failure of the calls this line
    stands for (the error line, the end of a traceback, failing tests, the exit code); or
    the traceback a call that did not fail printed. None when no output showed an error."""

    @model_validator(mode="after")
    def _failures_within_earlier(self) -> Self:
        if self.earlier_failures > self.earlier:
            raise ValueError(
                f"earlier_failures must be at most earlier ({self.earlier}), "
                f"got {self.earlier_failures}"
            )
        return self

    @property
    def calls(self) -> int:
        """How many calls this line stands for."""
        return self.earlier + 1

    @property
    def failures(self) -> int:
        """How many of those calls failed, the last one included."""
        return self.earlier_failures + (0 if self.is_success else 1)

    def with_earlier(self, previous: _MergedCalls) -> ToolCallItem:
        """This line with ``previous`` (and every call it stands for) counted as earlier calls.

        The id, tool and status stay this line's: it is the last call. The evidence is this
        line's, then the earlier ones said differently (:func:`merged_evidence`), so a
        failure a later pass or another failure followed keeps its error.
        """
        return ToolCallItem(
            id=self.id,
            tool=self.tool,
            is_success=self.is_success,
            earlier=self.earlier + previous.calls,
            earlier_failures=self.earlier_failures + previous.failures,
            evidence=merged_evidence(self.evidence, previous.evidence),
        )


SummaryItem: TypeAlias = Annotated[TextItem | ToolCallItem, Field(discriminator="kind")]
"""One entry of a block."""


class SummaryBlock(BaseModel):
    """What one role contributed, in order, between two changes of speaker."""

    model_config = _FROZEN

    role: Role
    """Who spoke."""
    contents: tuple[SummaryItem, ...]
    """Texts and tool calls, in the order they happened."""

    def to_forge_json(self) -> JsonObject:
        """Forge's serde shape: ``{role: "User", contents: [{text} | {tool_call}]}``."""
        contents: list[JsonValue] = [_item_to_forge(item) for item in self.contents]
        return {"role": self.role.title, "contents": contents}


@dataclass
class _Built:
    """The text items and one-item blocks built so far for messages (see :func:`built_once`)."""

    items: dict[int, tuple[TextMessage, str, TextItem]] = field(default_factory=dict)
    """Per message (by id, kept alive here): its text and the item built of it."""
    blocks: dict[int, tuple[TextItem, Role, SummaryBlock]] = field(default_factory=dict)
    """Per such item (by id, kept alive here): the block of that item alone, and its role."""

    def item(self, message: TextMessage, text: str) -> TextItem:
        """The item of ``message``'s ``text``: the one built before, if any."""
        seen = self.items.get(id(message))
        if seen is not None and seen[0] is message and seen[1] == text:
            return seen[2]
        item = text_item(text)
        self.items[id(message)] = (message, text, item)
        return item

    def block(self, role: Role, contents: list[SummaryItem]) -> SummaryBlock:
        """The block of ``contents``: the one built before when it is one such item."""
        if len(contents) != 1:
            return SummaryBlock(role=role, contents=tuple(contents))
        only = contents[0]
        seen = self.blocks.get(id(only))
        if seen is not None and seen[0] is only and seen[1] == role:
            return seen[2]
        block = SummaryBlock(role=role, contents=(only,))
        if type(only) is TextItem:  # (a text item is one of the items above)
            self.blocks[id(only)] = (only, role, block)
        return block


_BUILT: ContextVar[_Built | None] = ContextVar("forge_summary_built", default=None)
"""The items and blocks built in the current :func:`built_once` block (None outside one)."""


@contextmanager
def built_once() -> Iterator[None]:
    """Within this block, :meth:`ContextSummary.from_messages` builds the text item of a
    message, and a block of that item alone, once: a summary of a span sharing messages
    with one built before re-uses them (equal values, the same objects).

    A compaction that fits a budget summarises spans that share their start (a message
    less or more at the end): the second summary of a 40,000-message chat builds nothing
    new (plans/008-performance.md, round 7b). What was built is forgotten when the
    outermost block ends; a nested block shares the outer one.
    """
    if _BUILT.get() is not None:
        yield
        return
    token = _BUILT.set(_Built())
    try:
        yield
    finally:
        _BUILT.reset(token)


class ContextSummary(BaseModel):
    """The role blocks of a summarised span, oldest first."""

    model_config = _FROZEN

    blocks: tuple[SummaryBlock, ...] = ()
    """The blocks; never empty ones, never system ones when built from messages."""

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[ContextMessage],
        catalog: ToolCatalog | None = None,
        *,
        classifier: CallClassifier | None = None,
        selection: Selection | None = None,
        joined: bool = False,
    ) -> ContextSummary:
        """Summarise ``messages`` (forge-spec §9); ``catalog`` classifies the tool calls.

        A text-protocol agent's action and the user message answering it
        (:func:`~forge_domain.tools._text_protocol.text_turns`) are summarised like a call and
        its result: the action leaves the assistant's text and becomes its call items, the
        observation is their output. An observation stays a user text too only when nothing
        but its place marks it as one and it shows no outcome (a person's reply to an
        assistant that ended with a command reads like that). An action whose answer comes
        after ``messages`` has no status; an answer whose action came before them is kept
        only when it shows an error (:data:`EARLIER_ACTION`). ``classifier`` is one of
        ``catalog``'s already used for these calls (its classifications are reused).

        ``selection`` builds only the calls and assistant texts it names (a span without
        text-protocol turns: see :class:`Selection`); blocks start and end where they would
        without it. ``joined``: blocks of one role with nothing built between them are one
        block, as :meth:`of_blocks` joins them (for a caller that joins them anyway: a long
        chat's asks, the assistant's texts left out, are one block instead of one each).
        """
        catalog = catalog if catalog is not None else ToolCatalog.default()
        classifier = classifier if classifier is not None else catalog.classifier()
        results = (
            selection.results
            if selection is not None and selection.results is not None
            else {m.call_id: m for m in messages if isinstance(m, ToolResult) and m.call_id}
        )
        turns = text_turns(messages) if selection is None else NO_TURNS
        outputs: dict[int, ToolResult] = {}  # per text action answered in ``messages``
        skipped: set[int] = set()  # observations summarised with their action only
        for index, answered in turns.answered.items():
            if answered.observation is None:
                continue
            answer = ToolResult(call_id="", content=messages[answered.observation].text)
            outputs[index] = answer
            if answered.marked or catalog.outcome(answer) != "unknown":
                skipped.add(answered.observation)
        memo = _BUILT.get()
        runs: list[tuple[Role, list[SummaryItem]]] = []  # each block's role and items
        role = Role.SYSTEM
        buffer: list[SummaryItem] = []
        todos: tuple[Todo, ...] = ()
        visit = selection.visit if selection is not None else None
        # Joined, an assistant message whose text is not built and that has no call builds
        # nothing and ends no run: it is passed over (most of a long chat's).
        quiet = selection.texts if joined and selection is not None else None
        system, assistant = Role.SYSTEM, Role.ASSISTANT  # (an enum's member is slow to look up)
        for index in range(len(messages)) if visit is None else visit:
            message = messages[index]
            if not isinstance(message, TextMessage) or message.role == system:
                continue
            if (
                quiet is not None
                and message.role == assistant
                and not message.tool_calls
                and index not in quiet
            ):
                continue
            if index in skipped or is_only_media(message):
                continue
            speaker = Role.ASSISTANT if index in turns.orphans else message.role
            if speaker != role:
                if buffer:
                    if joined and runs and runs[-1][0] == role:
                        runs[-1][1].extend(buffer)
                    else:
                        runs.append((role, buffer))
                buffer = []
                role = speaker
            if index in turns.orphans:
                buffer.extend(_earlier_action(catalog, message.text))
                continue
            turn = turns.answered.get(index)
            if selection is None or selection.has_text(index, speaker):  # (text read if so)
                text = message.text if turn is None else turn.action.narration
                if text:
                    buffer.append(text_item(text) if memo is None else memo.item(message, text))
            tool_calls = message.tool_calls
            if not tool_calls and turn is None:
                continue  # no call: nothing more (most messages of a chat)
            calls = list(tool_calls or ())
            if selection is not None:  # a call left out writes no todo list (it is plain)
                calls = [call for call in calls if call.id in selection.calls]
            for call in calls:
                earlier, clean = 0, False
                if selection is not None:
                    earlier, clean = selection.earlier.get(call.id, 0), call.id in selection.clean
                result = results.get(call.id) if call.id else None
                buffer.extend(
                    _call_items(catalog, classifier, call, result, todos, earlier, clean=clean)
                )
            if turn is not None:
                calls.append(turn.action.call)
                output = outputs.get(index)
                items = _call_items(catalog, classifier, turn.action.call, output, todos)
                if output is None:  # answered after ``messages``: no status yet
                    items = [item.model_copy(update={"is_success": True}) for item in items]
                buffer.extend(items)
            for call in calls:
                written = classifier.written_todos(call)
                if written is not None:
                    todos = apply_todos(todos, written)
        if buffer:
            if joined and runs and runs[-1][0] == role:
                runs[-1][1].extend(buffer)
            else:
                runs.append((role, buffer))
        blocks = (
            [SummaryBlock(role=role, contents=tuple(items)) for role, items in runs]
            if memo is None
            else [memo.block(role, items) for role, items in runs]
        )
        return cls(blocks=tuple(blocks))

    @classmethod
    def of_blocks(cls, blocks: Iterable[SummaryBlock]) -> ContextSummary:
        """A summary of ``blocks`` with empty ones left out and each run of one role's
        blocks joined into one, as :meth:`from_messages` would have built it: for blocks
        of several summaries folded together, or left after items were dropped."""
        joined: list[SummaryBlock] = []  # one per run: its block, or its blocks joined
        run: list[SummaryBlock] = []  # the blocks of the last run, when it has several
        for block in blocks:
            if not block.contents:
                continue
            if joined and joined[-1].role == block.role:
                if not run:
                    run.append(joined[-1])
                run.append(block)
                continue
            if run:
                joined[-1] = _joined(run)
                run = []
            joined.append(block)
        if run:
            joined[-1] = _joined(run)
        return cls(blocks=tuple(joined))

    def tool_calls(self) -> Iterator[ToolCallItem]:
        """Every tool-call item, in order."""
        for block in self.blocks:
            for item in block.contents:
                if isinstance(item, ToolCallItem):
                    yield item

    def to_forge_json(self) -> list[JsonValue]:
        """Forge's serde shape of the summary (the ``messages`` its template receives)."""
        return [block.to_forge_json() for block in self.blocks]

    @classmethod
    def from_forge_json(cls, blocks: Sequence[JsonValue]) -> ContextSummary:
        """Parse forge's serde shape (the inverse of :meth:`to_forge_json`).

        Raises:
            ValueError: when a block, item or tool is not in forge's shape.
        """
        return cls(blocks=tuple(_block_from_forge(raw) for raw in blocks))


def _earlier_action(catalog: ToolCatalog, output: str) -> list[ToolCallItem]:
    """The line of an observation whose action came before the summarised messages: kept
    only when it shows an error (the action's own line, in the record before, has no
    status)."""
    result = ToolResult(call_id="", content=output)
    outcome = catalog.outcome(result, output)
    evidence = catalog.evidence(result, output, outcome)
    if outcome != "failed" and evidence is None:
        return []
    tool = GenericTool(name=EARLIER_ACTION)
    return [ToolCallItem(id=None, tool=tool, is_success=outcome != "failed", evidence=evidence)]


def _call_items(
    catalog: ToolCatalog,
    classifier: CallClassifier,
    call: ToolCall,
    result: ToolResult | None,
    todos: Sequence[Todo],
    earlier: int = 0,
    *,
    clean: bool = False,
) -> list[ToolCallItem]:
    """The items of one call: its outcome (a call with no result has failed, as in forge)
    and evidence on each, except on the files a shell command was read to write: the
    command's exit status is not theirs (``cat > f <<EOF … && pytest``), so they carry none.
    ``earlier`` counts calls of the same operation left out before it (on its first item);
    ``clean``: its result is known to show no error (:attr:`Selection.clean`)."""
    if result is None:
        output, success, evidence = None, False, None
    elif clean:  # what the outcome and the evidence of such an output are
        output, success, evidence = result.text, True, None
    else:
        output = result.text
        outcome = catalog.outcome(result, output)
        success, evidence = outcome != "failed", catalog.evidence(result, output, outcome)
    tools = classifier.tools(call, output, todos)
    from_command = isinstance(tools[0], ShellTool)
    items = [
        ToolCallItem(id=call.id or None, tool=tool, is_success=success, evidence=evidence)
        if position == 0 or not from_command
        else ToolCallItem(id=call.id or None, tool=tool, is_success=True)
        for position, tool in enumerate(tools)
        if position or not earlier
    ]
    if earlier:
        first = ToolCallItem(
            id=call.id or None,
            tool=tools[0],
            is_success=success,
            evidence=evidence,
            earlier=earlier,
        )
        items.insert(0, first)
    return items


def _joined(run: list[SummaryBlock]) -> SummaryBlock:
    """One block of the items of ``run`` (blocks of one role), or its only block as it is."""
    if len(run) == 1:
        return run[0]
    return run[0].model_copy(update={"contents": tuple(i for b in run for i in b.contents)})


def _item_to_forge(item: SummaryItem) -> JsonObject:
    if isinstance(item, TextItem):
        return {"text": item.text}
    call: JsonObject = {
        "id": item.id,
        "tool": tool_to_forge(item.tool),
        "is_success": item.is_success,
    }
    return {"tool_call": call}


def _item_from_forge(raw: JsonValue) -> SummaryItem:
    if isinstance(raw, dict) and isinstance(raw.get("text"), str):
        return TextItem(text=cast(str, raw["text"]))
    if isinstance(raw, dict) and isinstance(raw.get("tool_call"), dict):
        call = cast(JsonObject, raw["tool_call"])
        call_id = call.get("id")
        return ToolCallItem(
            id=call_id if isinstance(call_id, str) else None,
            tool=tool_from_forge(call.get("tool")),
            is_success=call.get("is_success") is True,
        )
    raise ValueError(f"not a forge summary item: {raw!r}")


def _block_from_forge(raw: JsonValue) -> SummaryBlock:
    if not isinstance(raw, dict) or not isinstance(raw.get("contents"), list):
        raise ValueError(f"not a forge summary block: {raw!r}")
    role = _ROLES_BY_TITLE.get(str(raw.get("role")))
    if role is None:
        raise ValueError(f"unknown role in forge summary block: {raw.get('role')!r}")
    contents = cast(list[JsonValue], raw["contents"])
    return SummaryBlock(role=role, contents=tuple(_item_from_forge(item) for item in contents))
