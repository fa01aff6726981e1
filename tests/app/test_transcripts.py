"""Reading transcripts in every layout, the errors for bad files, and atomic writes."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_app.errors import (
    MalformedJson,
    NotATranscript,
    OutputNotWritten,
    TranscriptError,
    TranscriptNotFound,
)
from forge_app.files._transcripts import (
    Transcript,
    layout_for,
    parse_transcript,
    read_transcript,
    write_text_atomic,
    write_transcript,
)
from forge_domain import Context, TextMessage
from forge_domain.testing import PATTERN_LETTERS, pattern
from tests.sessions import SESSIONS

needs_sessions = pytest.mark.skipif(
    not SESSIONS.is_dir(), reason=f"real sessions not found at {SESSIONS}"
)
SESSION_FILES = sorted(SESSIONS.glob("*.json")) if SESSIONS.is_dir() else []

USER = '{"role": "user", "content": "hi"}'
ASSISTANT = '{"role": "assistant", "content": "hello"}'
TWO = Context([TextMessage.user("hi"), TextMessage.assistant("hello")])


@pytest.mark.parametrize(
    ("name", "text", "layout", "envelope"),
    [
        ("a.json", f"[{USER}, {ASSISTANT}]", "list", {}),
        (
            "a.json",
            f'{{"model": "m", "messages": [{USER}, {ASSISTANT}]}}',
            "object",
            {"model": "m"},
        ),
        ("a.jsonl", f"{USER}\n\n{ASSISTANT}\n", "jsonl", {}),
        ("a.json", f"{USER}\n{ASSISTANT}", "jsonl", {}),
    ],
    ids=["list", "object", "jsonl-suffix", "jsonl-sniffed"],
)
def test_parse_transcript_reads_every_layout(name, text, layout, envelope):
    actual = parse_transcript(text, name)
    expected = Transcript(TWO, layout, envelope)
    assert actual == expected


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("", NotATranscript, "a.json: the file is empty"),
        ("  \n", NotATranscript, "a.json: the file is empty"),
        ("[1,", MalformedJson, "a.json: line 1 column 4: invalid JSON: Expecting value"),
        ('[\n  {"role": "user",\n  "content" "x"}]', MalformedJson, "a.json: line 3 column 13"),
        (f"{USER}\n{{bad", MalformedJson, "a.json: line 2 column 2: invalid JSON"),
        ('{"a": 1}', NotATranscript, "an object with 'messages' (keys: a)"),
        ("3", NotATranscript, "got a number"),
        ('"text"', NotATranscript, "got a string"),
        ('{"messages": {}}', NotATranscript, "'messages' must be a list, got an object"),
        ('[{"role": "bob"}]', NotATranscript, "messages[0].role: unknown role 'bob'"),
        (f'[{USER}, "x"]', NotATranscript, "messages[1]: expected a message object"),
        (
            '[{"role": "tool", "content": "x"}]',
            NotATranscript,
            "messages[0].tool_call_id: a tool result needs a non-empty call id",
        ),
    ],
    ids=[
        "empty",
        "blank",
        "truncated",
        "missing-colon",
        "jsonl-bad-line",
        "object-without-messages",
        "number",
        "string",
        "messages-not-list",
        "unknown-role",
        "message-not-object",
        "tool-without-id",
    ],
)
def test_parse_transcript_names_the_problem(text, error, message):
    with pytest.raises(error) as caught:
        parse_transcript(text, "a.json")
    assert message in str(caught.value)


def test_parse_transcript_bad_message_carries_its_index():
    with pytest.raises(NotATranscript) as caught:
        parse_transcript(f'[{USER}, {ASSISTANT}, {{"role": 1}}]', "a.json")
    assert (caught.value.index, caught.value.path) == (2, Path("a.json"))


def test_malformed_json_carries_line_and_column():
    with pytest.raises(MalformedJson) as caught:
        parse_transcript('[\n  {"role": "user",,}\n]', "a.json")
    assert (caught.value.line, caught.value.column) == (2, 19)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda tmp: tmp / "missing.json", "missing.json: no such file"),
        (lambda tmp: tmp, "is a directory"),
    ],
    ids=["missing", "directory"],
)
def test_read_transcript_missing_file(tmp_path, setup, message):
    with pytest.raises(TranscriptNotFound) as caught:
        read_transcript(setup(tmp_path))
    assert message in str(caught.value)


def test_read_transcript_rejects_binary(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"[\xff\xfe]")
    with pytest.raises(TranscriptError, match="not UTF-8"):
        read_transcript(path)


@needs_sessions
@pytest.mark.parametrize("path", SESSION_FILES, ids=[p.stem for p in SESSION_FILES])
def test_read_transcript_real_session_round_trips(path):
    transcript = read_transcript(path)
    actual = json.loads(transcript.dumps())
    expected = json.loads(path.read_text())
    assert actual == expected


@given(
    letters=st.text(alphabet=PATTERN_LETTERS, max_size=20),
    layout=st.sampled_from(["list", "object", "jsonl"]),
)
def test_transcript_dumps_then_parses_to_the_same_context(letters, layout):
    fixture = Transcript(pattern(letters), layout, {"id": 7} if layout == "object" else {})
    actual = parse_transcript(fixture.dumps(), "x.jsonl" if layout == "jsonl" else "x.json")
    assert actual == fixture


@pytest.mark.parametrize(
    ("name", "read_as", "expected"),
    [
        ("out.json", "list", "list"),
        ("out.json", "object", "object"),
        ("out.json", "jsonl", "list"),
        ("out.jsonl", "list", "jsonl"),
        ("-", "object", "object"),
    ],
)
def test_layout_for_follows_suffix_then_input(name, read_as, expected):
    assert layout_for(name, Transcript(TWO, read_as)) == expected


def test_write_transcript_writes_readable_file(tmp_path):
    path = tmp_path / "out.jsonl"
    fixture = Transcript(TWO, "list")
    write_transcript(path, fixture)
    assert read_transcript(path) == Transcript(TWO, "jsonl")


def test_write_text_atomic_missing_directory_leaves_nothing(tmp_path):
    with pytest.raises(OutputNotWritten, match="does not exist"):
        write_text_atomic(tmp_path / "nope" / "out.json", "[]")
    assert list(tmp_path.iterdir()) == []


def test_write_text_atomic_failure_keeps_old_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomic(path, "new \ud800")
    assert [(p.name, p.read_text()) for p in tmp_path.iterdir()] == [("out.json", "old")]


def test_write_text_atomic_keeps_permissions_of_replaced_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(0o640)
    write_text_atomic(path, "new")
    assert (path.read_text(), path.stat().st_mode & 0o777) == ("new", 0o640)


def test_write_text_atomic_writes_into_a_fifo_without_replacing_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_text_atomic(fifo, "through the pipe")
    reader.join(timeout=10)
    assert (received, stat.S_ISFIFO(fifo.stat().st_mode)) == ([b"through the pipe"], True)


def test_write_text_atomic_to_a_directory_fails_cleanly(tmp_path):
    with pytest.raises(OutputNotWritten, match="Is a directory"):
        write_text_atomic(tmp_path, "x")
    assert list(tmp_path.iterdir()) == []
