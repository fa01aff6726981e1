"""``forge-compact compact``: compact one transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from forge_app.cli._collector import collector_paused
from forge_app.cli.console import err
from forge_app.cli.history import store_file, stored_conversation
from forge_app.cli.options import (
    AgentId,
    AgentPath,
    Force,
    FormatName,
    Session,
    StoreOption,
    TokenizerName,
    compaction_mode,
    resolve_agent,
    tokenizer_loader,
)
from forge_app.files._atomic import STDIO, check_outputs, write_text_atomic


def compact_command(
    session: Session,
    output: Annotated[
        str,
        typer.Option(
            "--output", "-o", help="Where to write the compacted transcript (- = stdout)."
        ),
    ] = STDIO,
    agent: AgentPath = None,
    agent_id: AgentId = None,
    force: Force = False,
    json_metrics: Annotated[
        Path | None,
        typer.Option("--json-metrics", help="Also write the metrics as a JSON object here."),
    ] = None,
    fmt: FormatName = None,
    store: StoreOption = None,
    tokenizer: TokenizerName = None,
) -> None:
    """Compact a transcript with an agent's `compact:` settings.

    Writes the compacted transcript to -o (default stdout) and a metrics table to stderr.
    No output may be the input (or the agent file): that is refused before anything runs.
    """
    from rich.text import Text  # imported when used: start-up time

    from forge_app.cli.compacting import compact_transcript
    from forge_app.cli.report import metrics_table
    from forge_app.files._transcripts import read_transcript, write_transcript

    check_outputs([output, json_metrics, store_file(store)], inputs=[session, agent])
    chosen = resolve_agent(agent, agent_id)
    with collector_paused():
        transcript = read_transcript(session, fmt)
        meter = tokenizer_loader(tokenizer, chosen).meter(model=chosen.model, fmt=transcript.format)
        with stored_conversation(store, session, chosen) as recorder:
            compacted, metrics = compact_transcript(
                transcript,
                chosen,
                source=session,
                mode=compaction_mode(force),
                recorder=recorder,
                meter=meter,
            )
        write_transcript(output, compacted)
    if output != STDIO:
        metrics = metrics.model_copy(update={"output": output})
    if json_metrics is not None:
        write_text_atomic(json_metrics, metrics.model_dump_json(indent=2) + "\n")
    err.print(metrics_table(metrics))
    if metrics.trigger == "none":
        err.print(
            Text.assemble(
                ("no trigger fired", "yellow"),
                f": {metrics.tokens_before:,} tokens is under the threshold of "
                f"{metrics.token_threshold:,}; the transcript was written unchanged "
                "(use --force to compact anyway).",
            )
        )
