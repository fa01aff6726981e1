"""A long table printed as ``Console.print`` prints it, without rich holding every row.

``Console.print(table)`` measures every cell of every row for the column widths, then
builds every row's cells before writing a line: for a replay's timeline of 50,000
turns, seconds of CPU and over a hundred megabytes. :func:`print_table_streamed`
writes the same bytes from rows given as a function (called twice, nothing kept):

- the widths: rich's own width calculation on a table holding only the rows that
  give each column its widest cell and its longest word (a column's width depends on
  those two measurements alone);
- the title, the header and the borders: rich renders them (a table with no row);
- a row whose cells are plain words that fit their column: its line is the line rich
  rendered for the first such row (its borders, paddings and styles) with the words
  put in, justified as the column says. That first row is rendered by rich too, and
  when its words are not where this expects them, every row is;
- any other row (a longer text that may wrap, a ``Text`` with styles): rich renders
  it in a table of the same columns and widths, between two blank rows, and its
  lines are taken out.

The table's own settings are those a plain ``rich.table.Table`` has by default
(a box with its edge, a header, no footer, caption, row styles or lines between
rows); for any other table, and any console too narrow for it, the rows are added to
the table and printed by :func:`~forge_app.cli.console.print_streamed`.

The widths use three of rich's own ``Table`` methods that are not public
(``_calculate_column_widths``, ``_extra_width``, ``_get_padding_width``): the tests
compare this with ``Console.print`` byte for byte, so a rich that changes them fails
there rather than printing another table, and a rich without them (checked once, at
import) gets the plain path: every row added to the table and printed by
:func:`~forge_app.cli.console.print_streamed`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import chain

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from forge_app.cli.console import STREAMED_LINES, print_streamed

__all__ = ["Cell", "print_table_streamed"]

Cell = str | Text
"""A cell: a plain string (shown as it is: the console must not read markup) or a Text."""

_Line = list[Segment]

_RICH_WIDTH_METHODS = ("_calculate_column_widths", "_extra_width", "_get_padding_width")
_RICH_HAS_WIDTH_METHODS = all(hasattr(Table, name) for name in _RICH_WIDTH_METHODS)
"""The installed rich still has the private ``Table`` members the streamed widths use."""


def _measure(cell: Cell) -> tuple[int, int]:
    """The cell's narrowest and widest width as ``rich.text.Text`` measures them (its
    longest word and its longest line), before padding."""
    if isinstance(cell, str) and cell.isascii() and cell.isprintable() and " " not in cell:
        return len(cell), len(cell)  # one word of one-cell characters
    text = cell if isinstance(cell, str) else cell.plain
    lines = text.splitlines()
    widest = max(cell_len(line) for line in lines) if lines else 0
    words = text.split()
    return (max(cell_len(word) for word in words) if words else widest), widest


def _fits(table: Table) -> bool:
    """The table has the layout the streamed rows are cut from."""
    return bool(
        table.box
        and table.show_edge
        and table.show_header
        and not table.show_footer
        and not table.show_lines
        and not table.leading
        and not table.row_styles
        and table.caption is None
        and table.width is None
        and not table.expand
        and table.min_width is None
        and all(c.justify in ("left", "right") for c in table.columns)
    )


def _options(console: Console) -> ConsoleOptions:
    """The options ``Console.print`` renders with (as :func:`print_streamed` does)."""
    return console.options.update(
        justify=None, overflow=None, no_wrap=None, markup=None, highlight=None, height=None
    )


def _widths(
    console: Console, new_table: Callable[[], Table], rows: Iterable[Sequence[Cell]]
) -> list[int]:
    """Each column's width (padding included) in the table of all ``rows``."""
    probe = new_table()
    columns = len(probe.columns)
    narrowest: list[tuple[int, Sequence[Cell] | None]] = [(-1, None)] * columns
    widest: list[tuple[int, Sequence[Cell] | None]] = [(-1, None)] * columns
    for row in rows:
        for column, cell in enumerate(row):
            low, high = _measure(cell)
            if low > narrowest[column][0]:
                narrowest[column] = (low, row)
            if high > widest[column][0]:
                widest[column] = (high, row)
    kept: dict[int, Sequence[Cell]] = {}
    for _, chosen in chain(narrowest, widest):
        if chosen is not None:
            kept[id(chosen)] = chosen
    for chosen in kept.values():
        probe.add_row(*chosen)
    options = _options(console)
    # rich's own calculation (what Table.__rich_console__ does before rendering)
    return probe._calculate_column_widths(
        console, options.update_width(options.max_width - probe._extra_width)
    )


def _fixed(new_table: Callable[[], Table], widths: Sequence[int], *, blank: bool) -> Table:
    """A table of the same columns at ``widths``; ``blank``: with no title nor header text."""
    table = new_table()
    table.columns = [
        replace(
            column,
            width=width - table._get_padding_width(index),
            header="" if blank else column.header,
            _cells=[],
        )
        for index, (column, width) in enumerate(zip(table.columns, widths, strict=True))
    ]
    if blank:
        table.title = None
    return table


def _lines(console: Console, table: Table) -> list[_Line]:
    return list(
        Segment.split_and_crop_lines(
            console.render(table, _options(console)), console.width, pad=False
        )
    )


class _Rows:
    """Renders rows as they come, at fixed widths."""

    def __init__(
        self, console: Console, new_table: Callable[[], Table], widths: Sequence[int]
    ) -> None:
        self._console = console
        self._new_table = new_table
        self._widths = widths
        probe = new_table()
        self._justify = [c.justify for c in probe.columns]
        self._room = [w - probe._get_padding_width(i) for i, w in enumerate(widths)]
        self._template: _Line | None = None
        self._plain_rows = True
        """Rows of plain words may be cut from the template (until one does not match)."""

    def lines(self, row: Sequence[Cell], *, last: bool) -> list[_Line]:
        words = self._words(row) if self._plain_rows and not last else None
        if words is None:
            return self._rendered(row, last=last)
        if self._template is None:
            lines = self._rendered(row, last=last)
            self._template = self._checked_template(lines, words)
            return lines
        line = self._template.copy()
        for index, text in enumerate(words):
            at = 2 + 4 * index
            line[at] = Segment(text, line[at].style)
        return [line]

    def _words(self, row: Sequence[Cell]) -> list[str] | None:
        """The row's cells as its line shows them, or None when one is not a plain
        word (or blank) that fits its column."""
        words = []
        for cell, room, justify in zip(row, self._room, self._justify, strict=True):
            if not isinstance(cell, str) or " " in cell or not cell.isprintable():
                return None  # a Text, or a cell that may wrap: rich renders the row
            width = len(cell) if cell.isascii() else _measure(cell)[1]
            if width > room:
                return None
            pad = " " * (room - width)
            words.append(pad + cell if justify == "right" else cell + pad)
        return words

    def _checked_template(self, lines: list[_Line], words: list[str]) -> _Line | None:
        """The row's line, when it is borders, paddings and ``words`` where expected."""
        if len(lines) == 1 and len(lines[0]) == 4 * len(words) + 2:
            line = lines[0]
            if [line[2 + 4 * i].text for i in range(len(words))] == words:
                return line
        self._plain_rows = False
        return None

    def _rendered(self, row: Sequence[Cell], *, last: bool) -> list[_Line]:
        """rich's lines for ``row``: a table of blank rows around it, cut out."""
        table = _fixed(self._new_table, self._widths, blank=True)
        blank = [""] * len(self._widths)
        table.add_row(*blank)
        table.add_row(*row)
        if not last:
            table.add_row(*blank)
        lines = _lines(self._console, table)
        # top border, header, header's rule, blank row | the row | (blank row), bottom
        return lines[4 : -1 if last else -2]


def print_table_streamed(
    console: Console, new_table: Callable[[], Table], rows: Callable[[], Iterator[Sequence[Cell]]]
) -> None:
    """``console.print`` of ``new_table()`` holding every row of ``rows()``, the same
    bytes, written :data:`~forge_app.cli.console.STREAMED_LINES` lines at a time.

    ``new_table`` builds the table with its title and columns and no row; ``rows`` gives
    the rows in order (it is called twice: once for the widths, once to print).
    """
    if not (_RICH_HAS_WIDTH_METHODS and _fits(new_table())):
        table = new_table()
        for row in rows():
            table.add_row(*row)
        print_streamed(console, table)
        return
    widths = _widths(console, new_table, rows())
    head = _fixed(new_table, widths, blank=False)
    rooms = [w - head._get_padding_width(i) for i, w in enumerate(widths)]
    if sum(widths) + head._extra_width > console.width or min(rooms, default=1) < 1:
        table = new_table()  # too narrow: rich shares out what is left its own way
        for row in rows():
            table.add_row(*row)
        print_streamed(console, table)
        return
    *top, bottom = _lines(console, head)
    pending: list[_Line] = top
    renderer = _Rows(console, new_table, widths)
    iterator = rows()
    current: Sequence[Cell] | None = next(iterator, None)
    while current is not None:
        following = next(iterator, None)
        pending.extend(renderer.lines(current, last=following is None))
        current = following
        if len(pending) >= STREAMED_LINES:
            console.print(Segments(chain.from_iterable(pending)), crop=False)
            pending = []
    pending.append(bottom)
    console.print(Segments(chain.from_iterable(pending)), crop=False)
