"""Options shared by several commands, and turning them into domain objects."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forge_app.errors import InvalidAgentFile
from forge_app.files._file_format import FileFormat
from forge_domain import CompactionMode, TokenizerChoice

if TYPE_CHECKING:  # imported by the functions that use them: --help builds no model
    from forge_app.files._tokenizer import TokenizerLoader
    from forge_domain import Agent

AgentPath = Annotated[
    Path | None,
    typer.Option(
        "--agent",
        "-a",
        help="Agent file (YAML, or Markdown with front matter) whose `compact:` settings are "
        "used. Default: the bundled default agent.",
        show_default=False,
    ),
]
AgentId = Annotated[
    str | None,
    typer.Option(
        "--agent-id", help="Which agent of a file that defines several (default: the first)."
    ),
]
Force = Annotated[
    bool,
    typer.Option("--force", "-f", help="Compact even when no trigger fires (manual /compact)."),
]
Session = Annotated[
    str,
    typer.Argument(
        metavar="SESSION",
        help="Transcript (OpenAI chat, Anthropic Messages or OpenAI Responses; the format is "
        'detected): a JSON list, {"messages": [...]}, {"input": [...]}, or JSONL; - = stdin.',
        show_default=False,
    ),
]
FormatName = Annotated[
    FileFormat | None,
    typer.Option(
        "--format",
        help="Read (and write back) transcripts in this format instead of detecting it per "
        "file: a transcript format, or an agent log wrapping one (claude-code: a Claude Code "
        "session log; codex: a Codex rollout).",
        show_default=False,
    ),
]

TokenizerName = Annotated[
    TokenizerChoice | None,
    typer.Option(
        "--tokenizer",
        help="How the triggers and metrics count tokens: chars/4 (chars), tiktoken when it "
        "loads offline (tiktoken), or tiktoken for OpenAI models only (auto). Default: the "
        "agent's compact.tokenizer (chars). Provider usage in the transcript anchors the count.",
        show_default=False,
    ),
]


def tokenizer_loader(choice: TokenizerChoice | None, agent: Agent) -> TokenizerLoader:
    """The loader for ``--tokenizer``, else the agent's ``compact.tokenizer``."""
    from forge_app.files._tokenizer import TokenizerLoader  # imported when used: start-up time

    return TokenizerLoader(choice or agent.compact.tokenizer)


StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Session store (sqlite:///PATH, a bare path, or postgresql://...): keep the original "
        "of everything compacted, with refs named in the output. See `forge-compact history`.",
        show_default=False,
    ),
]


OtelOption = Annotated[
    bool,
    typer.Option(
        "--otel",
        help="Trace compactions with OpenTelemetry and export spans and metrics over OTLP/HTTP "
        "(OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318). Needs "
        "`pip install 'forge-compact[otel]' opentelemetry-exporter-otlp-proto-http`.",
    ),
]


def compaction_mode(force: bool) -> CompactionMode:
    """The mode ``--force`` asks for: ``manual`` (a person's ``/compact``), else ``automatic``."""
    return "manual" if force else "automatic"


def resolve_agent(path: Path | None, agent_id: str | None = None) -> Agent:
    """The agent named by the options: from ``path`` when given, else the bundled default.

    Deprecation warnings about the file's syntax are printed as one line each.

    Raises:
        InvalidAgentFile: the file is missing or malformed (path, line, field).
        AgentNotFound: ``agent_id`` is not defined in the file.
    """
    from forge_app.files._agents import (  # imported when used: start-up time
        DeprecatedAgentSyntax,
        default_agent,
        load_agent,
    )

    if path is None:
        return default_agent()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecatedAgentSyntax)
        try:
            agent = load_agent(path, agent_id)
        except FileNotFoundError as exc:
            raise InvalidAgentFile(path, None, "", "no such file") from exc
        except IsADirectoryError as exc:
            raise InvalidAgentFile(path, None, "", "is a directory, not an agent file") from exc
        except UnicodeDecodeError as exc:
            raise InvalidAgentFile(path, None, "", "not UTF-8 text") from exc
    for warning in caught:
        typer.echo(f"forge-compact: warning: {warning.message}", err=True)
    return agent
