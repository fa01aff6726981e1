"""Splicing a compacted context back into a framework's own history.

A framework's history is a list of its own items (pydantic-ai messages,
LangChain messages, Responses items). Each item converts to zero or more of our
messages; the engine compacts the flattened :class:`Context`; :meth:`History.splice`
then says, item by item, what the compacted context kept:

- :class:`Kept`: every message of the item survived untouched, so the original
  object goes back (with its ids, timestamps and metadata);
- :class:`Rebuilt`: some of its messages survived, or survived changed (a pruned
  tool output keeps its call id and is matched by it); the adapter rebuilds the
  item from the original and these messages;
- :class:`Added`: messages the engine wrote (the summary), in a new item;
- :class:`Dropped`: the item was compacted away, at the place it held (an
  adapter may carry framework state from it, such as pydantic-ai's instruction
  deltas, into the next item).

An item that converts to no message (framework metadata only) travels with the
message after it: it is kept when that message is, dropped otherwise.
Segments come in output order.

The converters share their reading rules too (:class:`Head`, :func:`user_prompt`,
:func:`assistant_turn`, :func:`reported_usage`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from forge_domain import Context, ContextMessage, Role, TextMessage, ToolCall, ToolResult, Usage

T = TypeVar("T")

__all__: list[str] = []  # the adapters' shared machinery, not an API

EMPTY_PROMPT = "[empty prompt]"
"""The text of a user prompt that has none (an image alone, an empty string)."""


class Head:
    """Where a history's head ends: system messages after it are read as user messages.

    Only the system messages before the first other message are the head (the
    instructions); one that comes later is context like any other.
    """

    def __init__(self) -> None:
        self.started = False
        """Whether a message other than a system message has been read."""

    def system(self, text: str) -> TextMessage:
        """A system message with ``text``: in the head, or a user message after it."""
        return TextMessage(role=Role.USER if self.started else Role.SYSTEM, content=text)

    def read(self, message: ContextMessage) -> None:
        """``message`` was read: the head ends at the first message that is not a system one."""
        self.started = self.started or not (
            isinstance(message, TextMessage) and message.role == Role.SYSTEM
        )


def user_prompt(text: str) -> TextMessage:
    """A user message with ``text``, or :data:`EMPTY_PROMPT` (providers refuse empty ones)."""
    return TextMessage.user(text or EMPTY_PROMPT)


def assistant_turn(
    texts: Sequence[str], calls: tuple[ToolCall, ...], usage: Usage | None
) -> TextMessage | None:
    """An assistant message of ``texts`` (one per line) and ``calls``; None when it has neither."""
    if not calls and not "".join(texts):
        return None
    return TextMessage.assistant("\n".join(texts) or None, calls or None, usage=usage)


def calls_kept_whole(cut: int, count: int, is_tool_result: Callable[[int], bool]) -> int:
    """``cut`` (an item index of ``count``) moved back while it lands on a tool result: the
    verbatim tail then starts at the call, kept with its results (a provider rejects results
    without their call)."""
    while 0 < cut < count and is_tool_result(cut):
        cut -= 1
    return cut


def reported_usage(input_tokens: int, output_tokens: int) -> Usage | None:
    """The usage a provider reported, so token triggers see real counts; None without input."""
    if input_tokens <= 0:
        return None
    return Usage.reported(prompt_tokens=input_tokens, completion_tokens=output_tokens)


@dataclass(frozen=True, slots=True)
class Kept(Generic[T]):
    """Item ``index`` survived whole: send ``item``, the original object."""

    index: int
    item: T


@dataclass(frozen=True, slots=True)
class Rebuilt(Generic[T]):
    """Item ``index`` survived in part or changed.

    ``messages`` are the compacted context's messages from it, in order;
    ``sources[n]`` is the position of ``messages[n]`` among the item's own
    converted messages, and ``unchanged[n]`` says whether it is that very message.
    """

    index: int
    item: T
    messages: tuple[ContextMessage, ...]
    sources: tuple[int, ...]
    unchanged: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Added:
    """Messages the engine wrote (a summary): build new items for them."""

    messages: tuple[ContextMessage, ...]


@dataclass(frozen=True, slots=True)
class Dropped(Generic[T]):
    """Item ``index`` was compacted away here."""

    index: int
    item: T


Segment = Kept[T] | Rebuilt[T] | Added | Dropped[T]
"""What the compacted context holds, one framework item (or one run of new messages) at a time."""


class History(Generic[T]):
    """A framework's items, their conversion to our messages, and the way back."""

    def __init__(
        self,
        items: Sequence[T],
        convert: Callable[[int, T], Sequence[ContextMessage]],
        restore: Callable[[ContextMessage], ContextMessage] = lambda message: message,
    ) -> None:
        """Convert ``items`` with ``convert(index, item)`` (which raises on what it cannot read).

        ``restore`` completes each converted message (a summary gets its structure back).
        """
        self.items = tuple(items)
        self.converted = tuple(
            tuple(restore(message) for message in convert(index, item))
            for index, item in enumerate(items)
        )
        messages: list[ContextMessage] = []
        self._owner: list[tuple[int, int]] = []
        self._first: list[int] = []
        for index, group in enumerate(self.converted):
            self._first.append(len(messages))
            for position, message in enumerate(group):
                messages.append(message)
                self._owner.append((index, position))
        self.context = Context(messages)
        """The items as one context, in order."""
        self._by_identity = {id(message): flat for flat, message in enumerate(messages)}
        self._results: dict[str, int] = {}
        self._calls: dict[str, int] = {}
        for flat, message in enumerate(messages):
            if isinstance(message, ToolResult):
                self._results.setdefault(message.call_id, flat)
            elif message.tool_calls:
                self._calls.setdefault(message.tool_calls[0].id, flat)

    def _source(self, message: ContextMessage) -> tuple[int | None, bool]:
        flat = self._by_identity.get(id(message))
        if flat is not None and self.context[flat] is message:
            return flat, True
        if isinstance(message, ToolResult):
            return self._results.get(message.call_id), False
        if isinstance(message, TextMessage) and message.tool_calls:
            return self._calls.get(message.tool_calls[0].id), False
        return None, False

    def _sources(self, output: Context) -> list[tuple[int | None, bool]]:
        """Each output message's flat source index (None: new), kept strictly increasing."""
        sources: list[tuple[int | None, bool]] = []
        last = -1
        for message in output:
            flat, same = self._source(message)
            if flat is None or flat <= last:
                sources.append((None, False))
                continue
            sources.append((flat, same))
            last = flat
        return sources

    def cut(self, index: int) -> int:
        """The index in :attr:`context` where item ``index`` starts (an item's cut point)."""
        return self._anchor(index) if index > 0 else 0

    def _anchor(self, index: int) -> int:
        """The flat index an item is placed by: its first message, or the next item's."""
        for later in range(index, len(self.items)):
            if self.converted[later]:
                return self._first[later]
        return len(self.context)

    def splice(self, output: Context) -> list[Segment[T]]:
        """What ``output`` (the compacted :attr:`context`) keeps of each item, in output order."""
        sources = self._sources(output)
        present = {flat for flat, _ in sources if flat is not None}
        upcoming: list[int] = []  # for each output position, the next source index at or after it
        following = len(self.context)
        for flat, _ in reversed(sources):
            if flat is not None:
                following = flat
            upcoming.append(following)
        upcoming.reverse()
        placed = [
            (self._anchor(index), index)
            for index, group in enumerate(self.converted)
            if not any(self._first[index] + p in present for p in range(len(group)))
        ]
        segments: list[Segment[T]] = []
        cursor = 0

        def place(limit: int) -> None:
            nonlocal cursor
            while cursor < len(placed) and placed[cursor][0] <= limit:
                anchor, index = placed[cursor]
                item = self.items[index]
                survives = not self.converted[index] and (
                    anchor == len(self.context) or anchor in present
                )
                segments.append(Kept(index, item) if survives else Dropped(index, item))
                cursor += 1

        position = 0
        while position < len(sources):
            place(upcoming[position])
            flat, _ = sources[position]
            if flat is None:
                start = position
                while position < len(sources) and sources[position][0] is None:
                    position += 1
                segments.append(Added(tuple(output[start:position])))
                continue
            owner = self._owner[flat][0]
            start = position
            while (
                position < len(sources)
                and (current := sources[position][0]) is not None
                and self._owner[current][0] == owner
            ):
                position += 1
            run = sources[start:position]
            group = self.converted[owner]
            whole = len(run) == len(group) and all(same for _, same in run)
            if whole:
                segments.append(Kept(owner, self.items[owner]))
            else:
                segments.append(
                    Rebuilt(
                        owner,
                        self.items[owner],
                        tuple(output[start:position]),
                        tuple(self._owner[f][1] for f, _ in run if f is not None),
                        tuple(same for _, same in run),
                    )
                )
        place(len(self.context))
        return segments
