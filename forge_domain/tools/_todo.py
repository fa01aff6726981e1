"""Todo lists written by agents, and the diff a ``todo_write`` call makes to one.

A summary does not repeat the whole list at every write; it records what each
write changed (forge-spec §9.2): items added, items whose status changed, and
items cancelled. Todos are matched by their content, not by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Todo",
    "TodoChange",
]


TodoStatus: TypeAlias = Literal["pending", "in_progress", "completed", "cancelled"]
"""The statuses a todo item can have."""

TODO_STATUSES: tuple[TodoStatus, ...] = ("pending", "in_progress", "completed", "cancelled")
"""Every :data:`TodoStatus`, in lifecycle order."""


class Todo(BaseModel):
    """One item of a todo list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = ""
    """The item's id; always empty in summaries, which match items by content (forge)."""
    content: str
    """What is to be done."""
    status: TodoStatus
    """Where the item stands."""


class TodoChange(BaseModel):
    """One change a ``todo_write`` call made to the list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    todo: Todo
    """The item: its new status for ``added``/``updated``, its previous one for ``removed``."""
    kind: Literal["added", "updated", "removed"]
    """What happened to the item."""


def todo_changes(before: Sequence[Todo], written: Sequence[Todo]) -> tuple[TodoChange, ...]:
    """The changes ``written`` makes to the list ``before``, in the order written.

    A cancelled item that existed is ``removed`` (carrying its previous state); an
    unknown cancelled item changes nothing; an unknown item is ``added``; a known
    item with a new status is ``updated``; an unchanged item is left out.
    """
    known = {todo.content: todo for todo in before}
    changes: list[TodoChange] = []
    for item in written:
        previous = known.get(item.content)
        if item.status == "cancelled":
            if previous is not None:
                changes.append(TodoChange(todo=previous, kind="removed"))
        elif previous is None:
            changes.append(
                TodoChange(todo=Todo(content=item.content, status=item.status), kind="added")
            )
        elif previous.status != item.status:
            updated = Todo(id=previous.id, content=item.content, status=item.status)
            changes.append(TodoChange(todo=updated, kind="updated"))
    return tuple(changes)


def apply_todos(before: Sequence[Todo], written: Sequence[Todo]) -> tuple[Todo, ...]:
    """The list after ``written``: cancelled items removed, statuses updated, new items appended."""
    todos = list(before)
    for item in written:
        if item.status == "cancelled":
            todos = [todo for todo in todos if todo.content != item.content]
            continue
        for index, todo in enumerate(todos):
            if todo.content == item.content:
                todos[index] = todo.model_copy(update={"status": item.status})
                break
        else:
            todos.append(Todo(content=item.content, status=item.status))
    return tuple(todos)
