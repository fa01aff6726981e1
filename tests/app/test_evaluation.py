"""eval: facts read independently of the summary, their retention, and the prompt-cache cost."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from forge_app.cli.app import app
from forge_app.cli.eval import markdown_table
from forge_app.evaluation import SessionEval, extract_facts, prompt_cost, retention
from forge_domain import Context, TextMessage, ToolCall, ToolResult
from tests.sessions import SESSIONS


def bash(command: str, output: str, number: int = 0) -> list[TextMessage | ToolResult]:
    arguments = json.dumps({"command": command})
    call = ToolCall(id=f"c{number}", name="bash", arguments=arguments)
    return [TextMessage.assistant(None, (call,)), ToolResult(call_id=f"c{number}", content=output)]


def session(*turns: list[TextMessage | ToolResult]) -> Context:
    messages: list[TextMessage | ToolResult] = [TextMessage.user("fix the parser")]
    for turn in turns:
        messages.extend(turn)
    return Context(messages)


SHELL_EDITS = [
    ("sed_in_place", "sed -i 's/a/b/' src/app.py", ("src/app.py",)),
    ("heredoc", "cat > notes.txt <<'EOF'\nhello\nEOF", ("notes.txt",)),
    ("append", "echo x >> log/out.log", ("log/out.log",)),
    ("tee", "echo x | tee a.cfg b.cfg", ("a.cfg", "b.cfg")),
    ("inline_python", "python - <<EOF\nopen('gen/x.py', 'w').write('1')\nEOF", ("gen/x.py",)),
    ("move", "mv old.py new.py", ("new.py", "old.py")),
    ("copy", "cp base.ini site.ini", ("site.ini",)),
    ("git_apply", "git apply <<'EOF'\n--- a/m.py\n+++ b/m.py\n@@\nEOF", ("m.py",)),
    ("read_only", "cat src/app.py && grep -n x src/app.py", ()),
    ("dev_null", "python run.py > /dev/null 2>&1", ()),
]


@pytest.mark.parametrize(
    ("command", "paths"), [c[1:] for c in SHELL_EDITS], ids=[c[0] for c in SHELL_EDITS]
)
def test_extract_facts_finds_files_written_by_shell_commands(command, paths):
    facts = extract_facts(session(bash(command, "<returncode>0</returncode>\n<output>\n</output>")))

    assert facts.modified_paths == paths


FAILURES = [
    (
        "returncode",
        "<returncode>2</returncode>\n<output>\nerror: no such file\n</output>",
        "error: no such file",
    ),
    (
        "traceback",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'",
        "KeyError: 'a'",
    ),
    ("exit_code_only", "<returncode>1</returncode>\n<output>\n</output>", "exit code 1"),
    ("success", "<returncode>0</returncode>\n<output>\nok\n</output>", None),
]


@pytest.mark.parametrize(
    ("output", "evidence"), [c[1:] for c in FAILURES], ids=[c[0] for c in FAILURES]
)
def test_extract_facts_reads_failures_with_their_evidence(output, evidence):
    facts = extract_facts(session(bash("python x.py", output)))

    assert facts.last_error == evidence


def test_extract_facts_separates_asks_from_text_protocol_observations():
    fixture = Context(
        [
            TextMessage.user("demonstration of the protocol"),
            TextMessage.user("fix the parser"),
            TextMessage.assistant("THOUGHT: look\n```bash\nls\n```"),
            TextMessage.user("<returncode>0</returncode>\n<output>\na.py\n</output>"),
            TextMessage.assistant("done?"),
            TextMessage.user("also add a test"),
        ]
    )

    facts = extract_facts(fixture)

    assert (facts.task, facts.asks) == ("fix the parser", ("also add a test",))


def test_retention_of_an_uncompacted_session_is_complete():
    fixture = session(
        bash("sed -i 's/a/b/' src/app.py", "<returncode>0</returncode>", 0),
        bash("python -m pytest", "<returncode>1</returncode>\n<output>\nFAILED t.py\n</output>", 1),
    )

    kept = retention(extract_facts(fixture), fixture)

    assert (kept.task, kept.modified_paths, kept.failures, kept.last_error) == (
        (1, 1),
        (1, 1),
        (1, 1),
        (1, 1),
    )


def test_prompt_cost_matches_a_hand_computed_example():
    """Three requests; the third rewrites the second message (a compaction).

    Tokens (chars/4, rounded up): a=10, b=20, c=5, b2=2. Requests: [a], [a b], [a b2 c].
    Sent: 10 + 30 + 17 = 57. Cached: 0 + 10 (a) + 10 (a; b2 differs) = 20.
    Billed at a 10% discount: 57 - 20 x 0.9 = 39.
    """
    a, b, c = (
        TextMessage.user("x" * 40),
        TextMessage.assistant("y" * 80),
        TextMessage.user("z" * 20),
    )
    b2 = TextMessage.user("s" * 8)

    cost = prompt_cost([[a], [a, b], [a, b2, c]], discount=0.1)

    assert (cost.sent, cost.cached, cost.billed) == (57, 20, pytest.approx(39.0))


needs_sessions = pytest.mark.skipif(not SESSIONS.is_dir(), reason="shared sessions not available")


@needs_sessions
def test_eval_command_prints_a_row_per_session_and_window_and_totals(tmp_path):
    source = SESSIONS / "openhands-llama4-ponyc-4593.json"
    rows = tmp_path / "rows.jsonl"

    result = CliRunner().invoke(
        app, ["eval", str(source), "--windows", "8000,16000", "--json", str(rows)]
    )

    written = [json.loads(line) for line in rows.read_text().splitlines()]
    actual = (
        result.exit_code,
        [(r["window"], r["valid"], r["task"]) for r in written],
        "Facts kept over all rows" in result.output,
        all(r["peak_request"] <= r["window"] for r in written),
    )
    assert actual == (0, [(8000, True, [1, 1]), (16000, True, [1, 1])], True, True)


def test_markdown_table_shows_summary_calls_and_prompt_tokens():
    fixture = SessionEval(
        session="s1",
        window=16_000,
        threshold=11_200,
        turns=10,
        valid=True,
        stopped=None,
        peak_request=9_000,
        compactions=2,
        ineffective=0,
        largest_summary=800,
        summary_calls=2,
        summary_prompt_tokens=7_300,
        task=(1, 1),
        asks=(0, 0),
        modified_paths=(1, 2),
        failures=(0, 1),
        last_error=(0, 1),
        billed=50.0,
        billed_uncompacted=100.0,
    )

    lines = markdown_table([fixture]).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    row = [cell.strip() for cell in lines[2].strip("|").split("|")]
    actual = (
        row[header.index("summary calls")],
        row[header.index("summary prompt tokens")],
        lines[4].endswith("Summary calls: 2 (7,300 prompt tokens)."),
    )

    assert actual == ("2", "7,300", True)
