"""Each error of ``forge_app`` carries the exit status the command line ends with."""

from __future__ import annotations

import pytest

from forge_app.errors import (
    AgentNotFound,
    CompactionFailed,
    ContextDoesNotFit,
    EngineUnavailable,
    ForgeAppError,
    InvalidAgentFile,
    ModelCallFailed,
    ProviderUnavailable,
    SummaryAuthFailed,
    TranscriptNotFound,
    UnknownEngine,
)

ERRORS = [
    (CompactionFailed("summary", "boom"), 1),
    (ModelCallFailed("m", "refused", 400), 1),
    (ProviderUnavailable("m", "busy", 503), 1),
    (SummaryAuthFailed("m", "no API key"), 1),
    (ForgeAppError("anything else"), 2),
    (TranscriptNotFound("s.json", "no such file"), 2),
    (InvalidAgentFile("a.yaml", 3, "compact.engine", "bad"), 2),
    (AgentNotFound("a.yaml", "x", ("default",)), 2),
    (UnknownEngine("nope", ("frame", "llm")), 2),
    (EngineUnavailable("llm", "no summary model"), 2),
    (ContextDoesNotFit(9_000, 8_000, "system prompt"), 2),
]


@pytest.mark.parametrize(
    ("error", "expected"), ERRORS, ids=[type(error).__name__ for error, _ in ERRORS]
)
def test_error_exit_code_says_whether_the_job_failed_or_the_input_was_bad(error, expected):
    assert error.exit_code == expected
