"""The ``forge-compact`` command line: compact, replay, validate, batch, run and demo."""

from forge_app.cli.app import app, main

__all__ = ["app", "main"]
