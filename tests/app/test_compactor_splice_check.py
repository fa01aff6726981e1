"""The output check of ``Compactor.compact`` (the whole output, with the input's rules)
catches a splice that breaks provider rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_app.compaction._compactor import Compactor
from forge_app.errors import CompactionFailed
from forge_domain import Compact, CompactionStrategy, Context, ToolResult
from forge_domain.testing import pattern


def _padded(letters: str, size: int = 2_000) -> Context:
    return Context(
        message.model_copy(update={"content": message.text + " " + "x" * size})
        if isinstance(message, ToolResult)
        else message
        for message in pattern(letters)
    )


def _failure(compactor: Compactor, context: Context) -> tuple[str, str]:
    with pytest.raises(CompactionFailed) as caught:
        compactor.compact(context, CompactionStrategy.retain(0))
    return caught.value.stage, caught.value.problem


def test_compactor_catches_a_splice_that_separates_a_call_from_its_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A span holding only the (long) tool-call message leaves its result first in the tail.
    monkeypatch.setattr(Compactor, "_span", lambda self, context, retained: (2, 2))
    messages = list(_padded("sutrua"))
    messages[2] = messages[2].model_copy(update={"content": "y" * 20_000})
    actual = _failure(Compactor(Compact()), Context(messages))
    expected = (
        "validate",
        "messages[3]: tool result for 'call_3' does not answer a call of the assistant "
        "message right before it",
    )
    assert actual == expected


def test_compactor_catches_an_empty_summary_message(tmp_path: Path) -> None:
    (tmp_path / "forge-partial-summary-frame.md").write_text("   \n")
    actual = _failure(Compactor(Compact(), template_dir=tmp_path), _padded("sutrua"))
    expected = ("validate", "messages[2]: user message has no content")
    assert actual == expected
