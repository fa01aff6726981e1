"""Which messages a compaction kept, changed in place, or replaced by a summary.

Engines return a new context and the range they summarised, but a tiered engine
also prunes and cuts messages outside it. So the store compares the context
before and after, message by message, and needs nothing else from the engine:

- the common head and tail (the same object, or an equal message) are kept;
- in between, an output message equal to an input message is kept (in order);
- a tool result answering the same call, or a message with the same role and tool
  calls that is not a summary, was *changed in place* (pruned or cut);
- any other output message is new (a summary); every input message neither
  kept nor changed was *replaced* by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge_domain import ContextMessage, TextMessage, ToolResult

__all__: list[str] = []


@dataclass(frozen=True, slots=True)
class Alignment:
    """How ``after`` derives from ``before`` (indices into each)."""

    source: tuple[int | None, ...]
    """For each message of ``after``: the ``before`` index it keeps or changes, else None."""
    altered: tuple[int, ...]
    """Indices of ``after`` that changed a ``before`` message in place."""
    replaced: tuple[int, ...]
    """Indices of ``before`` that were neither kept nor changed in place."""
    new: tuple[int, ...]
    """Indices of ``after`` that derive from no ``before`` message (summaries)."""

    def summary_index(self, after: Sequence[ContextMessage]) -> int | None:
        """The new message that names the replaced span: a summary if any, else the first."""
        for index in self.new:
            message = after[index]
            if isinstance(message, TextMessage) and message.summary_data is not None:
                return index
        return self.new[0] if self.new else None


def _same(a: ContextMessage, b: ContextMessage) -> bool:
    return a is b or a == b


def _call_ids(message: TextMessage) -> tuple[str, ...]:
    return tuple(call.id for call in message.tool_calls or ())


def _changed_in_place(old: ContextMessage, new: ContextMessage) -> bool:
    if isinstance(old, ToolResult) and isinstance(new, ToolResult):
        return old.call_id == new.call_id
    if isinstance(old, TextMessage) and isinstance(new, TextMessage):
        return (
            new.summary_data is None
            and old.summary_data is None
            and old.role == new.role
            and _call_ids(old) == _call_ids(new)
            and (bool(old.tool_calls) or old.text[:40] == new.text[:40])
        )
    return False


def align(before: Sequence[ContextMessage], after: Sequence[ContextMessage]) -> Alignment:
    """Align ``after`` with ``before`` (see the module docstring)."""
    n_before, n_after = len(before), len(after)
    head = 0
    while head < min(n_before, n_after) and _same(before[head], after[head]):
        head += 1
    tail = 0
    while tail < min(n_before, n_after) - head and _same(
        before[n_before - 1 - tail], after[n_after - 1 - tail]
    ):
        tail += 1
    source: list[int | None] = list(range(head))
    altered: list[int] = []
    new: list[int] = []
    used: set[int] = set()
    identity = {id(before[i]): i for i in range(head, n_before - tail)}
    pointer = head
    for out in range(head, n_after - tail):
        message = after[out]
        match = identity.get(id(message))
        if match is None or match < pointer:
            match = next(
                (i for i in range(pointer, n_before - tail) if _same(before[i], message)), None
            )
        if match is not None:
            source.append(match)
            used.add(match)
            pointer = match + 1
            continue
        changed = next(
            (i for i in range(pointer, n_before - tail) if _changed_in_place(before[i], message)),
            None,
        )
        if changed is not None:
            source.append(changed)
            used.add(changed)
            altered.append(out)
            pointer = changed + 1
            continue
        source.append(None)
        new.append(out)
    source.extend(range(n_before - tail, n_before))
    replaced = tuple(i for i in range(head, n_before - tail) if i not in used)
    return Alignment(tuple(source), tuple(altered), replaced, tuple(new))
