"""Rich tables the commands print on standard error."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text

from forge_app.cli.compacting import CompactionMetrics

_TRIGGER_LABELS = {
    "threshold": "a trigger fired",
    "forced": "forced (--force)",
    "none": "no trigger fired",
}


def _range(metrics: CompactionMetrics) -> str:
    if metrics.compacted_range is None:
        return "-"
    start, end = metrics.compacted_range
    return f"{start}..{end}"


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
        ("range compacted: ", "bold"),
        _range(metrics),
        ("\ntrigger: ", "bold"),
        f"{_TRIGGER_LABELS[metrics.trigger]} (threshold {metrics.token_threshold:,} tokens)",
        ("\nagent: ", "bold"),
        f"{metrics.agent} · engine {metrics.engine} · max_tokens budget "
        f"{metrics.budget_status} · {metrics.seconds:.3f}s",
    )
    return Group(heading, table, details)


def batch_table(
    rows: Sequence[CompactionMetrics], failures: Sequence[tuple[str, str]], outdir: Path
) -> Table:
    """One row per file (named by its path inside ``outdir``) plus a total; failures are marked."""
    table = Table(title="batch compaction", title_justify="left")
    for name, justify in [
        ("file", "left"),
        ("tokens before", "right"),
        ("after", "right"),
        ("reduction", "right"),
        ("messages", "right"),
        ("range", "right"),
        ("trigger", "left"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]  # literal from the list
    for row in rows:
        table.add_row(
            str(Path(row.output).relative_to(outdir)) if row.output else Path(row.input).name,
            f"{row.tokens_before:,}",
            f"{row.tokens_after:,}",
            f"{row.token_reduction_percent:.1f}%",
            f"{row.messages_before} → {row.messages_after}",
            _range(row),
            row.trigger,
        )
    for name, _ in failures:
        table.add_row(Path(name).name, Text("failed", style="red"), "", "", "", "", "")
    before = sum(row.tokens_before for row in rows)
    after = sum(row.tokens_after for row in rows)
    reduction = (before - after) / before * 100 if before else 0.0
    table.caption = f"{len(rows)} compacted, {len(failures)} failed"
    table.caption_justify = "left"
    table.add_section()
    table.add_row(
        "total",
        f"{before:,}",
        f"{after:,}",
        f"{reduction:.1f}%",
        f"{sum(r.messages_before for r in rows)} → {sum(r.messages_after for r in rows)}",
        "",
        "",
    )
    return table
