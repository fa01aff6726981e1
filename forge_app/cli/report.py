"""Rich tables the commands print on standard error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from forge_app.cli.compacting import CompactionMetrics

_TRIGGER_LABELS = {
    "threshold": "a trigger fired",
    "forced": "forced (--force)",
    "none": "no trigger fired",
}


def message_range(start: int, end: int) -> str:
    """The inclusive 0-based index range ``start..end`` as a person reads it: messages
    numbered from 1, as ``history show`` numbers the stored originals (seqs)."""
    return f"{start + 1}..{end + 1}"


def span_text(span: tuple[int, int] | None) -> str:
    """An inclusive 0-based range of message indices as the tables print it: numbered from
    1 (``-`` for none)."""
    return "-" if span is None else message_range(*span)


def metrics_table(metrics: CompactionMetrics) -> Group:
    """Before/after sizes of one compaction, then how it went."""
    table = Table()
    table.add_column("", style="bold")
    table.add_column("before", justify="right")
    table.add_column("after", justify="right")
    table.add_column("reduction", justify="right")
    table.add_row(
        "tokens",
        f"{metrics.tokens_before:,}",
        f"{metrics.tokens_after:,}",
        f"{metrics.token_reduction_percent:.1f}%",
    )
    table.add_row(
        "messages",
        f"{metrics.messages_before:,}",
        f"{metrics.messages_after:,}",
        f"{metrics.message_reduction_percent:.1f}%",
    )
    heading = Text.assemble(("compacted ", "bold"), metrics.input)
    if metrics.output is not None:
        heading.append(f" → {metrics.output}")
    details = Text.assemble(
        ("summarised: ", "bold"),
        "none" if metrics.summarised_range is None else span_text(metrics.summarised_range),
        (" · pruned: ", "bold"),
        "none" if metrics.pruned_range is None else span_text(metrics.pruned_range),
        ("\ntrigger: ", "bold"),
        f"{_TRIGGER_LABELS[metrics.trigger]} (threshold {metrics.token_threshold:,} tokens)",
        ("\nagent: ", "bold"),
        f"{metrics.agent} · engine {metrics.engine} · max_tokens budget "
        f"{metrics.budget_status} · {metrics.seconds:.3f}s",
    )
    return Group(heading, table, details)


def _is_unchanged(row: CompactionMetrics) -> bool:
    """No trigger fired, or the compaction left the transcript as it was."""
    return row.trigger == "none" or (
        row.tokens_before == row.tokens_after and row.messages_before == row.messages_after
    )


def batch_table(
    rows: Sequence[CompactionMetrics],
    failures: Sequence[tuple[str, str]],
    outdir: Path,
    width: int = 200,
) -> Table:
    """One row per file (named by its path inside ``outdir``) plus a total; failures are marked.

    Every cell stays on one line: within ``width`` columns (the terminal's) the file name
    is shortened (``…``), never a number. The caption counts compacted, unchanged and
    failed files apart.
    """
    before = sum(row.tokens_before for row in rows)
    after = sum(row.tokens_after for row in rows)
    reduction = (before - after) / before * 100 if before else 0.0
    cells = [
        [
            f"{row.tokens_before:,}",
            f"{row.tokens_after:,}",
            f"{row.token_reduction_percent:.1f}%",
            f"{row.messages_before} → {row.messages_after}",
            span_text(row.summarised_range),
            span_text(row.pruned_range),
            row.trigger,
        ]
        for row in rows
    ]
    total = [
        f"{before:,}",
        f"{after:,}",
        f"{reduction:.1f}%",
        f"{sum(r.messages_before for r in rows)} → {sum(r.messages_after for r in rows)}",
        "",
        "",
        "",
    ]
    names = ("tokens", "after", "saved", "messages", "summary", "pruned", "trigger")
    widths = [
        max(len(line[position]) for line in [[*names], *cells, total, ["failed"] * len(names)])
        for position in range(len(names))
    ]
    rest = width - sum(widths) - 2 * len(widths) - 2  # a blank and a separator per column
    table = Table(
        title="batch compaction", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0)
    )
    table.add_column("file", no_wrap=True, overflow="ellipsis", max_width=max(rest, 8))
    for name, column_width in zip(names, widths, strict=True):
        justify = "left" if name == "trigger" else "right"
        table.add_column(name, justify=justify, no_wrap=True, min_width=column_width)  # type: ignore[arg-type]
    for row, line in zip(rows, cells, strict=True):
        name = str(Path(row.output).relative_to(outdir)) if row.output else Path(row.input).name
        table.add_row(name, *line)
    for name, _ in failures:
        table.add_row(Path(name).name, Text("failed", style="red"), *[""] * (len(names) - 1))
    unchanged = sum(1 for row in rows if _is_unchanged(row))
    table.caption = (
        f"{len(rows) - unchanged} compacted, {unchanged} unchanged, {len(failures)} failed"
    )
    table.caption_justify = "left"
    table.add_section()
    table.add_row("total", *total)
    return table
