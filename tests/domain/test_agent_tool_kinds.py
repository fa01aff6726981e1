"""Agents extend the tool catalog with ``tool_kinds``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from forge_domain import Agent, ToolCall
from forge_domain.tools import FileReadTool


def test_agent_tool_kinds_extend_the_catalog():
    agent = Agent(id="a", tool_kinds={"my_reader": {"kind": "file_read", "path_arg": "filename"}})
    call = ToolCall(id="c", name="my_reader", arguments='{"filename": "/x/y.py"}')
    assert agent.tool_catalog().classify(call) == (FileReadTool(path="/x/y.py"),)


def test_agent_without_tool_kinds_uses_the_default_catalog():
    call = ToolCall(id="c", name="Read", arguments='{"file_path": "/x/y.py"}')
    assert Agent(id="a").tool_catalog().classify(call) == (FileReadTool(path="/x/y.py"),)


def test_agent_tool_kinds_malformed_is_a_validation_error():
    with pytest.raises(ValidationError, match="tool_kinds"):
        Agent(id="a", tool_kinds={"my_reader": {"kind": "no_such_kind"}})
