"""LangChain's ``SummarizationMiddleware`` vocabulary: triggers, retention, and the cut point.

A trigger is a ``ContextSize`` tuple (``("tokens", 4000)``, ``("messages", 50)``,
``("fraction", 0.8)``), a ``TriggerClause`` mapping whose conditions must all hold
(``{"tokens": 4000, "messages": 10}``), or a list of either (any item fires). ``None`` or
``[]`` never fires. ``keep`` is one ``ContextSize``: the most recent messages, tokens, or
fraction of the model's window kept word for word. Validation and its messages follow
LangChain's, stricter in one place: a tuple's ``tokens``/``messages`` must be an integer too
(LangChain accepts ``("tokens", 1000.5)`` and ``("messages", True)`` silently).

Written from LangChain 1.5's documented behaviour and its tests (``tests/compat/langchain``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypeAlias

from forge_app.adapters._convert import calls_kept_whole

__all__: list[str] = []  # the LangChain adapter's machinery, not an API

Kind: TypeAlias = Literal["tokens", "messages", "fraction"]
ContextSize: TypeAlias = tuple[Kind, int | float]
"""LangChain's sizes: ``("tokens", 4000)``, ``("messages", 50)``, ``("fraction", 0.8)``."""
TriggerClause: TypeAlias = Mapping[str, int | float]
"""Conditions that must all hold: ``{"tokens": 4000, "messages": 10}``."""
Trigger: TypeAlias = ContextSize | TriggerClause | Sequence[ContextSize | TriggerClause] | None

KINDS = ("tokens", "messages", "fraction")
DEFAULT_KEEP: ContextSize = ("messages", 20)
"""LangChain's default retention: the 20 most recent messages."""


def _checked(kind: object, value: object, parameter: str) -> tuple[Kind, int | float]:
    """``(kind, value)`` if valid, else a ``ValueError`` naming the parameter and the value."""
    if kind not in KINDS:
        raise ValueError(f"Unsupported context size type {kind} for {parameter}.")
    if isinstance(value, bool):  # an int subclass: ("messages", True) is not a threshold of 1
        raise ValueError(f"{kind} {parameter} value must be numeric, got {value!r}")
    if kind == "fraction":
        if not isinstance(value, int | float):
            raise ValueError(f"Fraction {parameter} values must be numeric, got {value!r}")
        if not 0 < value <= 1:
            raise ValueError(f"Fractional {parameter} values must be between 0 and 1, got {value}.")
        return "fraction", value
    if not isinstance(value, int):
        raise ValueError(f"{kind} {parameter} values must be integers, got {value!r}")
    if value <= 0:
        raise ValueError(f"{parameter} thresholds must be greater than 0, got {value}.")
    return ("tokens" if kind == "tokens" else "messages"), value


def context_size(size: object, parameter: str) -> ContextSize:
    """A validated ``(kind, value)`` tuple (``keep``, or one trigger condition)."""
    if not (isinstance(size, tuple) and len(size) == 2):
        raise ValueError(f"{parameter} {size!r}: expected ('tokens'|'messages'|'fraction', value)")
    return _checked(size[0], size[1], parameter)


def _clause(mapping: Mapping[object, object]) -> dict[Kind, int | float]:
    if not mapping:
        raise ValueError(
            "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'"
        )
    clause: dict[Kind, int | float] = {}
    for kind, value in mapping.items():
        if kind not in KINDS:
            raise ValueError(f"Unsupported trigger metric: {kind!r}")
        checked_kind, checked = _checked(kind, value, "trigger")
        clause[checked_kind] = checked
    return clause


def trigger_clauses(trigger: object) -> list[dict[Kind, int | float]]:
    """The trigger as a list of AND clauses, any of which fires (``[]``: never).

    Raises:
        ValueError: a condition's kind or value is invalid.
        TypeError: the trigger, or an item of its list, is neither a tuple nor a mapping.
    """
    if trigger is None:
        return []
    items = trigger if isinstance(trigger, list) else [trigger]
    if not isinstance(trigger, list | tuple | Mapping):
        raise TypeError(f"Unsupported trigger type: {type(trigger)}")
    clauses: list[dict[Kind, int | float]] = []
    for item in items:
        if isinstance(item, Mapping):
            clauses.append(_clause(item))
        elif isinstance(item, tuple):
            kind, value = context_size(item, "trigger")
            clauses.append({kind: value})
        else:
            raise TypeError(f"Unsupported trigger item type: {type(item)}")
    return clauses


def fires(
    clauses: Sequence[Mapping[Kind, int | float]],
    messages: int,
    tokens: int,
    window: int | None,
) -> bool:
    """Whether any clause holds for a history of ``messages`` messages and ``tokens`` tokens.

    A ``fraction`` condition holds only when the model's ``window`` is known.
    """
    return any(_holds(clause, messages, tokens, window) for clause in clauses)


def _holds(
    clause: Mapping[Kind, int | float], messages: int, tokens: int, window: int | None
) -> bool:
    for kind, value in clause.items():
        if kind == "messages" and messages < value:
            return False
        if kind == "tokens" and tokens < value:
            return False
        if kind == "fraction" and (window is None or tokens < max(1, int(window * value))):
            return False
    return True


def cut_point(
    count: int,
    keep: ContextSize,
    window: int | None,
    suffix_tokens: Callable[[int], int],
    is_tool_result: Callable[[int], bool],
) -> int:
    """The index before which the history is summarised: ``keep`` is kept after it.

    ``suffix_tokens(i)`` counts the tokens of the messages from ``i`` on. A cut never
    separates tool results from the call before them: one landing on a result moves back
    to the assistant message that made the call (kept with its results).
    """
    kind, value = keep
    if kind == "messages":
        cut = max(0, count - int(value))
    else:
        target = max(1, int(value) if kind == "tokens" else int((window or 0) * value))
        if count == 0 or suffix_tokens(0) <= target:
            return 0
        low, high = 0, count  # the first index whose suffix fits
        while low < high:
            middle = (low + high) // 2
            if suffix_tokens(middle) <= target:
                high = middle
            else:
                low = middle + 1
        cut = min(low, count - 1)
    return calls_kept_whole(cut, count, is_tool_result)
