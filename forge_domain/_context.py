"""The ordered list of messages sent to a provider, with O(1) size bookkeeping.

A :class:`Context` is immutable from the caller's point of view. ``append`` returns
a new context; when it extends the newest version of a store, the underlying list
is shared and only grows, so appending and every size query stay O(1) however
long the session gets. Aggregates (approximate tokens, user turns, usage anchor,
the newest distrusted report) are carried forward incrementally and never
recomputed by a scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import overload

from forge_domain._json import JsonObject
from forge_domain._messages import ContextMessage, Role
from forge_domain._usage import TokenCount, is_plausible_total
from forge_domain.formats._openai import message_to_openai, messages_from_openai


def _reported_total(message: ContextMessage, index: int, usage_floor: int) -> int:
    """The provider's ``total_tokens`` on ``message`` when it may anchor the count, else 0."""
    usage = message.usage
    if index < usage_floor or usage is None or not usage.total_tokens.is_actual():
        return 0
    return max(usage.total_tokens.value, 0)


@dataclass(frozen=True, slots=True)
class _Totals:
    """Running aggregates of a context prefix."""

    approx_tokens: int = 0
    user_messages: int = 0
    anchor_tokens: int = 0
    """total_tokens of the newest believed usage report, 0 when there is none."""
    anchor_index: int = -1
    approx_since_anchor: int = 0
    distrusted_index: int = -1
    """Index of the newest usage report when it was not believed, else -1."""

    @classmethod
    def of(cls, messages: Sequence[ContextMessage], usage_floor: int) -> _Totals:
        """The :meth:`plus` fold over ``messages`` from the empty totals, in one pass."""
        approx_tokens = user_messages = anchor_tokens = approx_since_anchor = 0
        anchor_index = distrusted_index = -1
        for index, message in enumerate(messages):
            approx = message.approx_tokens
            approx_tokens += approx
            if message.has_role(Role.USER):
                user_messages += 1
            if message.usage is None:  # most messages: nothing reported (one call less)
                approx_since_anchor += approx
                continue
            reported = _reported_total(message, index, usage_floor)
            if reported and is_plausible_total(reported, approx_tokens):
                anchor_tokens, anchor_index, distrusted_index = reported, index, -1
                approx_since_anchor = 0
            else:
                approx_since_anchor += approx
                if reported:
                    distrusted_index = index
        return cls(
            approx_tokens,
            user_messages,
            anchor_tokens,
            anchor_index,
            approx_since_anchor,
            distrusted_index,
        )

    def plus(self, index: int, message: ContextMessage, usage_floor: int) -> _Totals:
        approx = message.approx_tokens
        approx_tokens = self.approx_tokens + approx
        users = self.user_messages + (1 if message.has_role(Role.USER) else 0)
        reported = _reported_total(message, index, usage_floor)
        if reported and is_plausible_total(reported, approx_tokens):
            return _Totals(approx_tokens, users, reported, index, 0, -1)
        return _Totals(
            approx_tokens,
            users,
            self.anchor_tokens,
            self.anchor_index,
            self.approx_since_anchor + approx,
            index if reported else self.distrusted_index,
        )


class Context:
    """An ordered, immutable sequence of context messages."""

    __slots__ = ("_length", "_store", "_totals", "_usage_floor")

    def __init__(self, messages: Iterable[ContextMessage] = (), *, usage_floor: int = 0) -> None:
        """Build a context.

        Args:
            messages: the entries, in order.
            usage_floor: usage reported on messages before this index is not trusted
                as a size anchor (set after a compaction rewrote what came before).
        """
        store: list[ContextMessage] = list(messages)
        self._store = store
        self._length = len(store)
        self._totals = _Totals.of(store, usage_floor)
        self._usage_floor = usage_floor

    @classmethod
    def _view(
        cls, store: list[ContextMessage], length: int, totals: _Totals, usage_floor: int
    ) -> Context:
        context = cls.__new__(cls)
        context._store = store
        context._length = length
        context._totals = totals
        context._usage_floor = usage_floor
        return context

    # -- sequence protocol -------------------------------------------------------------

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[ContextMessage]:
        return islice(self._store, self._length)

    @overload
    def __getitem__(self, index: int) -> ContextMessage: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[ContextMessage, ...]: ...
    def __getitem__(self, index: int | slice) -> ContextMessage | tuple[ContextMessage, ...]:
        if isinstance(index, slice):
            return tuple(self._store[: self._length][index])
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"context index {index} out of range for {self._length} messages")
        return self._store[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Context):
            return NotImplemented
        return self._length == other._length and all(
            a == b for a, b in zip(self, other, strict=True)
        )

    def __hash__(self) -> int:
        # Messages hold JSON dicts and are unhashable; equal contexts share these totals.
        return hash((self._length, self._totals.approx_tokens, self._totals.user_messages))

    def __repr__(self) -> str:
        return f"Context({len(self)} messages, ~{self._totals.approx_tokens} tokens)"

    @property
    def messages(self) -> tuple[ContextMessage, ...]:
        """The messages as a tuple (a copy; prefer iteration on long contexts)."""
        return tuple(self)

    def extends(self, other: Context) -> bool:
        """True when ``other`` is a prefix of this context held in the same store, in O(1).

        A store only ever grows at its end (``append`` on an older view copies), so a
        shared store means the first ``len(other)`` messages are the same objects.
        False says nothing (equal messages in another store are not looked at).
        """
        return self._store is other._store and other._length <= self._length

    @property
    def usage_floor(self) -> int:
        """Usage on messages before this index is not trusted as a size anchor."""
        return self._usage_floor

    # -- building ------------------------------------------------------------------------

    def append(self, *messages: ContextMessage) -> Context:
        """Return a new context with ``messages`` added at the end (O(len(messages)))."""
        store = self._store if len(self._store) == self._length else self._store[: self._length]
        totals = self._totals
        for offset, message in enumerate(messages):
            totals = totals.plus(self._length + offset, message, self._usage_floor)
        store.extend(messages)
        return Context._view(store, len(store), totals, self._usage_floor)

    def replace_range(self, start: int, end: int, replacement: Sequence[ContextMessage]) -> Context:
        """Return a new context with messages ``start..=end`` replaced.

        Every provider-reported usage in the result measured a context that no
        longer exists, so none of it is a size anchor (``usage_floor`` is the new
        length): the count is approximate until a message with usage is appended.
        """
        if not 0 <= start <= end < self._length:
            raise IndexError(f"range ({start}, {end}) out of bounds for {self._length} messages")
        head = self._store[:start]
        tail = self._store[end + 1 : self._length]
        new = [*head, *replacement, *tail]
        return Context(new, usage_floor=len(new))

    def without_stale_usage(self) -> Context:
        """This context with ``usage`` dropped from every message before ``usage_floor``.

        Usage describes the request that produced its message, so it stops measuring
        anything once a message before it changes (a compaction). The floor says so in
        memory; a file has none, so this is what is written: read back, the count is the
        same as this context's, and the next response's usage is the next anchor.
        """
        floor = min(self._usage_floor, self._length)
        if not any(message.usage is not None for message in self._store[:floor]):
            return self
        head = [
            message if message.usage is None else message.model_copy(update={"usage": None})
            for message in self._store[:floor]
        ]
        return Context([*head, *self._store[floor : self._length]])

    # -- sizes ---------------------------------------------------------------------------

    def token_count_approx(self) -> int:
        """Sum of every message's chars/4 estimate (rounded up per message)."""
        return self._totals.approx_tokens

    def token_count(self) -> TokenCount:
        """The best size estimate available, in O(1).

        When a trusted message carries a provider-reported ``total_tokens`` (> 0)
        that passes :func:`~forge_domain._usage.is_plausible_total` against the
        estimate of the messages up to and including it, the count is the newest
        such figure plus the estimate of every message appended after it, and is
        marked actual; otherwise it is the approximation.
        """
        totals = self._totals
        if totals.anchor_index >= 0:
            return TokenCount.actual(totals.anchor_tokens + totals.approx_since_anchor)
        return TokenCount.approx(totals.approx_tokens)

    def usage_anchor(self) -> tuple[int, int] | None:
        """Index and ``total_tokens`` of the usage report :meth:`token_count` rests on, or None."""
        totals = self._totals
        return (totals.anchor_index, totals.anchor_tokens) if totals.anchor_index >= 0 else None

    def distrusted_usage_index(self) -> int | None:
        """Index of the newest usage report when the count does not rest on it, in O(1).

        A report (an actual ``total_tokens`` > 0 at or after ``usage_floor``) is
        not believed when it is far below the estimate of what it measured (see
        :func:`~forge_domain._usage.is_plausible_total`); the count then goes on
        from the report before it, or from the estimate alone. None when the
        newest report was believed or there is none.
        """
        index = self._totals.distrusted_index
        return index if index >= 0 else None

    def user_message_count(self) -> int:
        """Messages with the user role (forge's notion of turns)."""
        return self._totals.user_messages

    def first_index_of_role(self, role: Role) -> int | None:
        """Index of the first message with ``role``, or None."""
        for index, message in enumerate(self):
            if message.has_role(role):
                return index
        return None

    def last_message(self) -> ContextMessage | None:
        """The newest message, or None for an empty context."""
        return self._store[self._length - 1] if self._length else None

    # -- OpenAI wire format --------------------------------------------------------------

    @classmethod
    def from_openai(cls, messages: object) -> Context:
        """Read an OpenAI chat-completions message list.

        Raises:
            InvalidMessage: naming the index and field of the first malformed message.
            InvalidTranscript: when ``messages`` is not a list.
        """
        return cls(messages_from_openai(messages))

    def to_openai(self) -> list[JsonObject]:
        """Write the context as an OpenAI chat-completions message list."""
        return [message_to_openai(message) for message in self]
