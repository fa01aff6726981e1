"""``forge-compact batch``: compact many transcripts, with per-file metrics as JSONL."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from forge_app.cli.compacting import CompactionMetrics, compact_transcript
from forge_app.cli.console import err, fail
from forge_app.cli.options import AgentId, AgentPath, Force, compaction_mode, resolve_agent
from forge_app.cli.report import batch_table
from forge_app.errors import (
    CompactionFailed,
    OutputNotWritten,
    TranscriptError,
    TranscriptNotFound,
)
from forge_app.files._transcripts import read_transcript, write_text_atomic, write_transcript

METRICS_FILE = "metrics.jsonl"
"""Name of the per-file metrics written into the output directory."""


def find_transcripts(source: str) -> list[Path]:
    """The ``*.json``/``*.jsonl`` files of a directory, or the files a glob matches, sorted."""
    root = Path(source)
    if root.is_dir():
        found = [p for p in root.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file()]
    else:
        found = [Path(p) for p in glob.glob(source, recursive=True) if Path(p).is_file()]
    return sorted(found)


def output_paths(files: list[Path], outdir: Path) -> list[Path]:
    """Where each input goes: its path below the inputs' common directory, inside ``outdir``.

    Files of one directory keep their names; a recursive glob keeps its sub-directories,
    so two inputs with the same name never overwrite each other.
    """
    parents = [str(path.resolve().parent) for path in files]
    root = Path(os.path.commonpath(parents)) if parents else Path()
    return [outdir / path.resolve().relative_to(root) for path in files]


def batch_command(
    source: Annotated[
        str,
        typer.Argument(
            metavar="DIR_OR_GLOB",
            help="A directory of .json/.jsonl files, or a quoted glob such as 'runs/**/*.json'.",
            show_default=False,
        ),
    ],
    outdir: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Directory for the compacted transcripts and metrics.jsonl.",
            show_default=False,
        ),
    ],
    agent: AgentPath = None,
    agent_id: AgentId = None,
    force: Force = False,
) -> None:
    """Compact many transcripts; exit 1 if any file failed (the others are still written)."""
    chosen = resolve_agent(agent, agent_id)
    files = find_transcripts(source)
    if not files:
        raise TranscriptNotFound(source, "no .json or .jsonl files match")
    if outdir.exists() and not outdir.is_dir():
        raise OutputNotWritten(outdir, "it exists and is not a directory")
    outdir.mkdir(parents=True, exist_ok=True)
    rows: list[CompactionMetrics] = []
    failures: list[tuple[str, str]] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("compacting", total=len(files))
        for path, target in zip(files, output_paths(files, outdir), strict=True):
            progress.update(task, description=f"compacting {path.name}")
            if target.resolve() == path.resolve():
                failures.append((str(path), f"{path}: the output would overwrite the input"))
                progress.advance(task)
                continue
            try:
                compacted, metrics = compact_transcript(
                    read_transcript(path), chosen, source=str(path), mode=compaction_mode(force)
                )
                target.parent.mkdir(parents=True, exist_ok=True)
                write_transcript(target, compacted)
            except (TranscriptError, CompactionFailed, OutputNotWritten) as exc:
                failures.append((str(path), str(exc)))
            else:
                rows.append(metrics.model_copy(update={"output": str(target)}))
            progress.advance(task)
    lines = [row.model_dump_json() + "\n" for row in rows]
    lines += [json.dumps({"input": name, "error": error}) + "\n" for name, error in failures]
    write_text_atomic(outdir / METRICS_FILE, "".join(lines))
    err.print(batch_table(rows, failures, outdir))
    for _, error in failures:
        fail(error)
    err.print(f"metrics: {outdir / METRICS_FILE}")
    if failures:
        raise typer.Exit(1)
