"""The figures of every replayed turn, kept as plain numbers.

A :class:`~forge_app.runtime.ReplayTurn` is a pydantic model holding two
:class:`~forge_domain.TokenCount` models: three objects and their dictionaries per
turn, about 12 MB for a replay of 16,000 messages. What a caller keeps of a whole
replay (the command line's table, chart, metrics and report) is a :class:`TurnLog`:
one array of integers per figure, and the compactions of the turns that had any.
Reading it gives a :class:`TurnRecord` per turn, built when read;
:meth:`TurnRecord.replay_turn` gives the public ``ReplayTurn`` with the same figures.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from forge_domain import CompactionResult, TokenCount

if TYPE_CHECKING:  # _replay imports this module
    from forge_app.runtime._replay import ReplayTurn

__all__ = ["TurnLog", "TurnRecord"]


def _count(value: int, actual: bool) -> TokenCount:
    return TokenCount.actual(value) if actual else TokenCount.approx(value)


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """The state after one replayed turn: ``ReplayTurn``'s figures as plain numbers."""

    turn: int
    """1-based number of the recorded assistant message."""
    messages: int
    """Messages in the (possibly compacted) context after the turn."""
    token_value: int
    """Its size (:attr:`tokens`)."""
    tokens_actual: bool
    """Whether that size is usage-anchored (else estimated)."""
    request_value: int
    """Size of the request sent in this turn (:attr:`request_tokens`)."""
    request_actual: bool
    """Whether that size is usage-anchored (else estimated)."""
    recorded_messages: int
    """Messages of the recording up to this turn (the size without compaction)."""
    recorded_tokens: int
    """Estimated tokens of the recording up to this turn."""
    compactions: tuple[CompactionResult, ...] = ()
    """Compactions applied during the turn."""

    @property
    def tokens(self) -> TokenCount:
        """The context's size after the turn, as ``ReplayTurn.tokens``."""
        return _count(self.token_value, self.tokens_actual)

    @property
    def request_tokens(self) -> TokenCount:
        """The size of the request sent in the turn, as ``ReplayTurn.request_tokens``."""
        return _count(self.request_value, self.request_actual)

    def replay_turn(self) -> ReplayTurn:
        """The public model with these figures."""
        from forge_app.runtime._replay import ReplayTurn

        return ReplayTurn(
            turn=self.turn,
            messages=self.messages,
            tokens=self.tokens,
            request_tokens=self.request_tokens,
            recorded_messages=self.recorded_messages,
            recorded_tokens=self.recorded_tokens,
            compactions=self.compactions,
        )

    @classmethod
    def of(cls, turn: ReplayTurn) -> TurnRecord:
        """The record of ``turn``'s figures."""
        return cls(
            turn.turn,
            turn.messages,
            turn.tokens.value,
            turn.tokens.is_actual(),
            turn.request_tokens.value,
            turn.request_tokens.is_actual(),
            turn.recorded_messages,
            turn.recorded_tokens,
            turn.compactions,
        )


_FIGURES = (
    "turn",
    "messages",
    "token_value",
    "tokens_actual",
    "request_value",
    "request_actual",
    "recorded_messages",
    "recorded_tokens",
)


class TurnLog(Sequence[TurnRecord]):
    """Every turn of a replay, in order: an array per figure (8 bytes a turn each)."""

    def __init__(self, records: Sequence[TurnRecord] = ()) -> None:
        """A log of ``records`` (more are added with :meth:`append`)."""
        self._figures = tuple(array("q") for _ in _FIGURES)
        self._compactions: dict[int, tuple[CompactionResult, ...]] = {}
        for record in records:
            self.append(record)

    def append(self, record: TurnRecord) -> None:
        """Add the next turn."""
        if record.compactions:
            self._compactions[len(self)] = record.compactions
        for figures, name in zip(self._figures, _FIGURES, strict=True):
            figures.append(getattr(record, name))

    def __len__(self) -> int:
        return len(self._figures[0])

    @overload
    def __getitem__(self, index: int) -> TurnRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[TurnRecord]: ...

    def __getitem__(self, index: int | slice) -> TurnRecord | list[TurnRecord]:
        if isinstance(index, slice):
            return [self._record(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("turn index out of range")
        return self._record(index)

    def __iter__(self) -> Iterator[TurnRecord]:
        compactions = self._compactions
        for index, figures in enumerate(zip(*self._figures, strict=True)):
            turn, messages, tokens, actual, request, request_actual, recorded, recorded_tokens = (
                figures
            )
            yield TurnRecord(
                turn,
                messages,
                tokens,
                bool(actual),
                request,
                bool(request_actual),
                recorded,
                recorded_tokens,
                compactions.get(index, ()),
            )

    def _record(self, index: int) -> TurnRecord:
        f = self._figures
        return TurnRecord(
            f[0][index],
            f[1][index],
            f[2][index],
            bool(f[3][index]),
            f[4][index],
            bool(f[5][index]),
            f[6][index],
            f[7][index],
            self._compactions.get(index, ()),
        )
