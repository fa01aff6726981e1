"""Defaults the command line shows in its ``--help``, in a module that imports nothing
(``forge-compact run --help`` builds no pydantic model: start-up time, benchmarks/STARTUP.md)."""

from __future__ import annotations

from typing import Final

__all__: list[str] = []  # internal: TURN_DEADLINE, for RetryPolicy and the CLI

TURN_DEADLINE: Final = 600.0
"""Seconds one turn's provider call may take in total (``RetryPolicy.deadline``)."""
