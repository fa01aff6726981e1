"""structlog configuration: the application picks JSON or console rendering.

Library code only calls ``structlog.get_logger()``; nothing is configured at
import time. An application (the CLI, a service) calls
:func:`configure_logging` once at start-up.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Literal, TextIO

if TYPE_CHECKING:
    import structlog

__all__ = ["configure_logging"]  # and configure_logging_on_import, for the CLI

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
    import structlog  # imported when used: see configure_logging_on_import

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


def configure_logging_on_import(renderer: Renderer = "console", *, level: str = "info") -> None:
    """:func:`configure_logging` now if structlog is imported, else as soon as it is.

    Importing structlog costs a command line about 40 ms of CPU (it imports asyncio, and
    rich's traceback formatting); a command that logs nothing need not pay it. Library
    code only calls ``structlog.get_logger()``, whose loggers read the configuration
    when they first log, always after the import that configured it.
    """
    for finder in [f for f in sys.meta_path if isinstance(f, _ConfigureOnImport)]:
        sys.meta_path.remove(finder)  # the last request wins
    if "structlog" in sys.modules:
        configure_logging(renderer, level=level)
    else:
        sys.meta_path.insert(
            0, _ConfigureOnImport(lambda: configure_logging(renderer, level=level))
        )


class _ConfigureOnImport(importlib.abc.MetaPathFinder):
    """Finds ``structlog`` as the path finder does, and configures it once it is loaded."""

    def __init__(self, configure: Callable[[], None]) -> None:
        self._configure = configure

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "structlog":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThenConfigure(spec.loader, self._configure)
        return spec


class _ThenConfigure(importlib.abc.Loader):
    """A loader that runs ``configure`` after ``loader`` has executed the module."""

    def __init__(self, loader: importlib.abc.Loader, configure: Callable[[], None]) -> None:
        self._loader = loader
        self._configure = configure

    def __getattr__(self, name: str) -> object:  # get_source, is_package …: the real loader's
        return getattr(self._loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        sys.modules[module.__name__] = module  # configure imports structlog's submodules
        self._configure()
