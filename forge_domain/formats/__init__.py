"""The transcript formats: the three wire codecs, their shared carry, provider validity.

Every format reads into the one internal model (:class:`~forge_domain.Context` of
:data:`~forge_domain.ContextMessage`) and writes back losslessly:

* OpenAI chat completions (``_openai.py``, its fast path for plain messages
  ``_openai_plain.py``): the model's own shape, behind ``Context.from_openai``;
* Anthropic Messages (``_anthropic.py``; blocks and reading in ``_anthropic_blocks.py``,
  ``_anthropic_read.py``) and OpenAI Responses (``_responses.py``, ``_responses_read.py``);
* what a format cannot hold of a message, carried under one reserved key
  (``_carry.py``);
* the table of formats: telling them apart, reading and writing by name
  (``_registry.py``);
* each provider's validity rules (``_validation.py``).

The modules are private; import from this package. It imports only the message
model of :mod:`forge_domain` (never ``forge_domain.tools`` or ``forge_domain.summary``:
an import-linter contract checks it).

Every exported name is imported from its module the first time it is read (PEP 562,
``forge_domain._lazy``), so importing the package builds none of its models
(plans/008-performance.md, round 6b)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use (__getattr__)
    from forge_domain.formats._anthropic import messages_from_anthropic, messages_to_anthropic
    from forge_domain.formats._openai import message_from_openai, message_to_openai
    from forge_domain.formats._registry import (
        FORMATS,
        Format,
        detect_format,
        find_format_violations,
        messages_from_format,
        messages_key,
        messages_to_format,
    )
    from forge_domain.formats._responses import messages_from_responses, messages_to_responses
    from forge_domain.formats._validation import (
        Dialect,
        Violation,
        ensure_valid,
        find_violations,
        is_valid,
    )

_EXPORTS = LazyExports(
    "forge_domain.formats",
    {
        "forge_domain.formats._anthropic": ("messages_from_anthropic", "messages_to_anthropic"),
        "forge_domain.formats._openai": ("message_from_openai", "message_to_openai"),
        "forge_domain.formats._registry": (
            "FORMATS",
            "Format",
            "detect_format",
            "find_format_violations",
            "messages_from_format",
            "messages_key",
            "messages_to_format",
        ),
        "forge_domain.formats._responses": ("messages_from_responses", "messages_to_responses"),
        "forge_domain.formats._validation": (
            "Dialect",
            "Violation",
            "ensure_valid",
            "find_violations",
            "is_valid",
        ),
    },
)
"""Which module defines each exported name."""

__all__ = [
    "FORMATS",
    "Dialect",
    "Format",
    "Violation",
    "detect_format",
    "ensure_valid",
    "find_format_violations",
    "find_violations",
    "is_valid",
    "message_from_openai",
    "message_to_openai",
    "messages_from_anthropic",
    "messages_from_format",
    "messages_from_responses",
    "messages_key",
    "messages_to_anthropic",
    "messages_to_format",
    "messages_to_responses",
]


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
