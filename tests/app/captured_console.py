"""A rich console that writes to memory, to compare what two ways of printing wrote
(``tests/app/test_cli_print_streamed.py``, ``tests/app/test_cli_streamed_table.py``)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from forge_app.cli import console as console_module


def captured_console(*, color: bool, width: int) -> Console:
    """A console of ``width`` columns writing to a string, in true colour or plain, with
    no highlighting, markup, emoji or soft wrap (what is written is what was printed)."""
    return Console(
        file=io.StringIO(),
        width=width,
        force_terminal=color,
        color_system="truecolor" if color else None,
        highlight=False,
        soft_wrap=False,
        markup=False,
        emoji=False,
    )


def printed_and_streamed(*, color: bool, width: int) -> tuple[Console, Console]:
    """Two alike :func:`captured_console`: one for ``Console.print``, one for the streamed
    printing that must write the same."""
    return captured_console(color=color, width=width), captured_console(color=color, width=width)


def written(console: Console) -> str:
    """Everything ``console`` (a :func:`captured_console`) wrote."""
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def stream_in_few_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streamed printing writes every 7 lines (not every few hundred), so that a short
    table is written in several pieces."""
    monkeypatch.setattr(console_module, "STREAMED_LINES", 7)
