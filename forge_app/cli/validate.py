"""``forge-compact validate``: report the violations of the transcript format's rules."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from forge_app.cli.console import counted, err, out
from forge_app.cli.options import FormatName, Session
from forge_domain import TokenizerChoice


def validate_command(
    session: Session,
    anthropic: Annotated[
        bool,
        typer.Option(
            "--anthropic",
            help="Check Anthropic's rules (a user turn first, ...) whatever the file's format.",
        ),
    ] = False,
    fmt: FormatName = None,
    tokenizer: Annotated[
        TokenizerChoice,
        typer.Option(
            "--tokenizer",
            help="How to count tokens: tiktoken for OpenAI models when it loads offline "
            "(auto), always tiktoken, or chars/4. Provider usage in the file anchors the count.",
        ),
    ] = "auto",
) -> None:
    """Report messages the format's provider would reject, with their indices; exit 1 if any.

    The format is detected (or given with --format) and its rules are checked; the size
    line counts every part: text, tool calls and results, reasoning, images.
    """
    from forge_app.files._tokenizer import load_tokenizer  # imported when used: start-up time
    from forge_app.files._transcripts import read_transcript
    from forge_domain import context_tokens
    from forge_domain.formats import find_format_violations, find_violations

    transcript = read_transcript(session, fmt)
    context = transcript.context
    form = transcript.format
    violations = find_format_violations(context, form)
    label: str = form
    if anthropic and form != "anthropic":
        label = f"{form} format, anthropic rules"
        seen = {(v.index, v.rule) for v in violations}
        extra = [v for v in find_violations(context, "anthropic") if (v.index, v.rule) not in seen]
        violations = sorted([*violations, *extra], key=lambda v: v.index)
    for violation in violations:
        out.print(f"{session}: {violation} [{violation.rule}]", markup=False)
    count = len(context)
    if violations:
        err.print(
            Text("invalid", style="red"),
            f"({label}): {counted(len(violations), 'violation')} in {counted(count, 'message')}",
        )
        raise typer.Exit(1)
    model = transcript.envelope.get("model")
    counter = load_tokenizer(tokenizer, model=model if isinstance(model, str) else None, fmt=form)
    size = context_tokens(context, counter.count)
    basis = f"provider usage + {counter.name}" if size.is_actual() else counter.name
    err.print(
        Text("valid", style="green"),
        f"({label}): {counted(count, 'message')}, {size.value:,} tokens ({basis})",
    )
