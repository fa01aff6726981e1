"""Fuzzing the command line: malformed transcripts and hostile arguments.

For every input, whatever the command: the exit status is 0, 1 or 2; exit 2 prints
exactly one bounded ``forge-compact: error:`` line and no traceback; every file that
existed before (the input, the agent file, links to them) keeps its bytes and mtime;
an output is either absent or a transcript the tool reads back as provider-valid; no
temporary file is left behind. Most examples run the command in this process (fast);
a table of the cases found by hand runs the installed script in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_app.cli import main
from forge_app.cli.console import MAX_ERROR_CHARS
from forge_app.errors import TranscriptError
from forge_app.files._transcripts import read_transcript
from forge_domain.formats import find_violations
from tests.app.cli_process import forge
from tests.app.hostile_inputs import DOCUMENTS, VALID
from tests.profiles import examples

ERROR_PREFIX = "forge-compact: error: "
AGENT = "agents:\n  - id: a\n    compact:\n      token_threshold: 200\n      retention_window: 2\n"

# -- running the command line in this process ---------------------------------------------


def run_cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``forge-compact ARGS`` run in this process."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    stdin, sys.stdin = sys.stdin, io.StringIO("")  # ``-`` reads an empty standard input
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            contextlib.chdir(cwd),
        ):
            main(args)
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdin = stdin
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of every file in ``folder`` (symlinks as what they point at)."""
    return {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.iterdir())
        if path.is_file()
    }


def check_run(code: int, stderr: str, folder: Path, before: dict[str, tuple[bytes, int]]) -> None:
    """The invariants every run keeps (see the module docstring)."""
    assert code in (0, 1, 2), stderr
    assert "Traceback" not in stderr, stderr
    if code == 2:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, stderr[:2_000]
        assert lines[0].startswith(ERROR_PREFIX), lines[0][:2_000]
        assert len(lines[0]) <= len(ERROR_PREFIX) + MAX_ERROR_CHARS, len(lines[0])
    after = snapshot(folder)
    assert {name: after.get(name) for name in before} == before, "an existing file changed"
    assert not [p.name for p in folder.iterdir() if ".forge-" in p.name], "temporary file left"
    for name in set(after) - set(before):
        if name.endswith((".json", ".jsonl")) and not name.startswith("m"):
            assert code == 0, f"{name} written by a run that exited {code}"
            assert find_violations(read_transcript(folder / name).context) == []


# -- malformed transcripts ----------------------------------------------------------------

_COMMANDS = st.sampled_from(
    [
        ["validate", "s.json"],
        ["compact", "s.json", "-o", "out.json", "--agent", "a.yaml"],
        ["compact", "s.json", "--force", "-o", "out.json", "--json-metrics", "m.json"],
        ["replay", "s.json", "-o", "out.json", "--agent", "a.yaml", "--json-metrics", "m.jsonl"],
    ]
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, command=_COMMANDS)
def test_cli_on_malformed_transcripts_keeps_its_promises(document, command):
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "s.json").write_bytes(document)
        (folder / "a.yaml").write_text(AGENT)
        before = snapshot(folder)

        code, _, stderr = run_cli(command, folder)

        check_run(code, stderr, folder, before)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, command=_COMMANDS)
def test_installed_script_on_malformed_transcripts_keeps_its_promises(document, command):
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "s.json").write_bytes(document)
        (folder / "a.yaml").write_text(AGENT)
        before = snapshot(folder)

        result = forge(*command, cwd=folder)

        check_run(result.returncode, result.stderr, folder, before)


# -- hostile arguments --------------------------------------------------------------------

_ARGUMENT = st.sampled_from(
    [
        "compact",
        "replay",
        "validate",
        "eval",
        "-o",
        "--output",
        "--json-metrics",
        "--chart",
        "--agent",
        "--agent-id",
        "--force",
        "--windows",
        "--json",
        "--bogus",
        "t.json",
        "./t.json",
        "link.json",
        "a.yaml",
        "-",
        ".",
        "/",
        "nodir/x.json",
        "out.json",
        "c.svg",
        "c.pdf",
        "0",
        "8000,x",
        "x" * 5_000,
        "a\nb",
    ]
) | st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=12)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(
    command=st.sampled_from(["compact", "replay", "validate", "eval"]),
    arguments=st.lists(_ARGUMENT, max_size=6),
)
def test_cli_on_hostile_arguments_keeps_its_promises(command, arguments):
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "t.json").write_text(json.dumps(VALID))
        (folder / "a.yaml").write_text(AGENT)
        (folder / "link.json").symlink_to("t.json")
        before = snapshot(folder)

        code, _, stderr = run_cli([command, *arguments], folder)

        check_run(code, stderr, folder, before)


# -- the cases found by hand, through the installed script ------------------------------

HAND_CASES = [
    ("surrogate", b'[{"role": "user", "content": "x\\ud800"}]', ["compact", "s.json"]),
    ("deep", b"[" * 5_000 + b"]" * 5_000, ["replay", "s.json"]),
    ("big-integer", b"[" + b"7" * 5_000 + b"]", ["validate", "s.json"]),
    ("nan", b'[{"role": "user", "content": "x", "usage": {"cost": NaN}}]', ["compact", "s.json"]),
    ("huge-cost", b'[{"role": "user", "content": "x", "usage": {"cost": 1e999}}]', ["compact", "s.json"]),  # noqa: E501
    ("huge-role", json.dumps([{"role": "x" * 5_000_000}]).encode(), ["compact", "s.json"]),
    ("newline-keys", json.dumps({"a\nb\nc": 1}).encode(), ["replay", "s.json"]),
    ("empty-list", b"[]", ["compact", "s.json", "--force"]),
    ("bad-call-type", json.dumps([VALID[1], {**VALID[2], "tool_calls": [{**VALID[2]["tool_calls"][0], "type": "x"}]}, VALID[3]]).encode(), ["compact", "s.json"]),  # noqa: E501
    ("image-url-number", json.dumps([{"role": "user", "content": [{"type": "image_url", "image_url": 5}]}]).encode(), ["validate", "s.json"]),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "args"), [c[1:] for c in HAND_CASES], ids=[c[0] for c in HAND_CASES]
)
def test_installed_script_on_hand_found_inputs_exits_2_with_one_line(tmp_path, document, args):
    (tmp_path / "s.json").write_bytes(document)
    before = snapshot(tmp_path)

    result = forge(*args, cwd=tmp_path)

    check_run(result.returncode, result.stderr, tmp_path, before)
    assert result.returncode == 2, result.stderr


def test_fifo_as_input_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "s.json")

    result = forge("compact", "s.json", cwd=tmp_path)

    actual = (result.returncode, "FIFO" in result.stderr, len(result.stderr.splitlines()))
    assert actual == (2, True, 1), result.stderr


def test_read_transcript_errors_are_typed_for_every_hand_found_input(tmp_path):
    failures = []
    for name, document, _ in HAND_CASES:
        path = tmp_path / f"{name}.json"
        path.write_bytes(document)
        try:
            context = read_transcript(path).context
        except TranscriptError:
            continue
        if not find_violations(context):
            failures.append(name)
    assert failures == []


ARGUMENT_CASES = [
    ("unknown-option", ["compact", "t.json", "--bogus"], "No such option"),
    ("missing-argument", ["compact"], "Missing argument"),
    ("jobs-zero", ["batch", ".", "-o", "out", "-j", "0"], "--jobs"),
    ("window-zero", ["eval", "t.json", "--windows", "0"], "positive integers"),
    ("window-text", ["eval", "t.json", "--windows", "8000,x"], "list of integers"),
    ("discount-nan", ["eval", "t.json", "--cache-discount", "nan"], "--cache-discount"),
    ("chart-pdf", ["replay", "t.json", "--chart", "c.pdf"], "unsupported chart format"),
    ("huge-path", ["compact", "t.json", "-o", "x" * 100_000], "cannot write"),
    ("newline-path", ["compact", "a\nb.json"], "no such file"),
    ("unknown-command", ["compress", "t.json"], "No such command"),
]


@pytest.mark.parametrize(
    ("args", "message"), [c[1:] for c in ARGUMENT_CASES], ids=[c[0] for c in ARGUMENT_CASES]
)
def test_installed_script_on_hostile_arguments_exits_2_with_one_line(tmp_path, args, message):
    (tmp_path / "t.json").write_text(json.dumps(VALID))
    before = snapshot(tmp_path)

    result = forge(*args, cwd=tmp_path)

    check_run(result.returncode, result.stderr, tmp_path, before)
    assert (result.returncode, message in result.stderr) == (2, True), result.stderr
