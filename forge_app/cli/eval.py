"""``forge-compact eval``: replay sessions at several windows and score what compaction kept."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forge_app.cli.console import out
from forge_app.cli.options import (
    AgentId,
    AgentPath,
    FormatName,
    TokenizerName,
    resolve_agent,
    tokenizer_loader,
)
from forge_app.files._atomic import check_outputs, write_text_atomic

if TYPE_CHECKING:  # the evaluation layer loads when `eval` runs (start-up time)
    from forge_app.evaluation import SessionEval
    from forge_app.files._file_format import FileFormat
    from forge_app.files._tokenizer import TokenizerLoader
    from forge_domain import Agent

DEFAULT_WINDOWS = "8000,16000,32000"
KINDS = ("task", "asks", "modified_paths", "failures", "last_error")
"""The facts scored, in the order of the table's columns."""


def _ratio(pair: tuple[int, int]) -> float:
    found, total = pair
    return 1.0 if total == 0 else found / total


def _percent(pair: tuple[int, int]) -> str:
    found, total = pair
    return "-" if total == 0 else f"{found}/{total}"


def totals(rows: list[SessionEval]) -> dict[str, float]:
    """Retention per kind over every row (facts found / facts), and the cost ratio."""
    summed = {
        kind: (sum(getattr(r, kind)[0] for r in rows), sum(getattr(r, kind)[1] for r in rows))
        for kind in KINDS
    }
    billed = sum(r.billed for r in rows)
    uncompacted = sum(r.billed_uncompacted for r in rows)
    return {
        **{kind: _ratio(pair) for kind, pair in summed.items()},
        "cost_ratio": billed / uncompacted if uncompacted else 1.0,
    }


HEADERS = (
    "session",
    "window",
    "valid",
    "peak / window",
    "peak / threshold",
    "compactions",
    "ineffective",
    "largest summary",
    "summary calls",
    "summary prompt tokens",
    "task",
    "asks",
    "modified paths",
    "failures with evidence",
    "last error",
    "billed / uncompacted",
)


def markdown_table(rows: list[SessionEval]) -> str:
    """One Markdown row per session and window, then a line of totals."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|---" + "|---:" * (len(HEADERS) - 1) + "|"]
    for r in rows:
        cells = (
            r.session,
            f"{r.window:,}",
            "yes" if r.valid and r.stopped is None else "NO",
            f"{r.peak_request / r.window:.2f}",
            f"{r.peak_request / r.threshold:.2f}",
            str(r.compactions),
            str(r.ineffective),
            f"{r.largest_summary:,}",
            str(r.summary_calls),
            f"{r.summary_prompt_tokens:,}",
            *(_percent(getattr(r, kind)) for kind in KINDS),
            f"{r.billed / r.billed_uncompacted:.2f}" if r.billed_uncompacted else "-",
        )
        lines.append("| " + " | ".join(cells) + " |")
    summary = totals(rows)
    lines += [
        "",
        "Facts kept over all rows: "
        + ", ".join(f"{kind.replace('_', ' ')} {summary[kind]:.0%}" for kind in KINDS)
        + f". Prompt tokens billed: {summary['cost_ratio']:.2f} of no compaction."
        + f" Summary calls: {sum(r.summary_calls for r in rows):,}"
        + f" ({sum(r.summary_prompt_tokens for r in rows):,} prompt tokens).",
        "",
    ]
    return "\n".join(lines)


async def _evaluate_all(
    sessions: list[Path],
    agent: Agent,
    windows: list[int],
    discount: float,
    fmt: FileFormat | None = None,
    loader: TokenizerLoader | None = None,
) -> list[SessionEval]:
    from forge_app.evaluation import evaluate
    from forge_app.files._tokenizer import TokenizerLoader
    from forge_app.files._transcripts import read_transcript

    rows = []
    loader = loader or TokenizerLoader(agent.compact.tokenizer)
    for path in sessions:
        transcript = read_transcript(str(path), fmt)
        meter = loader.meter(model=agent.model, fmt=transcript.format)
        for window in windows:
            rows.append(
                await evaluate(
                    transcript.context,
                    agent,
                    window=window,
                    session=path.stem,
                    cache_discount=discount,
                    meter=meter,
                )
            )
    return rows


def eval_command(
    sessions: Annotated[list[Path], typer.Argument(metavar="SESSION...", show_default=False)],
    agent: AgentPath = None,
    agent_id: AgentId = None,
    windows: Annotated[
        str, typer.Option("--windows", help="Model windows to replay at, comma-separated.")
    ] = DEFAULT_WINDOWS,
    cache_discount: Annotated[
        float,
        typer.Option(
            "--cache-discount", min=0.0, max=1.0, help="Price of a cached prompt token (0.1 = 10%)."
        ),
    ] = 0.1,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write one JSON object per row here (JSONL).")
    ] = None,
    fmt: FormatName = None,
    tokenizer: TokenizerName = None,
) -> None:
    """Replay sessions turn by turn at each window; print validity, size, facts kept, cost."""
    import anyio  # imported when used: start-up time

    check_outputs([json_path], inputs=[*sessions, agent])
    chosen = resolve_agent(agent, agent_id)
    try:
        sizes = [int(w) for w in windows.split(",") if w.strip()]
    except ValueError as exc:
        raise typer.BadParameter(f"--windows: {windows!r} is not a list of integers") from exc
    if not sizes or min(sizes) <= 0:
        raise typer.BadParameter(f"--windows: {windows!r} is not a list of positive integers")
    rows = anyio.run(
        _evaluate_all,
        sessions,
        chosen,
        sizes,
        cache_discount,
        fmt,
        tokenizer_loader(tokenizer, chosen),
    )
    out.print(markdown_table(rows), markup=False, soft_wrap=True)
    if json_path is not None:
        write_text_atomic(json_path, "".join(r.model_dump_json() + "\n" for r in rows))
    if not all(r.valid and r.stopped is None for r in rows):
        raise typer.Exit(1)
