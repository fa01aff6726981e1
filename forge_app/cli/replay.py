"""``forge-compact replay``: feed a transcript turn by turn through the real event pipeline."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from forge_app.cli._streamed_table import Cell, print_table_streamed
from forge_app.cli.console import counted, err
from forge_app.cli.history import opened_store, source_stem, store_file
from forge_app.cli.options import (
    AgentId,
    AgentPath,
    FormatName,
    OtelOption,
    Session,
    StoreOption,
    TokenizerName,
    resolve_agent,
    tokenizer_loader,
)
from forge_app.files._atomic import check_outputs, write_bytes_atomic, write_text_atomic

if TYPE_CHECKING:  # the runtime, the store and the charts load when a command uses them
    from rich.console import Console

    from forge_app.cli._chart_axes import Sample
    from forge_app.files._transcripts import Transcript
    from forge_app.runtime._dispatch import NamedPlugin
    from forge_app.runtime._replay import Replay
    from forge_app.runtime._turn_log import TurnLog, TurnRecord
    from forge_app.store import SessionStore
    from forge_domain import Agent, CompactionResult, Context, TokenCount, TokenMeter

BAR_WIDTH = 20


async def replay_turns(
    transcript: Transcript,
    agent: Agent,
    store: SessionStore | None = None,
    meter: TokenMeter | None = None,
    observers: Sequence[NamedPlugin] = (),
    conversation_id: str | None = None,
    on_request: Sequence[Callable[[Context], object]] = (),
) -> tuple[TurnLog, Replay]:
    """Replay ``transcript`` under ``agent`` (entry-point plugins and ``observers`` observe it;
    each ``on_request`` is called with every request's context as it is sent).

    The turns are kept as plain numbers (a :class:`~forge_app.runtime._turn_log.TurnLog`);
    ``record.replay_turn()`` gives a turn's public ``ReplayTurn``."""
    from forge_app.runtime._dispatch import discover_plugins
    from forge_app.runtime._replay import Replay
    from forge_app.runtime._turn_log import TurnLog

    session = Replay(
        transcript.context,
        agent,
        plugins=[*discover_plugins(), *observers],
        store=store,
        meter=meter,
        conversation_id=conversation_id,
    )
    for listener in on_request:
        session.on_request(listener)
    turns = TurnLog()
    async for record in session.records():
        turns.append(record)
    return turns, session


def _compactions(turn: TurnRecord) -> list[CompactionResult]:
    """The compactions of ``turn`` that the table and the chart show (those that changed
    the context: summarised, pruned or cut)."""
    return [c for c in turn.compactions if c.compacted_range is not None]


def _what(result: CompactionResult) -> str:
    """What a compaction did: the range it summarised, else ``pruned`` and the range."""
    from forge_app.cli.report import span_text  # imported when used: start-up time

    if result.summarised_range is not None:
        return span_text(result.summarised_range)
    return f"pruned {span_text(result.pruned_range)}"


def chart_samples(turns: Sequence[TurnRecord]) -> tuple[list[Sample], list[Sample]]:
    """The replayed sizes and the sizes without compaction, as the timeline table prints them.

    Per turn: the size before and (marked) after each of its compactions, then its
    size at the end of the turn (the table's ``tokens``); the baseline is the
    recording's size at the end of each turn (the table's ``uncompacted``).
    """
    from forge_app.cli._chart_axes import Sample

    samples: list[Sample] = []
    for turn in turns:
        for compaction in _compactions(turn):
            samples.append(Sample(turn.turn, compaction.original_tokens))
            samples.append(Sample(turn.turn, compaction.compacted_tokens, compaction=True))
        samples.append(Sample(turn.turn, turn.token_value))
    baseline = [Sample(turn.turn, turn.recorded_tokens) for turn in turns]
    return samples, baseline


def timeline_chart(path: Path, turns: Sequence[TurnRecord], threshold: int, title: str) -> bytes:
    """The timeline of ``turns`` as a picture in the format ``path`` asks for (.svg or .png).

    Raises:
        ChartFormatUnsupported: any other suffix.
    """
    from forge_app.cli._chart import render_chart

    samples, baseline = chart_samples(turns)
    return render_chart(path, samples, threshold=threshold, title=title, baseline=baseline)


def _tokens(count: TokenCount) -> str:
    return _tokens_text(count.value, actual=count.is_actual())


def _tokens_text(value: int, *, actual: bool) -> str:
    """A size as the table shows it: ``~`` marks an estimate."""
    return f"{value:,}" if actual else f"~{value:,}"


def _bar(tokens: int, scale: int, threshold: int) -> str:
    filled = min(BAR_WIDTH, round(tokens / scale * BAR_WIDTH)) if scale else 0
    mark = min(BAR_WIDTH - 1, round(threshold / scale * BAR_WIDTH)) if scale else 0
    cells = ["█" if i < filled else "·" for i in range(BAR_WIDTH)]
    if mark < BAR_WIDTH:
        cells[mark] = "│" if mark >= filled else "┃"
    return "".join(cells)


def _new_timeline(threshold: int, title: str) -> Table:
    """The timeline's table: its title and columns, no row."""
    table = Table(title=title, title_justify="left", caption_justify="left")
    table.add_column("turn", justify="right")
    table.add_column("msgs", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("uncompacted", justify="right", style="dim")
    table.add_column(f"│ = {threshold:,}", no_wrap=True)
    table.add_column("compaction (range before→after)")
    return table


def _timeline_rows(turns: Sequence[TurnRecord], threshold: int) -> Iterator[tuple[Cell, ...]]:
    """The timeline's rows: the cells of one turn each (the last a ``Text`` listing the
    turn's compactions, a blank string when it had none)."""
    scale = max(
        threshold,
        max((t.token_value for t in turns), default=0),
        max((t.recorded_tokens for t in turns), default=0),
    )
    bars: dict[int, str] = {}
    for turn in turns:
        tokens = turn.token_value
        bar = bars.get(tokens)
        if bar is None:
            bar = bars[tokens] = _bar(tokens, scale, threshold)
        shown = _compactions(turn)
        events: Cell = ""
        if shown:
            events = Text(" ").join(
                Text.assemble(
                    ("●", "red"), f" {_what(c)} {c.original_tokens:,}→{c.compacted_tokens:,}"
                )
                for c in shown
            )
        yield (
            str(turn.turn),
            str(turn.messages),
            _tokens_text(tokens, actual=turn.tokens_actual),
            f"~{turn.recorded_tokens:,}",
            bar,
            events,
        )


def timeline_table(turns: Sequence[TurnRecord], threshold: int, title: str) -> Table:
    """One row per turn: its size, the size without compaction, a bar against the threshold.

    The last column lists each compaction of the turn: the range it summarised (or, with
    ``pruned``, the range whose outputs it only pruned) and the size before and after it.
    """
    table = _new_timeline(threshold, title)
    for row in _timeline_rows(turns, threshold):
        table.add_row(*row)
    return table


def print_timeline(
    console: Console, turns: Sequence[TurnRecord], threshold: int, title: str
) -> None:
    """``console.print(timeline_table(...))``, the same bytes, written a row at a time
    (neither the table's rows nor their rendered lines are all held at once)."""
    print_table_streamed(
        console, lambda: _new_timeline(threshold, title), lambda: _timeline_rows(turns, threshold)
    )


def replay_summary(turns: Sequence[TurnRecord]) -> str:
    """One line: turns, compactions, the last turn's size against the recording's."""
    if not turns:
        return "the transcript has no assistant turn to replay"
    last = turns[-1]
    count = sum(len(_compactions(t)) for t in turns)
    recorded = last.recorded_tokens
    saved = max(0.0, (1 - int(last.tokens) / recorded) * 100) if recorded else 0.0
    return (
        f"{counted(len(turns), 'turn')}, {counted(count, 'compaction')}; final context "
        f"{_tokens(last.tokens)} tokens in {counted(last.messages, 'message')}, against "
        f"~{recorded:,} tokens in {counted(last.recorded_messages, 'message')} without "
        f"compaction ({saved:.0f}% smaller)"
    )


def replay_command(
    session: Session,
    agent: AgentPath = None,
    agent_id: AgentId = None,
    chart: Annotated[
        Path | None,
        typer.Option("--chart", help="Write the timeline as a picture: .svg or .png."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the replayed (compacted) transcript here."),
    ] = None,
    json_metrics: Annotated[
        Path | None,
        typer.Option("--json-metrics", help="Write one JSON object per turn (JSONL) here."),
    ] = None,
    fmt: FormatName = None,
    store: StoreOption = None,
    tokenizer: TokenizerName = None,
    otel: OtelOption = False,
) -> None:
    """Replay a transcript as if each assistant message were a provider response.

    No model is called: hooks and the CompactionHandler fire exactly as in a live run.
    Prints a timeline of context size per turn with every compaction marked.
    """
    import anyio  # imported when used: start-up time

    from forge_app.cli._otel import otlp_telemetry
    from forge_app.cli.compacting import ensure_provider_valid
    from forge_app.files._transcripts import read_transcript, write_transcript

    if chart is not None:
        from forge_app.cli._chart import chart_format

        chart_format(chart)
    check_outputs([output, json_metrics, chart, store_file(store)], inputs=[session, agent])
    chosen = resolve_agent(agent, agent_id)
    transcript = read_transcript(session, fmt)
    ensure_provider_valid(transcript, session)
    meter = tokenizer_loader(tokenizer, chosen).meter(model=chosen.model, fmt=transcript.format)
    from forge_app.store import new_conversation_id

    with opened_store(store) as session_store, otlp_telemetry(otel, chosen):
        named = new_conversation_id(source_stem(session))
        turns, replayed = anyio.run(
            replay_turns, transcript, chosen, session_store, meter, (), named
        )
        if session_store is not None:
            err.print(f"stored as conversation {replayed.conversation.id} in {session_store.url}")
    threshold = chosen.compaction_threshold()
    title = f"replay of {session} with agent {chosen.id}"
    print_timeline(err, turns, threshold, title)
    err.print(replay_summary(turns))
    if output is not None:
        write_transcript(output, transcript.with_context(replayed.conversation.context))
        err.print(f"replayed transcript: {output}")
    if json_metrics is not None:
        write_text_atomic(
            json_metrics, "".join(t.replay_turn().model_dump_json() + "\n" for t in turns)
        )
    if chart is not None:
        title = f"{Path(session).name} · agent {chosen.id} · context size per turn"
        write_bytes_atomic(chart, timeline_chart(chart, turns, threshold, title))
        err.print(f"chart: {chart}")
