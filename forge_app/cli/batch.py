"""``forge-compact batch``: compact many transcripts, with per-file metrics as JSONL."""

from __future__ import annotations

import glob
import json
import os
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeAlias

import typer

from forge_app.cli.console import err, fail
from forge_app.cli.options import (
    AgentId,
    AgentPath,
    Force,
    FormatName,
    TokenizerName,
    compaction_mode,
    resolve_agent,
)
from forge_app.errors import (
    CompactionFailed,
    OutputNotWritten,
    TranscriptError,
    TranscriptNotFound,
)
from forge_app.files._atomic import check_writable, ensure_not_an_input
from forge_app.files._file_format import FileFormat
from forge_domain import CompactionMode, TokenizerChoice

if TYPE_CHECKING:  # imported by the functions that use them: start-up time
    from forge_app.cli.compacting import CompactionMetrics
    from forge_app.files._tokenizer import TokenizerLoader
    from forge_domain import Agent

_HEAVY = ("forge_app.cli.compacting", "forge_app.files._transcripts", "forge_app.compaction")
"""What a worker needs to compact, imported once by the fork server (see :func:`_run`)."""

METRICS_FILE = "metrics.jsonl"
"""Name of the per-file metrics written into the output directory."""


def find_transcripts(source: str) -> list[Path]:
    """The ``*.json``/``*.jsonl`` names of a directory, or what a glob matches, sorted.

    A name with a transcript suffix is kept whatever it is (a directory, a FIFO, a
    dangling link, a link loop): it then fails as a file of its own, never silently
    skipped. Other names a glob matches count only when they are regular files. Names
    that resolve to the same file (a symlink beside its target) count once: the first in
    sorted order.
    """
    root = Path(source)
    if root.is_dir():
        found = [p for p in root.iterdir() if _is_transcript_name(p)]
    else:
        found = [
            Path(p)
            for p in glob.glob(source, recursive=True)
            if _is_transcript_name(Path(p)) or Path(p).is_file()
        ]
    unique = {os.path.realpath(path): path for path in sorted(found, reverse=True)}
    return sorted(unique.values())  # a symlink and its target are one input


def _is_transcript_name(path: Path) -> bool:
    return path.suffix in (".json", ".jsonl")


def _size(path: Path) -> int:
    """Bytes of a regular file, 0 for anything else (the read reports what it is)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except (OSError, RuntimeError):
        return 0


def output_paths(files: list[Path], outdir: Path) -> list[Path]:
    """Where each input goes: its path below the inputs' common directory, inside ``outdir``.

    Files of one directory keep their names; a recursive glob keeps its sub-directories,
    so two inputs with the same name never overwrite each other.
    """
    resolved = [Path(os.path.realpath(path)) for path in files]  # a link loop does not raise
    parents = [str(path.parent) for path in resolved]
    root = Path(os.path.commonpath(parents)) if parents else Path()
    return [outdir / path.relative_to(root) for path in resolved]


_Done: TypeAlias = "tuple[int, CompactionMetrics | None, str | None]"
"""One file's outcome: its position, its metrics, or the error that stopped it."""


def compact_file(
    index: int,
    path: Path,
    target: Path,
    agent: Agent,
    mode: CompactionMode,
    fmt: FileFormat | None = None,
) -> _Done:
    """Read, compact and write one file; a bad file is reported, never raised.

    Module-level so a worker process can run it (arguments and result are picklable).
    """
    from forge_app.cli._collector import collector_paused
    from forge_app.cli.compacting import compact_transcript  # imported when used: start-up
    from forge_app.files._transcripts import read_transcript, write_transcript

    try:
        with collector_paused():
            transcript = read_transcript(path, fmt)
            meter = _loader(agent.compact.tokenizer).meter(model=agent.model, fmt=transcript.format)
            compacted, metrics = compact_transcript(
                transcript, agent, source=str(path), mode=mode, meter=meter
            )
            write_transcript(target, compacted)
    except (TranscriptError, CompactionFailed, OutputNotWritten) as exc:
        return index, None, str(exc)
    return index, metrics.model_copy(update={"output": str(target)}), None


@cache
def _loader(choice: TokenizerChoice) -> TokenizerLoader:
    """One loader per process and setting: tiktoken loads, or its fallback is logged, once."""
    from forge_app.files._tokenizer import TokenizerLoader  # imported when used: start-up

    return TokenizerLoader(choice)


def prepare_outputs(
    files: list[Path], targets: list[Path], outdir: Path, agent: Path | None
) -> None:
    """Check every output against every input, then create the output directories.

    Runs before any file is compacted, so a bad ``-o`` writes nothing: no output may be
    an input (nor the agent file), and every directory must be creatable.

    Raises:
        OutputIsInput: an output (or ``metrics.jsonl``) is one of the inputs.
        OutputNotWritten: ``outdir`` or a sub-directory cannot be created or written.
    """
    outputs = [outdir / METRICS_FILE, *targets]
    ensure_not_an_input(outputs, inputs=[*files, agent])
    written = {os.path.realpath(outputs[0]): "the per-file metrics"}
    for path, target in zip(files, targets, strict=True):
        first = written.setdefault(os.path.realpath(target), str(path))
        if first != str(path):
            raise OutputNotWritten(target, f"both {first} and {path} would be written here")
    for directory in sorted({target.parent for target in outputs}):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise OutputNotWritten(directory, "it exists and is not a directory") from exc
        except NotADirectoryError as exc:
            raise OutputNotWritten(directory, "a parent of it is not a directory") from exc
        except OSError as exc:
            raise OutputNotWritten(directory, exc.strerror or str(exc)) from exc
    check_writable(outputs)


_Work: TypeAlias = "tuple[int, Path, Path, Agent, CompactionMode, FileFormat | None]"
"""One file's job: the arguments of :func:`compact_file`."""


def _run(jobs: int, work: list[_Work]) -> Iterator[_Done]:
    """Each file's outcome as it completes: in this process for one job, else in a pool.

    Workers start from a fork server (a clean process, not a fork of this one and its
    progress-bar thread).
    """
    if jobs <= 1 or len(work) <= 1:
        yield from (compact_file(*item) for item in work)
        return
    import multiprocessing  # imported when used: start-up time
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, *_HEAVY])  # workers fork from a server that has them
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(compact_file, *item) for item in work]
        for future in as_completed(futures):
            yield future.result()


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
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Files compacted at once, each in its own process. Default: the number of cores.",
            show_default=False,
        ),
    ] = None,
    fmt: FormatName = None,
    tokenizer: TokenizerName = None,
) -> None:
    """Compact many transcripts; exit 1 if any file failed (the others are still written).

    ``metrics.jsonl`` is written as files complete (in input order at the end of the
    run for the table), so a run that is killed leaves the metrics of what it wrote.
    """
    from rich.progress import (  # imported when used: start-up time
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
    )

    from forge_app.cli.report import batch_table

    chosen = resolve_agent(agent, agent_id)
    if tokenizer is not None:  # the workers read it from the agent (picklable)
        chosen = chosen.model_copy(
            update={"compact": chosen.compact.model_copy(update={"tokenizer": tokenizer})}
        )
    files = find_transcripts(source)
    if not files:
        raise TranscriptNotFound(source, "no .json or .jsonl files match")
    workers = jobs or os.cpu_count() or 1
    mode = compaction_mode(force)
    targets = output_paths(files, outdir)
    prepare_outputs(files, targets, outdir, agent)
    work = [
        (i, path, target, chosen, mode, fmt)
        for i, (path, target) in enumerate(zip(files, targets, strict=True))
    ]
    done: dict[int, tuple[CompactionMetrics | None, str | None]] = {}
    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with (
        Progress(*columns, console=err, transient=True) as progress,
        (outdir / METRICS_FILE).open("w", encoding="utf-8") as metrics_file,
    ):
        task = progress.add_task(f"compacting ({workers} jobs)", total=len(files))
        for index, metrics, error in _run(workers, work):
            done[index] = (metrics, error)
            line = (
                metrics.model_dump_json()
                if metrics is not None
                else json.dumps({"input": str(files[index]), "error": error})
            )
            metrics_file.write(line + "\n")
            metrics_file.flush()
            progress.advance(task)
    seconds = time.perf_counter() - started
    rows = [m for i in sorted(done) if (m := done[i][0]) is not None]
    failures = [(str(files[i]), e) for i in sorted(done) if (e := done[i][1]) is not None]
    megabytes = sum(_size(path) for path in files) / 1_000_000
    err.print(batch_table(rows, failures, outdir, width=err.width))
    for _, error in failures:
        fail(error)
    err.print(
        f"metrics: {outdir / METRICS_FILE}; {len(files)} files, {megabytes:.1f} MB in "
        f"{seconds:.1f} s ({megabytes / seconds if seconds else 0:.1f} MB/s, {workers} jobs)"
    )
    if failures:
        raise typer.Exit(1)
