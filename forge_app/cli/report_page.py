"""``forge-compact report``: replay a session and write what compaction did as one HTML page.

Only typer and the shared options are imported here; the replay, the store and the
template engine are imported when the command runs (``forge-compact --help`` stays fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forge_app.cli.options import (
    AgentId,
    AgentPath,
    FormatName,
    Session,
    StoreOption,
    TokenizerName,
)

if TYPE_CHECKING:
    from forge_app.cli._report_data import ReportData
    from forge_app.files._transcripts import Transcript
    from forge_domain import Agent, TokenMeter

REPORT_NAME = "report.html"
"""The page's file name where a directory is written (``demo -o DIR``)."""


def build_report(
    transcript: Transcript,
    agent: Agent,
    *,
    session: str,
    store_url: str | None = None,
    meter: TokenMeter | None = None,
    discount: float = 0.1,
) -> tuple[str, ReportData]:
    """Replay ``transcript`` under ``agent`` (stored in ``store_url`` when given); the page."""
    import anyio

    from forge_app.cli._html_report import render_report
    from forge_app.cli._report_data import collect
    from forge_app.cli.history import opened_store

    with opened_store(store_url) as store:
        data = anyio.run(
            lambda: collect(
                transcript, agent, session=session, store=store, meter=meter, discount=discount
            )
        )
    return render_report(data), data


def report_command(
    session: Session,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Write the page here (one self-contained HTML file)."),
    ],
    agent: AgentPath = None,
    agent_id: AgentId = None,
    store: StoreOption = None,
    cache_discount: Annotated[
        float,
        typer.Option(
            "--cache-discount", min=0.0, max=1.0, help="Price of a cached prompt token (0.1 = 10%)."
        ),
    ] = 0.1,
    fmt: FormatName = None,
    tokenizer: TokenizerName = None,
) -> None:
    """Replay a transcript and write one HTML page of what compaction did to it.

    The page holds the timeline (context tokens per turn against the window and the
    threshold), a card per compaction (sizes, what was summarised and pruned, the
    summary, with --store each archived original), the facts `eval` checks, kept or
    lost, and the prompt cost with and without compaction. Secrets are redacted; the
    file needs no network and no other file.
    """
    from forge_app.cli.compacting import ensure_provider_valid
    from forge_app.cli.console import err
    from forge_app.cli.history import store_file
    from forge_app.cli.options import resolve_agent, tokenizer_loader
    from forge_app.files._atomic import check_outputs
    from forge_app.files._transcripts import read_transcript, write_text_atomic

    check_outputs([output, store_file(store)], inputs=[session, agent])
    chosen = resolve_agent(agent, agent_id)
    transcript = read_transcript(session, fmt)
    ensure_provider_valid(transcript, session)
    meter = tokenizer_loader(tokenizer, chosen).meter(model=chosen.model, fmt=transcript.format)
    page, data = build_report(
        transcript,
        chosen,
        session=Path(session).name,
        store_url=store,
        meter=meter,
        discount=cache_discount,
    )
    write_text_atomic(output, page)
    turns, compactions = len(data.turns), len(data.compactions)
    err.print(
        f"report: {output} ({turns} turn{'s' if turns != 1 else ''}, {compactions} "
        f"compaction{'s' if compactions != 1 else ''}, {len(page.encode()):,} bytes)"
    )
