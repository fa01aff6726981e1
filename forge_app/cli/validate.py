"""``forge-compact validate``: report provider-validity violations."""

from __future__ import annotations

from typing import Annotated

import typer

from forge_app.cli.console import err, out
from forge_app.cli.options import Session
from forge_app.files._transcripts import read_transcript
from forge_domain.validation import Dialect, find_violations


def validate_command(
    session: Session,
    anthropic: Annotated[
        bool,
        typer.Option("--anthropic", help="Also check Anthropic's rules (a user turn first, ...)."),
    ] = False,
) -> None:
    """Report messages a provider would reject, with their indices; exit 1 if any."""
    transcript = read_transcript(session)
    dialect: Dialect = "anthropic" if anthropic else "openai"
    violations = find_violations(transcript.context, dialect)
    for violation in violations:
        out.print(f"{session}: {violation} [{violation.rule}]", markup=False)
    count = len(transcript.context)
    if violations:
        err.print(
            f"[red]invalid[/red] ({dialect}): {len(violations)} violation(s) in {count} messages"
        )
        raise typer.Exit(1)
    err.print(f"[green]valid[/green] ({dialect}): {count} messages")
