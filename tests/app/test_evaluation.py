"""eval: facts read independently of the summary, their retention, and the prompt-cache cost."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from forge_app.cli.app import app
from forge_app.cli.eval import markdown_table
from forge_app.evaluation import (
    FactCheck,
    PromptCostSum,
    SessionEval,
    extract_facts,
    fact_checks,
    prompt_cost,
    retention,
    uncompacted_requests,
)
from forge_domain import Context, Role, TextMessage, ToolCall, ToolResult
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
    (
        "diff_written_not_applied",
        "cat > fix.patch <<'EOF'\n--- a/m.py\n+++ b/m.py\nEOF",
        ("fix.patch",),
    ),
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
    # (id, output, evidence line, exit code)
    (
        "returncode",
        "<returncode>2</returncode>\n<output>\nerror: no such file\n</output>",
        "error: no such file",
        2,
    ),
    (
        "traceback",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'",
        "KeyError: 'a'",
        None,
    ),
    (
        "traceback_then_more_output",
        "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
        '  File "t.py", line 3, in <module>\n    get()\n'
        "Product.DoesNotExist: Product matching query does not exist.\n"
        "Later the script printed this line.\n</output>",
        "Product.DoesNotExist: Product matching query does not exist.",
        1,
    ),
    ("exit_code_only", "<returncode>1</returncode>\n<output>\n</output>", None, 1),
    (
        "claude_code_refused",
        "<tool_use_error>File does not exist.</tool_use_error>",
        "File does not exist.",
        None,
    ),
    ("success", "<returncode>0</returncode>\n<output>\nok\n</output>", None, None),
]


@pytest.mark.parametrize(
    ("output", "evidence", "code"), [c[1:] for c in FAILURES], ids=[c[0] for c in FAILURES]
)
def test_extract_facts_reads_failures_with_their_evidence(output, evidence, code):
    facts = extract_facts(session(bash("python x.py", output)))

    last = facts.last_error
    actual = (last.evidence, last.exit_code) if last is not None else None

    assert actual == (None if evidence is None and code is None else (evidence, code))


def test_a_refused_read_is_a_failure_the_uncompacted_context_holds():
    call = ToolCall(id="r1", name="Read", arguments=json.dumps({"file_path": "/w/lib/a.ex"}))
    refused = "<tool_use_error>File does not exist.</tool_use_error>"
    fixture = Context(
        [
            TextMessage.user("fix the parser"),
            TextMessage.assistant(None, (call,)),
            ToolResult(call_id="r1", content=refused),
        ]
    )

    facts = extract_facts(fixture)

    assert (facts.failures[0].command, retention(facts, fixture).failures) == (
        "/w/lib/a.ex",
        (1, 1),
    )


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


FENCED_TURNS = [
    # (id, assistant text, the command the failure is charged to, paths written)
    (
        "python_block_then_bash_block",
        "Here is the fix:\n```python\nx = 1\n```\nthen run\n```bash\nsed -i 's/a/b/' x.py\n```",
        "sed -i 's/a/b/' x.py",
        ("x.py",),
    ),
    (
        "four_backtick_fence_holding_three",
        "````\n```bash\nrm -rf /\n```\n````\n```bash\ntouch ok.txt\n```",
        "touch ok.txt",
        ("ok.txt",),
    ),
    ("bare_fence", "THOUGHT: go\n```\ncreate new.py\n```", "create new.py", ("new.py",)),
]


@pytest.mark.parametrize(
    ("text", "command", "paths"),
    [c[1:] for c in FENCED_TURNS],
    ids=[c[0] for c in FENCED_TURNS],
)
def test_extract_facts_reads_each_fence_on_its_own(text, command, paths):
    fixture = Context(
        [
            TextMessage.user("fix it"),
            TextMessage.assistant(text),
            TextMessage.user("<returncode>1</returncode>\n<output>\nerror: boom\n</output>"),
        ]
    )

    facts = extract_facts(fixture)
    actual = ([f.command for f in facts.failures], facts.modified_paths)

    assert actual == ([command], paths)


QUOTED_ARROWS = [
    ("sed_address_with_arrow", "sed -i '/def f() -> None:/a pass' src/app.py", ("src/app.py",)),
    ("echo_of_a_comparison", 'echo "a > b" > out.txt', ("out.txt",)),
    ("python_comparison", 'python -c "print(1 > 0)"', ()),
    ("heredoc_body_arrow", "cat > gen.py <<'EOF'\nx = a -> b > c\nEOF", ("gen.py",)),
]


@pytest.mark.parametrize(
    ("command", "paths"), [c[1:] for c in QUOTED_ARROWS], ids=[c[0] for c in QUOTED_ARROWS]
)
def test_extract_facts_reads_no_redirection_inside_quotes(command, paths):
    facts = extract_facts(session(bash(command, "<returncode>0</returncode>")))

    assert facts.modified_paths == paths


SWE_AGENT_PROMPT = "\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$"
USER_TURNS = [
    # (id, previous assistant action, user message, counted as an ask)
    (
        "swe_agent_traceback",
        "python x.py",
        "Traceback (most recent call last):\n  File" + SWE_AGENT_PROMPT,
        False,
    ),
    (
        "swe_agent_search",
        "find_file a.py",
        'Found 1 matches for "a.py":\n/r/a.py' + SWE_AGENT_PROMPT,
        False,
    ),
    (
        "swe_agent_syntax_error",
        "edit 1:1",
        "Your proposed edit has introduced new syntax error(s)." + SWE_AGENT_PROMPT,
        False,
    ),
    (
        "format_error",
        "ls",
        "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.",
        False,
    ),
    (
        "submitted_diff",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff",
        "diff --git a/x b/x\n+1",
        False,
    ),
    ("person", "ls", "also add a test for the empty case", True),
]


@pytest.mark.parametrize(
    ("action", "text", "is_ask"), [c[1:] for c in USER_TURNS], ids=[c[0] for c in USER_TURNS]
)
def test_extract_facts_counts_no_observation_as_an_ask(action, text, is_ask):
    fixture = Context(
        [
            TextMessage.user("fix it"),
            TextMessage.assistant(f"THOUGHT: act\n```\n{action}\n```"),
            TextMessage.user(text),
        ]
    )

    assert extract_facts(fixture).asks == ((text,) if is_ask else ())


def test_extract_facts_treats_deeply_nested_arguments_as_unparseable():
    nested = "[" * 100_000 + "]" * 100_000
    call = ToolCall(id="c0", name="edit_file", arguments=nested)
    fixture = Context(
        [
            TextMessage.user("fix it"),
            TextMessage.assistant(None, (call,)),
            ToolResult(
                call_id="c0", content="<returncode>1</returncode>\n<output>\nerror: x\n</output>"
            ),
        ]
    )

    facts = extract_facts(fixture)
    kept = retention(facts, fixture)

    assert (facts.modified_paths, facts.failures[0].evidence, kept.failures) == (
        (),
        "error: x",
        (1, 1),
    )


EXIT_CODE_CONTEXTS = [
    # (id, what the compacted context says, the failure counted as kept)
    (
        "next_to_its_command",
        "**Execute:** (failed)\n```\ngrep -n foo a.py\n```\nError: `exit code 1`",
        True,
    ),
    (
        "pruned_placeholder",
        "[tool output pruned: bash `grep -n foo a.py` -> failed: exit code 1, 30 chars]",
        True,
    ),
    (
        "exit_code_of_another_command",
        "**Execute:**\n```\ngrep -n foo a.py\n```\n"
        + "**Update:** `b.py`\n" * 40
        + "**Execute:** (failed)\n```\nmake\n```\nError: `exit code 1`",
        False,
    ),
]


@pytest.mark.parametrize(
    ("summary", "kept"), [c[1:] for c in EXIT_CODE_CONTEXTS], ids=[c[0] for c in EXIT_CODE_CONTEXTS]
)
def test_retention_finds_an_exit_code_only_next_to_its_command(summary, kept):
    facts = extract_facts(
        session(bash("grep -n foo a.py", "<returncode>1</returncode>\n<output>\n</output>"))
    )
    compacted = Context([TextMessage.user("fix the parser"), TextMessage.user(summary)])

    assert retention(facts, compacted).failures == (int(kept), 1)


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


def test_fact_checks_mark_each_fact_kept_or_lost():
    fixture = session(
        bash("sed -i 's/a/b/' src/app.py", "<returncode>0</returncode>", 0),
        bash("python -m pytest", "<returncode>1</returncode>\n<output>\nFAILED t.py\n</output>", 1),
    )
    compacted = Context([TextMessage.user("fix the parser"), TextMessage.user("edited src/app.py")])

    actual = fact_checks(extract_facts(fixture), compacted)

    assert actual == (
        FactCheck("task", "fix the parser", True),
        FactCheck("modified_paths", "src/app.py", True),
        FactCheck("failures", "python -m pytest → FAILED t.py", False),
        FactCheck("last_error", "python -m pytest → FAILED t.py", False),
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


def test_prompt_cost_added_up_as_each_request_is_sent_matches_the_whole_list():
    """The same three requests, added one at a time; the sum after each is the cost of
    the requests so far (only the previous request is kept for the cached prefix)."""
    a, b, c = (
        TextMessage.user("x" * 40),
        TextMessage.assistant("y" * 80),
        TextMessage.user("z" * 20),
    )
    b2 = TextMessage.user("s" * 8)
    requests = [Context([a]), Context([a, b]), Context([a, b2, c])]
    total = PromptCostSum()
    seen = []
    for request in requests:
        total.add(request)
        seen.append(total.cost(discount=0.5))

    assert seen == [prompt_cost(requests[:n], discount=0.5) for n in (1, 2, 3)]
    assert (seen[-1].sent, seen[-1].cached, seen[-1].billed) == (57, 20, 47.0)


_ROLES = st.sampled_from(["user", "assistant", "system"])
_RECORDING = st.lists(st.tuples(_ROLES, st.text(max_size=30)), max_size=12).map(
    lambda rows: [
        TextMessage.model_validate({"role": role, "content": text or "."}) for role, text in rows
    ]
)


@given(_RECORDING)
def test_uncompacted_requests_are_each_prefix_up_to_a_response(recording):
    """One view of a growing context per response: each the prefix before it, and the cost
    read from the views' totals is the cost of the prefixes as copies, message by message."""
    requests = uncompacted_requests(recording)
    copies = [
        tuple(recording[:index])
        for index, message in enumerate(recording)
        if index > 0 and message.role == Role.ASSISTANT
    ]

    assert [tuple(request) for request in requests] == copies
    assert prompt_cost(requests, discount=0.25) == prompt_cost(copies, discount=0.25)


def test_uncompacted_requests_share_one_store():
    """Each request extends the one before (the O(1) path of ``PromptCostSum.add``), and a
    view appended to is copied, not changed (the next request is unchanged)."""
    recording = [TextMessage.user("a"), TextMessage.assistant("b"), TextMessage.user("c")]
    recording += [TextMessage.assistant("d")]
    first, second = uncompacted_requests(recording)

    first.append(TextMessage.user("other"))

    assert second.extends(first)
    assert [m.text for m in second] == ["a", "b", "c"]


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
