"""``forge-compact replay``: feed a transcript turn by turn through the real event pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.table import Table

from forge_app.chart import chart_format, render_chart
from forge_app.chart_axes import Sample
from forge_app.cli.compacting import ensure_provider_valid
from forge_app.cli.console import err
from forge_app.cli.options import AgentId, AgentPath, Session, resolve_agent
from forge_app.dispatch import discover_plugins
from forge_app.replay import Replay, ReplayTurn
from forge_app.transcripts import (
    Transcript,
    read_transcript,
    write_bytes_atomic,
    write_text_atomic,
    write_transcript,
)
from forge_domain import Agent, Context, Role, TokenCount

BAR_WIDTH = 20


async def replay_turns(transcript: Transcript, agent: Agent) -> tuple[list[ReplayTurn], Replay]:
    """Replay ``transcript`` under ``agent`` (entry-point plugins observe it too)."""
    session = Replay(transcript.context, agent, plugins=discover_plugins())
    turns = [turn async for turn in session.turns()]
    return turns, session


def recorded_sizes(context: Context) -> list[int]:
    """Estimated tokens of the recording at the end of each turn, without compaction.

    A turn ends just before the next assistant message (its tool results included).
    """
    sizes: list[int] = []
    total = 0
    seen_response = False
    for message in context:
        if message.has_role(Role.ASSISTANT) and seen_response:
            sizes.append(total)
        seen_response = seen_response or message.has_role(Role.ASSISTANT)
        total += message.approx_tokens
    if seen_response:
        sizes.append(total)
    return sizes


def chart_samples(
    turns: list[ReplayTurn], recorded: list[int]
) -> tuple[list[Sample], list[Sample]]:
    """The replayed sizes (a drop at every compaction) and the sizes without compaction."""
    samples: list[Sample] = []
    for turn in turns:
        if turn.compactions:
            samples.append(Sample(turn.turn, turn.compactions[0].original_tokens))
        samples.append(Sample(turn.turn, int(turn.tokens), compaction=bool(turn.compactions)))
    baseline = [Sample(turn.turn, size) for turn, size in zip(turns, recorded, strict=False)]
    return samples, baseline


def _tokens(count: TokenCount) -> str:
    return f"{count.value:,}" if count.is_actual() else f"~{count.value:,}"


def _bar(tokens: int, scale: int, threshold: int) -> str:
    filled = min(BAR_WIDTH, round(tokens / scale * BAR_WIDTH)) if scale else 0
    mark = min(BAR_WIDTH - 1, round(threshold / scale * BAR_WIDTH)) if scale else 0
    cells = ["█" if i < filled else "·" for i in range(BAR_WIDTH)]
    if mark < BAR_WIDTH:
        cells[mark] = "│" if mark >= filled else "┃"
    return "".join(cells)


def timeline_table(
    turns: list[ReplayTurn], recorded: list[int], threshold: int, title: str
) -> Table:
    """One row per turn: size, a bar against the threshold (│), and each compaction."""
    scale = max([threshold, *(int(t.tokens) for t in turns), *recorded])
    table = Table(title=title, title_justify="left", caption_justify="left")
    table.add_column("turn", justify="right")
    table.add_column("msgs", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("uncompacted", justify="right", style="dim")
    table.add_column(f"│ = {threshold:,}", no_wrap=True)
    table.add_column("compaction (range before→after)")
    for turn, without in zip(turns, recorded, strict=False):
        events = [
            f"[red]●[/red] {c.compacted_range[0]}..{c.compacted_range[1]} "
            f"{c.original_tokens:,}→{c.compacted_tokens:,}"
            for c in turn.compactions
            if c.compacted_range is not None
        ]
        table.add_row(
            str(turn.turn),
            str(turn.messages),
            _tokens(turn.tokens),
            f"~{without:,}",
            _bar(int(turn.tokens), scale, threshold),
            " ".join(events),
        )
    return table


def replay_summary(turns: list[ReplayTurn], context: Context) -> str:
    """One line: turns, compactions, final size against the recording's."""
    if not turns:
        return "the transcript has no assistant turn to replay"
    last = turns[-1]
    count = sum(len(t.compactions) for t in turns)
    recorded = context.token_count_approx()
    saved = max(0.0, (1 - int(last.tokens) / recorded) * 100) if recorded else 0.0
    return (
        f"{len(turns)} turns, {count} compaction{'s' if count != 1 else ''}; final context "
        f"{_tokens(last.tokens)} tokens in {last.messages} messages, against ~{recorded:,} "
        f"tokens in {len(context)} messages without compaction ({saved:.0f}% smaller)"
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
) -> None:
    """Replay a transcript as if each assistant message were a provider response.

    No model is called: hooks and the CompactionHandler fire exactly as in a live run.
    Prints a timeline of context size per turn with every compaction marked.
    """
    if chart is not None:
        chart_format(chart)
    chosen = resolve_agent(agent, agent_id)
    transcript = read_transcript(session)
    ensure_provider_valid(transcript, session)
    turns, replayed = anyio.run(replay_turns, transcript, chosen)
    threshold = chosen.compaction_threshold()
    recorded = recorded_sizes(transcript.context)
    title = f"replay of {session} with agent {chosen.id}"
    err.print(timeline_table(turns, recorded, threshold, title))
    err.print(replay_summary(turns, transcript.context))
    if output is not None:
        write_transcript(output, transcript.with_context(replayed.conversation.context))
        err.print(f"replayed transcript: {output}")
    if json_metrics is not None:
        write_text_atomic(json_metrics, "".join(t.model_dump_json() + "\n" for t in turns))
    if chart is not None:
        samples, baseline = chart_samples(turns, recorded)
        title = f"{Path(session).name} · agent {chosen.id} · context size per turn"
        write_bytes_atomic(
            chart, render_chart(chart, samples, threshold=threshold, title=title, baseline=baseline)
        )
        err.print(f"chart: {chart}")
