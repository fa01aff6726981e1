"""Does the context stay inside its window? A replay report over real sessions.

Every session is replayed turn by turn (``forge_app.Replay``: the real
orchestrator, handler and engine, no model) under the bundled default agent
with a window of 8,000, 16,000 and 32,000 tokens (threshold 70%), and the
report shows per session and window:

- **peak request / window**: the largest request actually sent (after any
  preflight compaction), as a fraction of the window; must be <= 1.00;
- **after / threshold**: the context right after each compaction as a fraction
  of the threshold (largest and median); the target is ``1 - headroom`` (0.70);
- **compactions** and **ineffective** ones (``compaction_suspended`` events);
- **turns between** compactions (median);
- **largest summary** in tokens, next to the summary budget.

Run::

    python -m benchmarks.bounded                      # shared sessions, Markdown to stdout
    python -m benchmarks.bounded --sessions DIR ...   # other directories too
    python -m benchmarks.bounded --out benchmarks/BOUNDED.md
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from forge_app import ContextDoesNotFit, Replay, configure_logging, default_agent, read_transcript
from forge_app.compaction._compactor import is_summary_message
from forge_app.runtime._hookspecs import hookimpl
from forge_domain import Agent, CompactionResult, Context

WINDOWS = (8_000, 16_000, 32_000)
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sessions"


@dataclass
class _Watch:
    """Counts ineffective compactions and the largest summary."""

    name: str = "bounded-report"
    ineffective: int = 0
    largest_summary: int = 0
    after: list[int] = field(default_factory=list)

    @hookimpl
    def forge_on_compaction_suspended(self) -> None:
        self.ineffective += 1

    @hookimpl
    def forge_on_compaction_end(self, result: CompactionResult) -> None:
        if result.compacted_range is not None:
            self.after.append(result.compacted_tokens)


@dataclass(frozen=True)
class Row:
    """One session replayed under one window."""

    session: str
    window: int
    threshold: int
    turns: int
    peak_request: int
    after_max: float | None
    after_median: float | None
    compactions: int
    ineffective: int
    turns_between: float | None
    largest_summary: int
    summary_budget: int
    final_tokens: int
    recorded_tokens: int
    stopped: str | None = None
    """Why the replay stopped early (a context that cannot fit), None when it ran through."""


def _largest_summary(context: Context) -> int:
    return max((m.approx_tokens for m in context if is_summary_message(m)), default=0)


async def replay_row(path: Path, agent: Agent, window: int) -> Row:
    """Replay ``path`` under ``agent`` with a ``window``-token model."""
    transcript = read_transcript(path).context
    watch = _Watch()
    session = Replay(transcript, agent, plugins=[(watch.name, watch)], context_length=window)
    threshold = agent.compaction_threshold(window)
    peak = 0
    compacted_at: list[int] = []
    turns = 0
    largest_summary = 0
    last_tokens = recorded = 0
    stopped: str | None = None
    try:
        async for turn in session.turns():
            turns = turn.turn
            peak = max(peak, int(turn.request_tokens))
            if turn.compactions:
                compacted_at.append(turn.turn)
                summary = _largest_summary(session.conversation.context)
                largest_summary = max(largest_summary, summary)
            last_tokens, recorded = int(turn.tokens), turn.recorded_tokens
    except ContextDoesNotFit as exc:
        stopped = f"turn {turns + 1}: {exc}"
    gaps = [b - a for a, b in itertools.pairwise(compacted_at)]
    fractions = [tokens / threshold for tokens in watch.after]
    return Row(
        session=path.stem,
        window=window,
        threshold=threshold,
        turns=turns,
        peak_request=peak,
        after_max=max(fractions) if fractions else None,
        after_median=statistics.median(fractions) if fractions else None,
        compactions=len(watch.after),
        ineffective=watch.ineffective,
        turns_between=statistics.median(gaps) if gaps else None,
        largest_summary=largest_summary,
        summary_budget=agent.compact.summary_budget(threshold),
        final_tokens=last_tokens,
        recorded_tokens=recorded,
        stopped=stopped,
    )


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(rows: Sequence[Row], command: str) -> str:
    """The report as Markdown."""
    lines = [
        "# Bounded context: replays of real sessions at small windows",
        "",
        f"Command: `{command}`",
        "",
        "Agent: the bundled default (`eviction_window 0.6`, `retention_window 6`, threshold 70%",
        "of the window, `headroom 0.3`, summary budget 30% of the threshold), frame engine in",
        "its tiers. Sizes are the estimate (4 chars/token) once a compaction happened, the",
        "recorded usage before.",
        "",
        "| session | window | turns | peak request / window | after / threshold (max, median)"
        " | compactions | ineffective | turns between (median) | largest summary / budget"
        " | final / uncompacted |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.session} | {row.window:,} | {row.turns} "
            f"| {row.peak_request / row.window:.2f} "
            f"| {_fmt(row.after_max)}, {_fmt(row.after_median)} "
            f"| {row.compactions} | {row.ineffective} | {_fmt(row.turns_between, 1)} "
            f"| {row.largest_summary:,} / {row.summary_budget:,} "
            f"| {row.final_tokens:,} / {row.recorded_tokens:,} |"
        )
    for row in rows:
        if row.stopped is not None:
            lines.append(f"\n- stopped: {row.session} at {row.window:,}: {row.stopped}")
    over = [r for r in rows if r.peak_request > r.window]
    worst = max(rows, key=lambda r: r.peak_request / r.window)
    after = [r.after_max for r in rows if r.after_max is not None]
    gaps = [r.turns_between for r in rows if r.turns_between is not None]
    stopped = sum(r.stopped is not None for r in rows)
    lines += [
        "",
        f"Replays: {len(rows)}. Requests over the window: {len(over)}. "
        f"Replays stopped by a context that cannot fit: {stopped}. "
        f"Worst peak: {worst.peak_request / worst.window:.2f} of the window "
        f"({worst.session}, {worst.window:,}). "
        f"Largest context after a compaction: {max(after, default=0):.2f} of the threshold. "
        f"Ineffective compactions: {sum(r.ineffective for r in rows)}. "
        f"Median turns between compactions: {_fmt(statistics.median(gaps) if gaps else None, 1)}. "
        f"Summaries over their budget: "
        f"{sum(r.largest_summary > r.summary_budget for r in rows)}.",
        "",
    ]
    return "\n".join(lines)


async def _rows(paths: Sequence[Path], windows: Sequence[int]) -> list[Row]:
    agent = default_agent()
    return [await replay_row(path, agent, window) for path in paths for window in windows]


def main(argv: Sequence[str] | None = None) -> int:
    """Replay every session at every window and print (or write) the report."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bounded")
    parser.add_argument("--sessions", type=Path, nargs="*", default=[_SHARED])
    parser.add_argument("--windows", default=",".join(str(w) for w in WINDOWS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    configure_logging(level="error")
    paths = sorted(p for directory in args.sessions for p in directory.glob("*.json"))
    windows = [int(w) for w in args.windows.split(",")]
    rows = anyio.run(_rows, paths, windows)
    command = "python -m benchmarks.bounded " + " ".join(argv or sys.argv[1:])
    text = render(rows, command.strip())
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
