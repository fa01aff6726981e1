"""The README's attribute table is the one in the code (each attribute named once)."""

from __future__ import annotations

from pathlib import Path

from forge_app.runtime.plugins._otel_spans import ATTRIBUTES

README = Path(__file__).parents[3] / "README.md"


def test_otel_readme_explains_every_attribute():
    lines = set(README.read_text().splitlines())

    actual = [
        name for name, meaning in ATTRIBUTES.items() if f"| `{name}` | {meaning} |" not in lines
    ]
    assert actual == []
