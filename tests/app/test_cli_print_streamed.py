"""``print_streamed`` writes what ``Console.print`` writes, a few lines at a time."""

from __future__ import annotations

import pytest
from rich.table import Table
from rich.text import Text

from forge_app.cli.console import print_streamed
from tests.app.captured_console import printed_and_streamed, stream_in_few_lines, written


def _table(rows: int) -> Table:
    table = Table(title="a long title that wraps at this width", caption="caption")
    table.add_column("turn", justify="right")
    table.add_column("what", style="dim")
    for row in range(rows):
        table.add_row(str(row), Text.assemble(("●", "red"), f" row {row} " + "x" * (row % 50)))
    return table


@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_print_streamed_writes_what_print_writes(monkeypatch, color):
    stream_in_few_lines(monkeypatch)
    printed, streamed = printed_and_streamed(color=color, width=40)
    writes = []
    streamed.file.write = lambda text, write=streamed.file.write: writes.append(write(text))

    printed.print(_table(60))
    print_streamed(streamed, _table(60))

    assert (written(streamed), len(writes) > 1) == (written(printed), True)
