"""Transformers: callables from a value to a new value of the same type, and their composition."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = [
    "Transformer",
    "pipe",
    "when",
]


T = TypeVar("T")


class Transformer(Protocol[T]):
    """Anything that maps a value to a new value of the same type."""

    def __call__(self, value: T, /) -> T:
        """Return the transformed value; never mutate the argument."""
        ...


@dataclass(frozen=True)
class Pipe(Generic[T]):
    """Apply ``steps`` left to right."""

    steps: tuple[Transformer[T], ...]
    """The transformers, in the order they run."""

    def __call__(self, value: T, /) -> T:
        """Run every step on the output of the previous one."""
        for step in self.steps:
            value = step(value)
        return value


@dataclass(frozen=True)
class When(Generic[T]):
    """Apply ``transformer`` only to values ``predicate`` accepts; pass others through."""

    predicate: Callable[[T], bool]
    """Decides whether the transformer runs."""
    transformer: Transformer[T]
    """The transformer run on accepted values."""

    def __call__(self, value: T, /) -> T:
        """The transformed value, or ``value`` itself when the predicate rejects it."""
        return self.transformer(value) if self.predicate(value) else value


def pipe(*transformers: Transformer[T]) -> Pipe[T]:
    """Compose transformers left to right; nested pipes are flattened (``pipe`` is associative)."""
    steps: list[Transformer[T]] = []
    for transformer in transformers:
        if isinstance(transformer, Pipe):
            steps.extend(transformer.steps)
        else:
            steps.append(transformer)
    return Pipe(tuple(steps))


def when(predicate: Callable[[T], bool], transformer: Transformer[T]) -> When[T]:
    """``transformer`` applied only when ``predicate(value)`` holds."""
    return When(predicate, transformer)
