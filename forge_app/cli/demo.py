"""``forge-compact demo``: compact and replay the bundled session with the bundled demo agent."""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.rule import Rule
from rich.text import Text

from forge_app.cli.console import err
from forge_app.cli.replay import replay_summary, replay_turns, timeline_chart, timeline_table
from forge_app.cli.report_page import build_report
from forge_app.errors import OutputNotWritten
from forge_app.files._atomic import check_outputs, write_bytes_atomic, write_text_atomic

if TYPE_CHECKING:  # imported by the functions that use them: start-up time
    from forge_app.files._transcripts import Transcript
    from forge_domain import Agent

DEMO_DIR = "demo"
SESSION = "session.json"
AGENT = "agent.yaml"
PREVIEW_LINES = 14
OUTPUTS = ("compacted.json", "replayed.json", "timeline.svg", "report.html")
"""What ``-o DIR`` writes into the directory."""


def bundled_files() -> list[Path]:
    """The demo's inputs, when installed as plain files (never to be written over)."""
    folder = importlib.resources.files("forge_app").joinpath(DEMO_DIR)
    files = [folder.joinpath(SESSION), folder.joinpath(AGENT)]
    return [file for file in files if isinstance(file, Path)]


def prepare_output_dir(output_dir: Path) -> list[Path]:
    """Create ``output_dir`` and check the files the demo writes there; return them.

    Raises:
        OutputNotWritten: the directory cannot be created, or an output cannot be written.
        OutputIsInput: an output would replace a bundled input.
    """
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWritten(output_dir, exc.strerror or str(exc)) from exc
    outputs = [output_dir / name for name in OUTPUTS]
    check_outputs(outputs, inputs=bundled_files())
    return outputs


def demo_inputs() -> tuple[Transcript, Agent]:
    """The bundled session and the demo agent (read from the installed package)."""
    from forge_app.files._agents import parse_agents  # imported when used: start-up time
    from forge_app.files._transcripts import parse_transcript

    folder = importlib.resources.files("forge_app").joinpath(DEMO_DIR)
    session = folder.joinpath(SESSION).read_text(encoding="utf-8")
    agent = folder.joinpath(AGENT).read_text(encoding="utf-8")
    return (
        parse_transcript(session, f"forge_app/{DEMO_DIR}/{SESSION}"),
        parse_agents(agent, f"forge_app/{DEMO_DIR}/{AGENT}").first,
    )


def _summary_preview(transcript: Transcript) -> str:
    """The first lines of the transcript's summary message (a manual compaction writes one)."""
    from forge_app.compaction import is_summary_message

    for message in transcript.context:
        if is_summary_message(message):
            lines = message.text.splitlines()
            more = len(lines) - PREVIEW_LINES
            shown = "\n".join(lines[:PREVIEW_LINES])
            return shown + (f"\n… ({more} more lines)" if more > 0 else "")
    return "(no summary message: the summary would not have been smaller than what it replaces)"


def demo_command(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            "-o",
            help="Also write compacted.json, replayed.json, timeline.svg and report.html "
            "(forge-compact report) into this directory.",
        ),
    ] = None,
) -> None:
    """Compact and replay a bundled real session (SWE-agent, 28 messages) — offline, no API key."""
    import anyio  # imported when used: start-up time

    from forge_app.cli.compacting import compact_transcript
    from forge_app.cli.report import metrics_table
    from forge_app.files._transcripts import write_transcript

    outputs = prepare_output_dir(output_dir) if output_dir is not None else None
    transcript, agent = demo_inputs()
    compact = agent.compact
    err.print(Rule("forge-compact demo", align="left"))
    err.print(
        f"A real SWE-agent session ({len(transcript.context)} messages, "
        f"~{transcript.context.token_count_approx():,} tokens) and the bundled agent "
        f"{agent.id} (token_threshold {compact.token_threshold:,}, "
        f"eviction_window {compact.eviction_window}, retention_window {compact.retention_window})."
    )
    err.print()
    err.print(
        Rule("1. compact --force: the whole transcript at once (a manual /compact)", align="left")
    )
    compacted, metrics = compact_transcript(
        transcript, agent, source=f"bundled {SESSION}", mode="manual"
    )
    err.print(metrics_table(metrics))
    err.print(Text("\nThe summary message starts:", style="bold"))
    err.print(_summary_preview(compacted), markup=False, highlight=False)
    err.print()
    err.print(Rule("2. replay: turn by turn through hooks and CompactionHandler", align="left"))
    turns, replayed = anyio.run(replay_turns, transcript, agent)
    threshold = agent.compaction_threshold()
    err.print(timeline_table(turns, threshold, "context size per turn"))
    err.print(replay_summary(turns))
    if outputs is not None:
        compacted_path, replayed_path, chart, report = outputs
        write_transcript(compacted_path, compacted)
        write_transcript(replayed_path, transcript.with_context(replayed.conversation.context))
        title = f"demo session · agent {agent.id} · context size per turn"
        write_bytes_atomic(chart, timeline_chart(chart, turns, threshold, title))
        write_text_atomic(report, build_report(transcript, agent, session=f"demo {SESSION}")[0])
        err.print(f"wrote {output_dir}/compacted.json, replayed.json, timeline.svg and report.html")
    err.print()
    err.print(
        Text.assemble(
            "Next: ",
            ("forge-compact compact YOUR_SESSION.json -o out.json", "bold"),
            " (add --force for a manual /compact: below the threshold too, keeping only the "
            "retention window), ",
            ("forge-compact replay YOUR_SESSION.json --chart timeline.svg", "bold"),
            ", ",
            ("forge-compact --help", "bold"),
            ".",
        )
    )
