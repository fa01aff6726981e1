"""A rich without the private ``Table`` members the streamed widths use gets the plain path."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from forge_app.cli import _streamed_table
from forge_app.cli._streamed_table import print_table_streamed


def _console() -> Console:
    return Console(file=io.StringIO(), width=60, color_system=None, highlight=False, markup=False)


def _table() -> Table:
    table = Table(title="turns", title_justify="left")
    table.add_column("turn", justify="right")
    table.add_column("what")
    return table


def _rows():
    return iter([(str(n), f"row {n} " * (n % 4)) for n in range(30)])


def test_the_installed_rich_has_the_members_the_widths_use():
    assert _streamed_table._RICH_HAS_WIDTH_METHODS


@pytest.mark.parametrize("has_members", [True, False])
def test_both_paths_write_what_print_writes(monkeypatch, has_members):
    monkeypatch.setattr(_streamed_table, "_RICH_HAS_WIDTH_METHODS", has_members)
    widths_called: list[bool] = []
    measured = _streamed_table._widths

    def counting(*args, **kwargs):
        widths_called.append(True)
        return measured(*args, **kwargs)

    monkeypatch.setattr(_streamed_table, "_widths", counting)
    printed, streamed = _console(), _console()
    table = _table()
    for row in _rows():
        table.add_row(*row)
    printed.print(table)
    print_table_streamed(streamed, _table, _rows)
    assert isinstance(printed.file, io.StringIO)
    assert isinstance(streamed.file, io.StringIO)
    assert (streamed.file.getvalue(), bool(widths_called)) == (
        printed.file.getvalue(),
        has_members,
    )
