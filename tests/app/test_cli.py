"""The installed ``forge-compact`` console script, run in a fresh interpreter on real sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_app.files._transcripts import read_transcript
from forge_domain.formats import find_violations
from tests.app.cli_process import forge as cli_forge
from tests.app.cli_process import script
from tests.sessions import SESSIONS

needs_sessions = pytest.mark.skipif(
    not SESSIONS.is_dir(), reason=f"real sessions not found at {SESSIONS}"
)
SESSION_FILES = sorted(SESSIONS.glob("*.json")) if SESSIONS.is_dir() else []
SMALL = SESSIONS / "sweagent-gpt4o-testrepo.json"


def _script() -> str:
    return script()


def forge(
    *args: str | Path,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
):
    """Run the installed script itself, a fresh interpreter (``cli_process.forge``, fresh).

    The other CLI tests import ``forge`` from ``tests.app.cli_process`` (a warm process).
    """
    return cli_forge(*args, cwd=cwd, stdin=stdin, env=env, fresh=True)


def recount(path: Path) -> tuple[int, int]:
    """Tokens and messages of a transcript file, counted from scratch."""
    context = read_transcript(path).context
    return int(context.token_count()), len(context)


REPRESENTATIVE = [
    SESSIONS / "sweagent-gpt4o-testrepo.json",
    SESSIONS / "openhands-llama4-ponyc-4595.json",
    SESSIONS / "msa-deepseek-astroid-1333.json",
]


@needs_sessions
@pytest.mark.parametrize("session", REPRESENTATIVE, ids=[p.stem for p in REPRESENTATIVE])
def test_cli_compact_forced_writes_valid_transcript_with_consistent_metrics(tmp_path, session):
    before = session.read_bytes()
    out, metrics_path = tmp_path / "out.json", tmp_path / "metrics.json"
    result = forge("compact", session, "-o", out, "--force", "--json-metrics", metrics_path)
    assert result.returncode == 0, result.stderr
    metrics = json.loads(metrics_path.read_text())
    actual = {
        "valid": find_violations(read_transcript(out).context),
        "before": (metrics["tokens_before"], metrics["messages_before"]),
        "after": (metrics["tokens_after"], metrics["messages_after"]),
        "input untouched": session.read_bytes() == before,
        "trigger": metrics["trigger"],
        "unchanged without range": metrics["compacted_range"] is None,
    }
    expected = {
        "valid": [],
        "before": recount(session),
        "after": recount(out),
        "input untouched": True,
        "trigger": "forced",
        "unchanged without range": recount(out) == recount(session),
    }
    assert actual == expected


@needs_sessions
def test_cli_compact_without_trigger_writes_input_unchanged(tmp_path):
    out = tmp_path / "out.json"
    result = forge("compact", SMALL, "-o", out)
    actual = (result.returncode, json.loads(out.read_text()), "no trigger fired" in result.stderr)
    assert actual == (0, json.loads(SMALL.read_text()), True)


@needs_sessions
def test_cli_compact_to_stdout_prints_a_transcript_and_metrics_on_stderr():
    result = forge("compact", REPRESENTATIVE[1], "--force")
    messages = json.loads(result.stdout)
    actual = (result.returncode, len(messages) < 47, "tokens" in result.stderr)
    assert actual == (0, True, True)


@needs_sessions
def test_cli_compact_reads_stdin_and_jsonl(tmp_path):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("".join(json.dumps(m) + "\n" for m in json.loads(SMALL.read_text())))
    out = tmp_path / "out.jsonl"
    result = forge("compact", "-", "-o", out, "--force", stdin=jsonl.read_text())
    lines = out.read_text().splitlines()
    assert (result.returncode, all(json.loads(line)["role"] for line in lines)) == (0, True)


@needs_sessions
def test_cli_batch_writes_every_file_and_metrics(tmp_path):
    result = forge("batch", SESSIONS, "-o", tmp_path / "out", "--force")
    records = [
        json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    ]
    actual = {
        "status": result.returncode,
        "inputs": sorted(Path(r["input"]).name for r in records),
        "recounted": [(r["tokens_after"], r["messages_after"]) for r in records],
        "valid": [find_violations(read_transcript(r["output"]).context) for r in records],
    }
    expected = {
        "status": 0,
        "inputs": [p.name for p in SESSION_FILES],
        "recounted": [recount(Path(r["output"])) for r in records],
        "valid": [[] for _ in records],
    }
    assert actual == expected


@needs_sessions
def test_cli_validate_real_session_is_valid():
    result = forge("validate", REPRESENTATIVE[1])
    assert (result.returncode, result.stdout, "valid (openai)" in result.stderr) == (0, "", True)


ORPHAN = [
    {"role": "user", "content": "hi"},
    {"role": "tool", "tool_call_id": "call_9", "content": "stray"},
    {"role": "assistant", "content": "done"},
]
UNANSWERED = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "u"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
]


@pytest.mark.parametrize(
    ("messages", "flags", "expected"),
    [
        (ORPHAN, [], "messages[1]"),
        (UNANSWERED, [], "messages[2]"),
        ([{"role": "assistant", "content": "x"}], ["--anthropic"], "messages[0]"),
    ],
    ids=["orphan-result", "unanswered-call", "anthropic-assistant-first"],
)
def test_cli_validate_reports_violations_with_index(tmp_path, messages, flags, expected):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(messages))
    result = forge("validate", path, *flags)
    assert (result.returncode, expected in result.stdout) == (1, True)


AGENT_BAD_FIELD = "id: x\ncompact:\n  eviction_window: 1.5\n"

# (files to create, arguments, message expected in the single stderr line)
BAD_INPUT = [
    ({}, ["compact", "missing.json"], "missing.json: no such file"),
    ({}, ["validate", "missing.json"], "missing.json: no such file"),
    ({"s.json": "[\n{]"}, ["compact", "s.json"], "s.json: line 2 column 2: invalid JSON"),
    ({"s.json": "[\n{]"}, ["validate", "s.json"], "line 2 column 2"),
    ({"s.json": '{"a": 1}'}, ["compact", "s.json"], "an object with 'messages'"),
    ({"s.json": "42"}, ["validate", "s.json"], "got a number"),
    ({"s.json": ""}, ["compact", "s.json"], "the file is empty"),
    ({"s.json": '[{"role": "robot"}]'}, ["compact", "s.json"], "messages[0].role: unknown role"),
    ({"s.json": json.dumps(ORPHAN)}, ["compact", "s.json"], "messages[1]"),
    (
        {"s.json": json.dumps(ORPHAN[:1])},
        ["compact", "s.json", "-o", "nowhere/out.json"],
        "does not exist",
    ),
    ({}, ["batch", "nothing-*.json", "-o", "out"], "no .json or .jsonl files match"),
]


def _materialise(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize(
    ("files", "args", "message"),
    BAD_INPUT,
    ids=[
        "missing-compact",
        "missing-validate",
        "bad-json-compact",
        "bad-json-validate",
        "object-without-messages",
        "number",
        "empty",
        "bad-role",
        "provider-invalid",
        "output-dir-missing",
        "batch-no-files",
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, files, args, message):
    _materialise(tmp_path, files)
    result = forge(*args, cwd=tmp_path)
    lines = result.stderr.strip().splitlines()
    actual = (result.returncode, message in result.stderr, "Traceback" in result.stderr)
    assert actual == (2, True, False), result.stderr
    assert len(lines) == 1, result.stderr


def test_cli_failed_run_leaves_output_untouched(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(ORPHAN))
    (tmp_path / "out.json").write_text("previous")
    result = forge("compact", "s.json", "-o", "out.json", cwd=tmp_path)
    actual = (result.returncode, sorted(p.name for p in tmp_path.iterdir()))
    assert actual == (2, ["out.json", "s.json"])
    assert (tmp_path / "out.json").read_text() == "previous"


def test_cli_debug_shows_traceback(tmp_path):
    result = forge("compact", "missing.json", "--debug", cwd=tmp_path)
    assert (result.returncode != 0, "Traceback" in result.stderr) == (True, True)


def test_cli_help_lists_every_command():
    result = forge("--help")
    commands = ["compact", "replay", "validate", "batch", "run", "demo", "report"]
    assert [c for c in commands if c in result.stdout] == commands


def test_cli_version():
    result = forge("--version")
    assert (result.returncode, result.stdout.startswith("forge-compact 0.")) == (0, True)


@needs_sessions
def test_cli_compact_keeps_the_object_layout_and_its_other_keys(tmp_path):
    source = tmp_path / "s.json"
    source.write_text(json.dumps({"model": "m", "messages": json.loads(SMALL.read_text())}))
    result = forge("compact", source, "-o", tmp_path / "out.json", "--force")
    written = json.loads((tmp_path / "out.json").read_text())
    assert (result.returncode, sorted(written), written["model"]) == (0, ["messages", "model"], "m")


@needs_sessions
def test_cli_batch_in_two_processes_writes_what_one_process_writes(tmp_path):
    one = forge("batch", SESSIONS, "-o", tmp_path / "one", "--jobs", "1")
    two = forge("batch", SESSIONS, "-o", tmp_path / "two", "--jobs", "2")
    names = sorted(p.name for p in (tmp_path / "one").glob("*.json"))
    same = [
        (tmp_path / "one" / n).read_bytes() == (tmp_path / "two" / n).read_bytes() for n in names
    ]
    lines = (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()
    actual = (
        one.returncode,
        two.returncode,
        len(names),
        all(same),
        sorted(Path(json.loads(line)["input"]).name for line in lines),
        "2 jobs" in two.stderr,
    )
    assert actual == (0, 0, len(SESSION_FILES), True, [p.name for p in SESSION_FILES], True)
