"""Where the command line writes: results and tables to standard error, data to files.

Standard output is reserved for data (a compacted transcript when no ``-o`` is
given, violation lines of ``validate``), so it can be piped.
"""

from __future__ import annotations

import typer
from rich.console import Console

err = Console(stderr=True, highlight=False, soft_wrap=False)
"""Human-readable output: tables, progress, timelines."""
out = Console(highlight=False, soft_wrap=True)
"""Machine-readable output."""


def fail(message: str) -> None:
    """Print one ``forge-compact: error: ...`` line on standard error."""
    typer.echo(f"forge-compact: error: {message}", err=True)
