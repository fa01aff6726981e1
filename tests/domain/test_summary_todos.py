"""Todo diffs recorded by todo_write items (forge-spec §9.2)."""

from __future__ import annotations

import pytest

from forge_domain.tools import Todo, TodoChange
from forge_domain.tools._todo import apply_todos, todo_changes


def _t(content: str, status: str = "pending") -> Todo:
    return Todo(content=content, status=status)


DIFF_ROWS = [
    ((), (_t("A"),), (TodoChange(todo=_t("A"), kind="added"),)),
    ((_t("A"),), (_t("A"),), ()),
    ((_t("A"),), (_t("A", "completed"),), (TodoChange(todo=_t("A", "completed"), kind="updated"),)),
    ((_t("A"),), (_t("A", "cancelled"),), (TodoChange(todo=_t("A"), kind="removed"),)),
    ((), (_t("Z", "cancelled"),), ()),
]


@pytest.mark.parametrize(
    ("before", "written", "expected"),
    DIFF_ROWS,
    ids=["added", "unchanged", "updated", "removed", "unknown-cancelled"],
)
def test_todo_changes(before, written, expected):
    assert todo_changes(before, written) == expected


APPLY_ROWS = [
    ((), (_t("A"), _t("B")), (_t("A"), _t("B"))),
    ((_t("A"), _t("B")), (_t("B", "completed"),), (_t("A"), _t("B", "completed"))),
    ((_t("A"), _t("B")), (_t("A", "cancelled"),), (_t("B"),)),
    ((_t("A"),), (_t("C", "cancelled"),), (_t("A"),)),
]


@pytest.mark.parametrize(
    ("before", "written", "expected"),
    APPLY_ROWS,
    ids=["append", "update", "cancel", "cancel-unknown"],
)
def test_apply_todos(before, written, expected):
    assert apply_todos(before, written) == expected
