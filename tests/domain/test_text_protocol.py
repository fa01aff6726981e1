"""Text-protocol agents: actions in the assistant's text, observations as user messages."""

from __future__ import annotations

import json

import pytest

from forge_domain import TextMessage, ToolCall, ToolResult
from forge_domain.tools import looks_like_observation, text_action, text_turns

MSA = "THOUGHT: run the tests.\n\n```bash\npytest -x\n```"
SWE = "Let's open the file.\n\n```\nopen src/app.py 120\n```"
FUNCTION = (
    "Let me look.\n\n<function=terminal>\n<parameter=command>ls -la</parameter>\n"
    "<parameter=security_risk>LOW</parameter>\n</function>"
)

ACTIONS = [
    ("msa-bash", MSA, ("bash", {"command": "pytest -x"}), "THOUGHT: run the tests.", True),
    ("swe-agent-command", SWE, ("open", {"path": "src/app.py"}), "Let's open the file.", True),
    (
        "swe-agent-edit",
        "Fix it.\n```\nedit 3:3\n    x = 1\nend_of_edit\n```",
        ("edit", {}),
        "Fix it.",
        True,
    ),
    (
        "swe-agent-bad-quote",
        '```\nsearch_dir "unclosed\n```',
        ("search_dir", {"search_term": '"unclosed'}),
        "",
        True,
    ),
    (
        "openhands-function",
        FUNCTION,
        ("terminal", {"command": "ls -la", "security_risk": "LOW"}),
        "Let me look.",
        True,
    ),
    (
        "python-fences-are-not-actions",
        "Like this:\n```python\nx = 1\n```\nthen:\n```bash\npython x.py\n```\nDone?",
        ("bash", {"command": "python x.py"}),
        "Like this:\n```python\nx = 1\n```\nthen:\n\nDone?",
        False,
    ),
    ("two-actions", "```bash\nls\n```\n```bash\npwd\n```", None, None, None),
    ("two-functions", "<function=a></function><function=b></function>", None, None, None),
    ("no-action", "I think we are done.", None, None, None),
    (
        "aider-edit",
        "a.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```",
        None,
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "call", "narration", "ends"), [a[1:] for a in ACTIONS], ids=[a[0] for a in ACTIONS]
)
def test_text_action(text, call, narration, ends):
    action = text_action(text)
    actual = (
        None
        if action is None
        else (
            (action.call.name, json.loads(action.call.arguments)),
            action.narration,
            action.ends_message,
        )
    )
    assert actual == (None if call is None else (call, narration, ends))


OBSERVATIONS = [
    ("returncode", "<returncode>0</returncode>\n<output>\n</output>", True),
    ("openhands", "EXECUTION RESULT of [terminal]:\nok", True),
    ("swe-agent-file", "[File: /r/a.py (10 lines total)]\n1:x", True),
    (
        "swe-agent-prompt",
        "Found 3 matches\n(Open file: n/a)\n(Current directory: /r)\nbash-$",
        True,
    ),
    ("person", "please also add a test", False),
]


@pytest.mark.parametrize(
    ("text", "expected"), [o[1:] for o in OBSERVATIONS], ids=[o[0] for o in OBSERVATIONS]
)
def test_looks_like_observation(text, expected):
    assert looks_like_observation(text) is expected


def _turns(*messages: TextMessage | ToolResult) -> tuple[dict[int, int | None], tuple[int, ...]]:
    turns = text_turns([TextMessage.system("s"), *messages])
    return {i: t.observation for i, t in turns.answered.items()}, turns.orphans


TURNS = [
    (
        "msa",
        (
            TextMessage.user("task"),
            TextMessage.assistant(MSA),
            TextMessage.user("<returncode>1</returncode>"),
        ),
        ({2: 3}, ()),
    ),
    (
        "unmarked-answer-to-a-final-command",
        (TextMessage.assistant(MSA), TextMessage.user("diff --git a/x b/x")),
        ({1: 2}, ()),
    ),
    (
        "person-after-a-command-in-the-middle",
        (
            TextMessage.assistant("Run:\n```bash\nnpm test\n```\nthen tell me."),
            TextMessage.user("it passed, now add docs"),
        ),
        ({}, ()),
    ),
    (
        "format-error-after-two-actions",
        (
            TextMessage.assistant("```bash\nls\n```\n```bash\npwd\n```"),
            TextMessage.user("one action!"),
        ),
        ({}, ()),
    ),
    (
        "orphan-and-trailing-action",
        (
            TextMessage.user("<returncode>0</returncode>"),
            TextMessage.assistant(MSA),
        ),
        ({2: None}, (1,)),
    ),
    (
        "native-calls-are-not-text-actions",
        (
            TextMessage.user("task"),
            TextMessage.assistant(MSA, (ToolCall(id="c", name="bash", arguments="{}"),)),
            ToolResult.of("c", "<returncode>0</returncode>"),
            TextMessage.user("<returncode>0</returncode>"),
        ),
        ({}, ()),
    ),
    (
        "a-person-first",
        (TextMessage.user("fix it"), TextMessage.assistant("done")),
        ({}, ()),
    ),
]


@pytest.mark.parametrize(
    ("messages", "expected"), [t[1:] for t in TURNS], ids=[t[0] for t in TURNS]
)
def test_text_turns(messages, expected):
    assert _turns(*messages) == expected
