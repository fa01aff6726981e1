"""``print_table_streamed`` and ``print_timeline`` write what ``Console.print`` writes."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from forge_app.cli import _streamed_table
from forge_app.cli._streamed_table import Cell, print_table_streamed
from forge_app.cli.replay import print_timeline, replay_turns, timeline_table
from forge_app.files import Transcript
from forge_app.files._agents import load_agent
from forge_app.runtime._turn_log import TurnLog, TurnRecord
from forge_domain import Context
from tests.app.captured_console import printed_and_streamed, stream_in_few_lines, written

DEMO = Path(__file__).parents[2] / "forge_app" / "demo"


def _demo_turns() -> TurnLog:
    """The demo session replayed under its agent (compactions in several turns)."""
    agent = load_agent(DEMO / "agent.yaml")
    context = Context.from_openai(json.loads((DEMO / "session.json").read_text()))
    turns, _ = anyio.run(replay_turns, Transcript(context), agent)
    return turns


DEMO_TURNS = _demo_turns()


class _Counted:
    """Counts the rows rich renders itself (the others are cut from the template)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rendered = 0
        rendered = _streamed_table._Rows._rendered

        def counting(rows: _streamed_table._Rows, row: Sequence[Cell], *, last: bool) -> object:
            self.rendered += 1
            return rendered(rows, row, last=last)

        monkeypatch.setattr(_streamed_table._Rows, "_rendered", counting)


@pytest.mark.parametrize("width", [80, 200], ids=["80", "200"])
@pytest.mark.parametrize("color", [False, True], ids=["plain", "color"])
def test_print_timeline_writes_what_print_writes(monkeypatch, color, width):
    counted = _Counted(monkeypatch)
    stream_in_few_lines(monkeypatch)
    turns = DEMO_TURNS
    printed, streamed = printed_and_streamed(color=color, width=width)

    printed.print(timeline_table(turns, 7000, "replay of the demo session"))
    print_timeline(streamed, turns, 7000, "replay of the demo session")

    with_compactions = sum(1 for t in turns if t.compactions)
    # rich renders the rows with a compaction, the first plain row and the last one
    assert (written(streamed), with_compactions > 1, counted.rendered) == (
        written(printed),
        True,
        with_compactions + 2,
    )


def test_print_timeline_of_no_turn_writes_what_print_writes():
    printed, streamed = printed_and_streamed(color=False, width=80)
    printed.print(timeline_table(TurnLog(), 100, "empty"))
    print_timeline(streamed, TurnLog(), 100, "empty")
    assert written(streamed) == written(printed)


_WORDS = st.text(alphabet=st.sampled_from("ab~,0123456789█·│┃漢é"), min_size=0, max_size=14)
_CELLS = st.one_of(
    _WORDS,
    st.lists(_WORDS, min_size=1, max_size=4).map(" ".join),
    st.tuples(_WORDS, _WORDS).map(lambda ab: Text.assemble(("●", "red"), " ", ab[0], " ", ab[1])),
)


def _new_table(justify: Sequence[str], title: str | None) -> Table:
    table = Table(title=title, title_justify="left")
    for index, how in enumerate(justify):
        table.add_column(
            f"column {index}",
            justify="right" if how == "r" else "left",
            style="dim" if index == 1 else None,
            no_wrap=index == 2,
        )
    return table


@settings(max_examples=100, deadline=None)
@given(
    justify=st.lists(st.sampled_from("lr"), min_size=1, max_size=4),
    rows=st.lists(st.lists(_CELLS, min_size=4, max_size=4), max_size=12),
    title=st.one_of(st.none(), st.text(alphabet="ab ", max_size=50)),
    width=st.sampled_from([12, 30, 80]),
    color=st.booleans(),
)
def test_print_table_streamed_writes_what_print_writes(justify, rows, title, width, color):
    cells = [tuple(row[: len(justify)]) for row in rows]

    def all_rows() -> Iterator[Sequence[Cell]]:
        return iter(cells)

    printed, streamed = printed_and_streamed(color=color, width=width)
    table = _new_table(justify, title)
    for row in cells:
        table.add_row(*row)
    printed.print(table)
    print_table_streamed(streamed, lambda: _new_table(justify, title), all_rows)
    assert written(streamed) == written(printed)


def test_a_row_unlike_its_template_is_rendered_by_rich(monkeypatch):
    """When the first plain row's line is not what the template expects (here the words
    are put in wrongly), no row is cut from it: every one is rich's own."""
    counted = _Counted(monkeypatch)
    monkeypatch.setattr(_streamed_table._Rows, "_words", lambda rows, row: ["?"] * len(row))
    rows = [(str(n), f"~{n * 1000:,}") for n in range(20)]

    def new_table() -> Table:
        table = Table()
        table.add_column("turn", justify="right")
        table.add_column("tokens")
        return table

    printed, streamed = printed_and_streamed(color=False, width=80)
    table = new_table()
    for row in rows:
        table.add_row(*row)
    printed.print(table)
    print_table_streamed(streamed, new_table, lambda: iter(rows))
    assert (written(streamed), counted.rendered) == (written(printed), len(rows))


def test_timeline_rows_are_the_records_figures():
    """A record read back from the log prints the row of the turn it was made from."""
    turns = list(DEMO_TURNS)
    again = TurnLog([TurnRecord.of(t.replay_turn()) for t in turns])
    printed, streamed = printed_and_streamed(color=False, width=120)
    print_timeline(printed, turns, 7000, "t")
    print_timeline(streamed, again, 7000, "t")
    assert written(streamed) == written(printed)
