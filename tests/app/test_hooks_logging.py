"""structlog configuration and the logging plugin's output."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
import structlog

from forge_app.runtime._logging import configure_logging
from forge_app.runtime._model import FunctionModel, ModelRequest, ModelResponse
from forge_app.runtime._orchestrator import Orchestrator
from forge_domain import Agent, TextMessage, Usage
from tests.app.tiny_engine import TinyEngine


@pytest.fixture
def restore_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def answer(request: ModelRequest) -> ModelResponse:
    usage = Usage.reported(prompt_tokens=12, completion_tokens=3)
    return ModelResponse(message=TextMessage.assistant("hi", usage=usage), finish_reason="stop")


@pytest.mark.anyio
async def test_json_logging_writes_one_object_per_event(restore_structlog):
    stream = io.StringIO()
    configure_logging("json", level="info", stream=stream)
    orchestrator = Orchestrator(Agent(id="a"), FunctionModel(answer), engine=TinyEngine)

    await orchestrator.chat("hello", conversation_id="c-1")

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    response = next(line for line in lines if line["event"] == "response_received")
    actual = (
        [line["event"] for line in lines],
        {line["conversation_id"] for line in lines},
        (response["total_tokens"], response["level"]),
    )
    expected = (
        ["conversation_started", "response_received", "conversation_ended"],
        {"c-1"},
        (15, "info"),
    )
    assert actual == expected


def test_console_logging_renders_text_at_the_chosen_level(restore_structlog):
    stream = io.StringIO()
    configure_logging("console", level="warning", stream=stream)
    log = structlog.get_logger("forge_app")

    log.info("not_shown")
    log.warning("compaction_suspended", attempts=2)

    text = stream.getvalue()
    assert ("not_shown" in text, "compaction_suspended" in text, "attempts=2" in text) == (
        False,
        True,
        True,
    )
