"""``tool_kinds`` in agent files reaches the catalog, and a bad entry names its line."""

from __future__ import annotations

import pytest

from forge_app import InvalidAgentFile
from forge_app.files import parse_agents
from forge_domain import ToolCall
from forge_domain.tools import FileReadTool

GOOD = """\
agents:
  - id: coder
    tool_kinds:
      my_reader: {kind: file_read, path_arg: filename}
"""

BAD = """\
agents:
  - id: coder
    tool_kinds:
      my_reader: {kind: teleport}
"""


def test_agent_file_tool_kinds_extend_the_catalog():
    agent = parse_agents(GOOD, "agents.yaml").agents[0]
    call = ToolCall(id="c", name="my_reader", arguments='{"filename": "a.py"}')
    assert agent.tool_catalog().classify(call) == (FileReadTool(path="a.py"),)


def test_agent_file_bad_tool_kind_is_located():
    with pytest.raises(InvalidAgentFile, match=r"agents\.yaml:4: agents\[0\]\.tool_kinds"):
        parse_agents(BAD, "agents.yaml")
