"""The typer application and the ``forge-compact`` entry point.

Exit status: 0 success; 1 the job ran and found a problem (violations, a failed
file in a batch, a compaction that could not complete); 2 bad input (missing or
malformed transcript, invalid messages, invalid agent file, unusable options).
An error that ends a command says which (``ForgeAppError.exit_code``; every
domain error is bad input). Errors are one line on standard error; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from forge_app.cli import batch, compact, demo, eval, history, replay, report_page, run, validate
from forge_app.cli.console import PARSER_ERROR, fail, parser_error_line
from forge_app.errors import BAD_INPUT, ForgeAppError
from forge_domain import ForgeDomainError

app = typer.Typer(
    name="forge-compact",
    help="Keep LLM agent conversations inside their context window: compact transcripts from "
    "any agent (OpenAI chat, Anthropic Messages, OpenAI Responses; Claude Code and Codex logs), "
    "offline and provider-valid.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        import importlib.metadata  # imported when used: start-up time

        typer.echo(f"forge-compact {importlib.metadata.version('forge-compact')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[  # handled by its eager callback
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version."),
    ] = False,
    debug: Annotated[  # read from argv by main() before typer runs; declared for --help
        bool,
        typer.Option("--debug", help="Show tracebacks instead of one-line errors (any position)."),
    ] = False,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose", "-v", count=True, help="Log events to stderr: -v info, -vv debug."
        ),
    ] = 0,
    log_json: Annotated[
        bool, typer.Option("--log-json", help="Write log events as JSON lines.")
    ] = False,
) -> None:
    """Compact, replay and validate agent transcripts (three formats, any agent)."""
    from forge_app.runtime._logging import configure_logging_on_import

    level = {0: "warning", 1: "info"}.get(verbose, "debug")
    configure_logging_on_import("json" if log_json else "console", level=level)


app.command("compact")(compact.compact_command)
app.command("replay")(replay.replay_command)
app.command("validate")(validate.validate_command)
app.command("batch")(batch.batch_command)
app.command("run")(run.run_command)
app.command("demo")(demo.demo_command)
app.command("eval")(eval.eval_command)
app.command("report")(report_page.report_command)
app.add_typer(history.app, name="history")

DEBUG_FLAG = "--debug"


def _split_debug(args: Sequence[str]) -> tuple[list[str], bool]:
    """Remove ``--debug`` from anywhere before a ``--`` separator."""
    if "--" in args:
        cut = list(args).index("--")
        head, tail = list(args[:cut]), list(args[cut:])
    else:
        head, tail = list(args), []
    return [a for a in head if a != DEBUG_FLAG] + tail, DEBUG_FLAG in head


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line (``argv`` defaults to ``sys.argv[1:]``) and exit."""
    args, debug = _split_debug(sys.argv[1:] if argv is None else argv)
    try:
        status = app(args=args, prog_name="forge-compact", standalone_mode=False)
    except (ForgeAppError, ForgeDomainError) as exc:
        if debug:
            raise
        fail(str(exc))
        sys.exit(exc.exit_code if isinstance(exc, ForgeAppError) else BAD_INPUT)
    except PARSER_ERROR as exc:  # a bad command line: one line, as every bad input
        line, code = parser_error_line(exc)
        if code == BAD_INPUT:
            fail(line)
        else:
            typer.echo(line, err=True)
        sys.exit(code)
    except typer.Abort:
        fail("aborted")
        sys.exit(1)
    sys.exit(status if isinstance(status, int) else 0)
