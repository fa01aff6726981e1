"""structlog configuration: the application picks JSON or console rendering.

Library code only calls ``structlog.get_logger()``; nothing is configured at
import time. An application (the CLI, a service) calls
:func:`configure_logging` once at start-up.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO

import structlog

Renderer = Literal["json", "console"]
"""How log lines are written: one JSON object per line, or aligned text for people."""


def configure_logging(
    renderer: Renderer = "console",
    *,
    level: str = "info",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog for the whole process.

    Args:
        renderer: ``json`` for machines (one object per line), ``console`` for people.
        level: the lowest level written (``debug``, ``info``, ``warning``, ``error``).
        stream: where lines go (default: standard error, so standard output stays
            free for command results).
    """
    number = logging.getLevelNamesMapping()[level.upper()]
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if renderer == "json":
        processors += [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(number),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
