"""Each adapter example runs offline and compacts at least twice."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "adapters"
ANSWERS = {
    "pydantic_ai_agent.py": "Fixed: divide() raises ZeroDivisionError.",
    "langchain_agent.py": "Fixed: divide() raises ZeroDivisionError.",
    "agents_sdk_session.py": "Parts 6 and 7 are fixed.",
}


@pytest.mark.parametrize(("name", "answer"), ANSWERS.items())
def test_adapter_example_runs_offline_and_compacts(name, answer):
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )

    compactions = re.search(r"^compactions: (\d+)", result.stdout, re.MULTILINE)
    assert (answer in result.stdout, compactions is not None) == (True, True), result.stdout
    assert int(compactions.group(1)) >= 2  # type: ignore[union-attr]
