"""Hermes Agent's ``ContextCompressor`` with its summariser replaced by an instant stub.

Only ``call_llm`` is replaced, so Hermes still prunes, serialises, redacts and
builds the full summariser prompt; what is measured is its compaction work, not a
model. Hermes is optional (the ``bench`` extra): :func:`load` returns None when it
is not installed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace

from benchmarks.generator import TOOLS, Message

WINDOW = 200_000
"""Context window given to Hermes (its documented default setup: threshold 150,000)."""

_SUMMARY = (
    "## Goal\nFix the failing parser tests without changing the public API.\n"
    "## Completed Actions\n"
    + "".join(
        f"{n}. EDIT src/core/parser.py — handled empty input [tool: edit_file]\n"
        for n in range(1, 31)
    )
    + "## Active State\nTests: 3 failing in tests/test_parser.py.\n"
    "## Critical Context\nThe config loader returns None for an empty [cache] section.\n"
)


def _stub_call_llm(**_: object) -> SimpleNamespace:
    message = SimpleNamespace(content=_SUMMARY)
    return SimpleNamespace(choices=[SimpleNamespace(message=message)])


@dataclass(frozen=True)
class Hermes:
    """The pieces of Hermes the benchmark drives."""

    version: str
    _compressor_type: type
    _estimate: Callable[..., int]

    def compressor(self) -> object:
        """A fresh compressor at the default config with a 200K window (no network)."""
        return self._compressor_type(
            model="bench-model", config_context_length=WINDOW, quiet_mode=True
        )

    def compress(self, compressor: object, messages: list[Message]) -> list[Message]:
        """One ``compress()`` call (it copies its input; ``messages`` is left untouched)."""
        result: list[Message] = compressor.compress(messages)  # type: ignore[attr-defined]
        return result

    def estimate(self, messages: list[Message]) -> int:
        """Hermes's rough request estimate (messages + tool schemas), as run before a turn."""
        return self._estimate(messages, system_prompt="", tools=TOOLS)

    def should_compress(self, compressor: object, tokens: int) -> bool:
        """Hermes's trigger on a token figure."""
        answer: bool = compressor.should_compress(tokens)  # type: ignore[attr-defined]
        return answer


def load() -> Hermes | None:
    """Import Hermes and stub its summariser; None when ``hermes-agent`` is not installed."""
    os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="hermes-bench-"))
    try:
        version = importlib.metadata.version("hermes-agent")
        compressor_module: ModuleType = importlib.import_module("agent.context_compressor")
        metadata_module = importlib.import_module("agent.model_metadata")
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return None
    compressor_module.call_llm = _stub_call_llm  # type: ignore[attr-defined]
    return Hermes(
        version,
        compressor_module.ContextCompressor,
        metadata_module.estimate_request_tokens_rough,
    )
