"""Where the command line writes: results and tables to standard error, data to files.

Standard output is reserved for data (a compacted transcript when no ``-o`` is
given, violation lines of ``validate``), so it can be piped.
"""

from __future__ import annotations

from itertools import chain, islice
from typing import Protocol, cast

import typer
from rich.console import Console, RenderableType
from rich.segment import Segment, Segments

err = Console(stderr=True, highlight=False, soft_wrap=False, markup=False, emoji=False)
"""Human-readable output: tables, progress, timelines.

Strings are printed as text, never read as console markup (``[/INST]`` in a stored
message or a query is shown as it is): style our own words with ``rich.text.Text``."""
out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
"""Machine-readable output (text, never markup)."""


STREAMED_LINES = 1000
"""Lines of a long renderable written at a time by :func:`print_streamed`."""


def print_streamed(console: Console, renderable: RenderableType) -> None:
    """``console.print(renderable)``, written ``STREAMED_LINES`` lines at a time.

    ``Console.print`` builds every segment of what it prints before writing any: for a
    replay's timeline of 50,000 turns, hundreds of megabytes. The lines here are the
    ones ``print`` would write (rendered with its options, split and cropped to the
    width), so the output is the same, byte for byte.
    """
    options = console.options.update(
        justify=None, overflow=None, no_wrap=None, markup=None, highlight=None, height=None
    )
    lines = Segment.split_and_crop_lines(
        console.render(renderable, options), console.width, pad=False
    )
    while chunk := list(islice(lines, STREAMED_LINES)):
        console.print(Segments(chain.from_iterable(chunk)), crop=False)  # cropped above


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun`` in the number it takes: ``1 message``, ``2 messages``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


MAX_ERROR_CHARS = 600
"""The longest error line printed (a longer message is cut, saying how much was left out)."""


def one_line(message: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``message`` on one line of at most ``limit`` characters, printable on any terminal.

    Line breaks (all of those ``str.splitlines`` knows) become spaces, other control
    characters and lone surrogates are escaped, and then the middle of a long line is cut
    so that both its start (what failed) and its end (why) stay readable.
    """
    flat = _printable(message)
    total = len(flat)
    if total <= limit:
        return flat
    keep = max(0, limit - len(f" […{total:,} characters cut…] "))
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    cut = f"{flat[:head]} […{total - keep:,} characters cut…] {flat[total - tail :]}"
    return cut[:limit]


def _printable(text: str) -> str:
    flat = " ".join(text.splitlines())
    if not flat.isprintable():
        flat = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in flat)
    return flat.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message: str) -> None:
    """Print one ``forge-compact: error: ...`` line (bounded, see :func:`one_line`) on stderr."""
    typer.echo(f"forge-compact: error: {one_line(message)}", err=True)


class _ClickError(Protocol):
    """What the command-line parser's errors offer (click's ``ClickException``)."""

    exit_code: int

    def format_message(self) -> str: ...


def _parser_class(name: str) -> type[Exception]:
    """A class of the click that typer runs on (recent typer vendors it as ``typer._click``)."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


PARSER_ERROR = _parser_class("ClickException")
"""Raised by the parser for a bad command line (an unknown option, a missing argument …)."""


def parser_error_line(error: Exception) -> tuple[str, int]:
    """The one line and the exit status for a parser error (``-h`` is named as the help).

    Calling a group with no arguments shows its help instead (several lines).
    """
    click_error = cast(_ClickError, error)
    context = getattr(error, "ctx", None)
    command = getattr(context, "command_path", "")
    if type(error).__name__ == "NoArgsIsHelpError" and context is not None:
        return str(context.get_help()), click_error.exit_code
    hint = f" (see {command} -h)" if command else ""
    return f"{click_error.format_message()}{hint}", click_error.exit_code
