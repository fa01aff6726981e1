"""The closed sets of names that options take, as ``Literal`` types, importing nothing.

A command line reads these to build its options before it needs any model: keeping them
here lets ``forge-compact --help`` start without the pydantic models of the package
(plans/008-performance.md, round 6b). Their homes of record re-export them:
:mod:`forge_domain._token_count` (``TokenizerChoice``) and :mod:`forge_domain._engine`
(``CompactionMode``).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["CompactionMode", "TokenizerChoice"]

TokenizerChoice: TypeAlias = Literal["auto", "tiktoken", "chars"]
"""How text is counted (``compact.tokenizer``, ``--tokenizer``): tiktoken for OpenAI model
families (``auto``), tiktoken always, or chars/4; the application loads the tokenizer."""

CompactionMode: TypeAlias = Literal["automatic", "forced", "manual"]
"""Why a compaction runs (:mod:`forge_domain._engine` says what each mode asks for)."""
