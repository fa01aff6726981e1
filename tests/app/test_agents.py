"""Agent files: YAML and Markdown, defaults, located errors, the transforms migration."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from forge_app.errors import AgentNotFound, InvalidAgentFile
from forge_app.files._agents import (
    DeprecatedAgentSyntax,
    default_agent,
    load_agent,
    load_agents,
    parse_agent_markdown,
    parse_agents,
)
from forge_domain import Agent, Compact, PluginSelection

EXAMPLES = Path(__file__).parents[2] / "examples"


def yaml_text(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            """
            agents:
              - id: a
              - id: b
                compact:
                  eviction_window: 1.5
            """,
            "f.yaml:5: agents[1].compact.eviction_window: "
            "percentage must be between 0.0 and 1.0, got 1.5",
        ),
        (
            """
            agents:
              - id: a
                compakt: {}
            """,
            "f.yaml:3: agents[0].compakt: unknown key",
        ),
        (
            """
            compact:
              retention_windoww: 3
            agents:
              - id: a
            """,
            "f.yaml:2: compact.retention_windoww: unknown key",
        ),
        (
            """
            agents:
              - id: a
                max_turns: lots
            """,
            "f.yaml:3: agents[0].max_turns: input should be a valid integer, "
            "unable to parse string as an integer, got 'lots'",
        ),
        (
            """
            agents:
              - id: a
                model: x
                model: y
            """,
            "f.yaml:4: agents[0].model: duplicate key (first given on line 3)",
        ),
        (
            """
            agents:
              - model: x
            """,
            "f.yaml:2: agents[0].id: required",
        ),
        (
            """
            agents:
              - id: a
              - id: a
            """,
            "f.yaml:3: agents[1].id: duplicate agent id 'a'",
        ),
        (
            """
            model: x
            """,
            "f.yaml:1: agents: required: the file defines no agents",
        ),
        (
            """
            agents: []
            """,
            "f.yaml:1: agents: the list of agents is empty",
        ),
        (
            """
            agents:
              - id: a
                transforms:
                  - user: {}
            """,
            "f.yaml:4: agents[0].transforms[0]: transform 'user' is no longer supported; "
            "remove it (compaction is configured with the agent's `compact:` block)",
        ),
        (
            """
            agents:
              - id: a
               model: [
            """,
            "f.yaml:3: invalid YAML: while parsing a block collection "
            "expected <block end>, but found '<block mapping start>'",
        ),
    ],
    ids=[
        "percentage",
        "unknown-key",
        "unknown-default-key",
        "wrong-type",
        "duplicate-key",
        "missing-id",
        "duplicate-id",
        "no-agents",
        "empty-agents",
        "unsupported-transform",
        "bad-yaml",
    ],
)
def test_parse_agents_errors_name_file_line_and_field(text, expected):
    with pytest.raises(InvalidAgentFile) as raised:
        parse_agents(yaml_text(text), "f.yaml")

    assert str(raised.value) == expected


def test_invalid_agent_file_carries_its_parts():
    with pytest.raises(InvalidAgentFile) as raised:
        parse_agents("agents:\n  - id: a\n    compact: {eviction_window: 2}\n", "f.yaml")

    error = raised.value
    assert (str(error.path), error.line, error.field) == (
        "f.yaml",
        3,
        "agents[0].compact.eviction_window",
    )


def test_top_level_defaults_merge_under_each_agent_and_explicit_fields_win():
    text = yaml_text(
        """
        model: base-model
        max_turns: 9
        compact:
          retention_window: 3
          eviction_window: 0.5
        agents:
          - id: plain
          - id: custom
            model: own-model
            compact:
              eviction_window: 0.1
        """
    )

    actual = parse_agents(text).agents

    expected = (
        Agent(
            id="plain",
            model="base-model",
            max_turns=9,
            compact=Compact(retention_window=3, eviction_window=0.5),
        ),
        Agent(
            id="custom",
            model="own-model",
            max_turns=9,
            compact=Compact(retention_window=3, eviction_window=0.1),
        ),
    )
    assert actual == expected


def test_agents_may_be_a_mapping_keyed_by_id():
    text = yaml_text(
        """
        agents:
          myAgent:
            model: gpt-4-turbo
            compact: {max_tokens: 4000, token_threshold: 6000, turn_threshold: 10}
        """
    )

    actual = parse_agents(text).first

    expected = Agent(
        id="myAgent",
        model="gpt-4-turbo",
        compact=Compact(max_tokens=4000, token_threshold=6000, turn_threshold=10),
    )
    assert actual == expected


def test_deprecated_assistant_transform_maps_onto_compact_with_a_warning():
    text = yaml_text(
        """
        agents:
          - id: old
            transforms:
              - assistant:
                  agent_id: summarizer
                  token_limit: 20000
                  input: context
                  output: context
        """
    )

    with pytest.warns(DeprecatedAgentSyntax) as warned:
        agent = parse_agents(text, "old.yaml").first

    message = str(warned[0].message)
    assert (agent.compact, message) == (
        Compact(token_threshold=20000),
        "old.yaml:3: agents[0].transforms is deprecated: the assistant transform is replaced "
        "by the agent's `compact:` block; write `compact: {token_threshold: 20000}` instead",
    )


def test_markdown_agent_reads_front_matter_and_body(tmp_path):
    path = tmp_path / "reviewer.md"
    path.write_text("---\nmodel: m\ncompact:\n  retention_window: 2\n---\n\nReview code.\n")

    actual = load_agents(path).first

    expected = Agent(
        id="reviewer", model="m", system_prompt="Review code.", compact=Compact(retention_window=2)
    )
    assert actual == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no front matter\n", "a.md:1: expected YAML front matter opened by a '---' line"),
        ("---\nid: a\n", "a.md:1: the front matter is never closed by a '---' line"),
        ("---\nid: a\nbogus: 1\n---\nbody\n", "a.md:3: bogus: unknown key"),
        (
            "---\nsystem_prompt: x\n---\nbody\n",
            "a.md:2: system_prompt: given in the front matter and as the Markdown body; keep one",
        ),
    ],
    ids=["no-front-matter", "unclosed", "unknown-key-line", "prompt-twice"],
)
def test_markdown_agent_errors(text, expected):
    with pytest.raises(InvalidAgentFile) as raised:
        parse_agent_markdown(text, "a.md")

    assert str(raised.value) == expected


def test_examples_load():
    forge = load_agents(EXAMPLES / "forge.yaml")
    coder = load_agent(EXAMPLES / "agents" / "coder.md")

    actual = (
        [agent.id for agent in forge.agents],
        forge.get("long-runner").plugins,
        coder.id,
        coder.compact.retention_window,
    )
    assert actual == (
        ["default", "long-runner"],
        PluginSelection(disable=("noisy-metrics",)),
        "coder",
        8,
    )


def test_default_agent_is_the_first_example_agent():
    bundled = default_agent()

    assert bundled.model_dump() == load_agents(EXAMPLES / "forge.yaml").first.model_dump()


def test_default_agent_compacts_bundled_sessions_offline():
    agent = default_agent()

    actual = (
        agent.compaction_threshold(),
        agent.compact.eviction_window,
        agent.compact.retention_window,
    )
    assert actual == (22400, 0.6, 6)


def test_unknown_agent_id_lists_the_known_ones():
    with pytest.raises(AgentNotFound) as raised:
        load_agents(EXAMPLES / "forge.yaml").get("nobody")

    assert raised.value.known == ("default", "long-runner")
