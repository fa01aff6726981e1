"""``print_streamed`` writes what ``Console.print`` writes, a few lines at a time."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from forge_app.cli import console as console_module
from forge_app.cli.console import print_streamed


def _table(rows: int) -> Table:
    table = Table(title="a long title that wraps at this width", caption="caption")
    table.add_column("turn", justify="right")
    table.add_column("what", style="dim")
    for row in range(rows):
        table.add_row(str(row), Text.assemble(("●", "red"), f" row {row} " + "x" * (row % 50)))
    return table


def _console(color: bool) -> Console:
    return Console(
        file=io.StringIO(),
        width=40,
        force_terminal=color,
        color_system="truecolor" if color else None,
        highlight=False,
        soft_wrap=False,
        markup=False,
        emoji=False,
    )


@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_print_streamed_writes_what_print_writes(monkeypatch, color):
    monkeypatch.setattr(console_module, "STREAMED_LINES", 7)
    printed, streamed = _console(color), _console(color)
    written = []
    streamed.file.write = lambda text, write=streamed.file.write: written.append(write(text))

    printed.print(_table(60))
    print_streamed(streamed, _table(60))

    text = streamed.file.getvalue()
    assert (text, len(written) > 1) == (printed.file.getvalue(), True)
