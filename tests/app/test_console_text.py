"""The command line's consoles print strings as text: never console markup, never emoji codes."""

from __future__ import annotations

import pytest
from rich.table import Table

from forge_app.cli.console import err, out

TEXTS = [
    "[INST] fix it [/INST]",
    "No module named '[functional]' [/bold]",
    "[red]not red[/red] :smile: [link=x]y[/link]",
]


@pytest.mark.parametrize("console", [err, out], ids=["err", "out"])
@pytest.mark.parametrize("text", TEXTS)
def test_console_prints_user_text_as_it_is(console, text):
    table = Table(title=text)
    table.add_column(text)
    table.add_row(text)
    # Captured, not by setting ``console.file`` and setting it back: reading ``file`` gives
    # the standard stream of the moment, and setting it back pinned the shared console to
    # it, so a later test's CliRunner no longer caught what the console printed.
    with console.capture() as captured:
        console.print(text, width=200)
        console.print(table, width=200)
    lines = captured.get().splitlines()
    assert lines[0] == text
    assert sum(text in line for line in lines) == 4
