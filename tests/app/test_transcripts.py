"""Reading transcripts in every layout, the errors for bad files, and atomic writes."""

from __future__ import annotations

import io
import json
import math
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
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
from forge_domain import Context, TextMessage, ToolCall, ToolResult
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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"model": "m", "messages": []}',
            "expected a list of messages or an object with 'input' (keys: messages, model)",
        ),
        ('"text"', "expected a list of messages or an object with 'input', got a string"),
    ],
    ids=["object-with-messages", "string"],
)
def test_parse_transcript_read_as_responses_names_the_input_key(text, message):
    with pytest.raises(NotATranscript) as caught:
        parse_transcript(text, "a.json", "responses")
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
    with pytest.raises(OutputNotWritten, match="lone surrogate"):
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


# -- hostile inputs (issue 13): refused as bad JSON, with the position of the problem -------------


def _user(extra: str, content: str = '"x"') -> str:
    return f'[{{"role": "user", "content": {content}{extra}}}]'


_UNWRITABLE = [
    (_user(', "score": NaN'), "line 1 column 44: invalid JSON: NaN is not a JSON number"),
    (
        _user(', "score": Infinity'),
        "line 1 column 44: invalid JSON: Infinity is not a JSON number",
    ),
    (
        _user(', "score": -Infinity'),
        "line 1 column 44: invalid JSON: -Infinity is not a JSON number",
    ),
    (
        _user(', "usage": {"cost": 1e309}'),
        "line 1 column 53: invalid JSON: number 1e309 is out of range "
        "(a float holds at most 1.8e308)",
    ),
    (
        _user(', "n": ' + "9" * 5_000),
        "line 1 column 40: invalid JSON: integer of 5,000 digits is out of range (at most 4,300)",
    ),
    (
        _user(', "x": ' + "[" * 5_000 + "]" * 5_000),
        "line 1 column 238: invalid JSON: nested deeper than 200 levels",
    ),
    (
        _user(', "x": ' + "[" * 199 + "]" * 199),
        "line 1 column 238: invalid JSON: nested deeper than 200 levels",
    ),
    (
        _user("", '"x\\ud800"'),
        "line 1 column 30: invalid JSON: lone surrogate '\\ud800' (half a UTF-16 pair)",
    ),
    (
        '[\n  {"role": "user",\n   "content": "\\udc00 after"}]',
        "line 3 column 15: invalid JSON: lone surrogate '\\udc00' (half a UTF-16 pair)",
    ),
    (
        _user("", '"\\ud83d\\ud83d"'),
        "line 1 column 30: invalid JSON: lone surrogate '\\ud83d' (half a UTF-16 pair)",
    ),
    (
        _user(', "\\udfff": 1'),
        "line 1 column 35: invalid JSON: lone surrogate '\\udfff' (half a UTF-16 pair)",
    ),
    (
        _user("", '"x\ud800"'),
        "line 1 column 30: invalid JSON: lone surrogate '\\ud800' (half a UTF-16 pair)",
    ),
]
_UNWRITABLE_IDS = [
    "nan",
    "infinity",
    "minus-infinity",
    "float-over-range",
    "int-over-digit-limit",
    "nested-5000",
    "nested-201",
    "lone-lead-surrogate",
    "lone-trail-surrogate-line-3",
    "lead-then-lead",
    "surrogate-in-a-key",
    "raw-surrogate-in-text",
]


@pytest.mark.parametrize(("text", "expected"), _UNWRITABLE, ids=_UNWRITABLE_IDS)
def test_parse_transcript_refuses_json_it_could_not_write_back(text, expected):
    with pytest.raises(MalformedJson) as caught:
        parse_transcript(text, "a.json")

    assert str(caught.value) == f"a.json: {expected}"


def _is_utf8(text: str) -> bool:
    return not any("\ud800" <= c <= "\udfff" for c in text)


_UNWRITABLE_FILES = [
    pytest.param(text, expected, id=name)
    for (text, expected), name in zip(_UNWRITABLE, _UNWRITABLE_IDS, strict=True)
    if _is_utf8(text)  # a raw surrogate cannot be in a UTF-8 file
]


@pytest.mark.parametrize(("text", "expected"), _UNWRITABLE_FILES)
def test_read_transcript_refuses_json_it_could_not_write_back(tmp_path, text, expected):
    # the file's bytes are dropped once decoded; a document the walk refuses is read again
    # for the strict reader, which says where the problem is
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(MalformedJson) as caught:
        read_transcript(path)

    assert str(caught.value) == f"{path}: {expected}"


def test_parse_transcript_names_the_jsonl_line_of_a_lone_surrogate():
    text = f'{USER}\n{{"role": "assistant", "content": "\\ud800"}}\n'

    with pytest.raises(MalformedJson) as caught:
        parse_transcript(text, "a.jsonl")

    assert (caught.value.line, caught.value.column) == (2, 34)


@pytest.mark.parametrize(
    "text",
    [
        _user(', "x": ' + "[" * 198 + "]" * 198),
        _user("", '"\\ud83d\\ude00 \\uD83D\\uDE00"'),
        _user("", '"\\\\ud800 is how you write it"'),
        _user(', "usage": {"cost": 1.7e308}'),
        _user(', "n": ' + "9" * 4_300),
        _user("", '"NaN Infinity 1e309"'),
    ],
    ids=[
        "nested-200",
        "surrogate-pairs",
        "escaped-backslash",
        "largest-floats",
        "int-at-digit-limit",
        "constants-in-a-string",
    ],
)
def test_parse_transcript_reads_what_it_can_write_back(text):
    transcript = parse_transcript(text, "a.json")

    actual = parse_transcript(transcript.dumps(), "a.json")

    assert actual == transcript


def test_read_transcript_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    errors: list[BaseException] = []

    def read() -> None:
        try:
            read_transcript(fifo)
        except TranscriptNotFound as exc:
            errors.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)

    assert [str(e) for e in errors] == [
        f"{fifo}: is a FIFO, not a regular file; pipe it to standard input with '-'"
    ]


@pytest.mark.parametrize(
    ("setup", "problem"),
    [
        (lambda tmp: Path(os.devnull), "is a character device, not a regular file"),
        (lambda tmp: _symlink_loop(tmp / "loop.json"), "too many levels of symbolic links"),
        (lambda tmp: _socket(tmp / "s.sock"), "is a socket, not a regular file"),
        (lambda tmp: tmp, "is a directory, not a transcript file"),
    ],
    ids=["device", "symlink-loop", "socket", "directory"],
)
def test_read_transcript_refuses_what_is_not_a_regular_file(tmp_path, setup, problem):
    path = setup(tmp_path)

    with pytest.raises(TranscriptNotFound) as caught:
        read_transcript(path)

    assert str(caught.value).startswith(f"{path}: {problem}")


def _symlink_loop(path: Path) -> Path:
    path.symlink_to(path)
    return path


def _socket(path: Path) -> Path:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()
    return path


def test_read_transcript_reads_stdin_as_strict_utf8(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'[\n  "x\xed\xa0\x80"]')))

    with pytest.raises(MalformedJson) as caught:
        read_transcript("-")

    assert str(caught.value) == "<stdin>: line 2 column 5: invalid JSON: not UTF-8 text"


# -- JSONL lines end at "\n" only; every write reads back to the same bytes ------------------------

LINE_BREAKERS = "\u2028 \u2029 \u0085 \x1c \x1d \x1e \x0b \x0c \r"
"""Characters ``str.splitlines`` splits at (JSON escapes the ASCII ones, not the others)."""


@pytest.mark.parametrize("name", ["out.jsonl", "out.json"])
def test_write_transcript_with_line_separators_reads_back_to_the_same_bytes(tmp_path, name):
    path = tmp_path / name
    fixture = Transcript(
        Context([TextMessage.user(f"a{LINE_BREAKERS}b"), TextMessage.assistant(LINE_BREAKERS)]),
        "jsonl" if name.endswith("l") else "list",
    )
    write_transcript(path, fixture)
    written = path.read_bytes()

    again = read_transcript(path)
    write_transcript(path, again)

    assert (again, path.read_bytes()) == (fixture, written)


def test_jsonl_lines_may_end_with_crlf():
    actual = parse_transcript(f"{USER}\r\n{ASSISTANT}\r\n", "a.jsonl")

    assert actual == Transcript(TWO, "jsonl")


_UNICODE = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
"""Any text without surrogates (the only characters UTF-8 cannot carry)."""
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _UNICODE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_UNICODE, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _transcripts(draw: st.DrawFn) -> Transcript:
    messages: list = [TextMessage.user(draw(_UNICODE))]
    for number in range(draw(st.integers(0, 4))):
        call = ToolCall(id=f"c{number}", name=draw(_UNICODE.filter(bool)), arguments=draw(_UNICODE))
        messages += [
            TextMessage.assistant(draw(_UNICODE), (call,)),
            ToolResult.of(f"c{number}", draw(_UNICODE)),
        ]
    extra = {
        f"x_{key}": value
        for key, value in draw(st.dictionaries(_UNICODE, _JSON, max_size=3)).items()
    }
    messages.append(TextMessage.assistant(draw(_UNICODE)).model_copy(update={"extra": extra}))
    layout = draw(st.sampled_from(["list", "object", "jsonl"]))
    envelope = draw(st.dictionaries(_UNICODE.filter(lambda k: k != "messages"), _JSON, max_size=3))
    return Transcript(Context(messages), layout, envelope if layout == "object" else {})


@given(_transcripts())
def test_every_transcript_written_reads_back_equal_with_the_same_bytes(fixture):
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / ("out.jsonl" if fixture.layout == "jsonl" else "out.json")
        write_transcript(path, fixture)
        written = path.read_bytes()
        again = read_transcript(path)
        write_transcript(path, again)

        assert (again, path.read_bytes()) == (fixture, written)


# -- writes never produce what cannot be read back -----------------------------------------


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (
            TextMessage.user("x").model_copy(update={"extra": {"score": math.nan}}),
            "not writable as JSON: Out of range float values are not JSON compliant: nan",
        ),
        (
            TextMessage.user("a\ud800"),
            "a lone surrogate '\\ud800' (character 43) is not UTF-8 text",
        ),
    ],
    ids=["nan", "lone-surrogate"],
)
def test_write_transcript_refuses_values_json_cannot_carry(tmp_path, message, problem):
    path = tmp_path / "out.json"
    path.write_text("old")

    with pytest.raises(OutputNotWritten) as caught:
        write_transcript(path, Transcript(Context([message])))

    actual = (str(caught.value), [(p.name, p.read_text()) for p in tmp_path.iterdir()])
    assert actual == (f"cannot write {path}: {problem}", [("out.json", "old")])


# -- temporary files left by killed writers ------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    ("name", "age", "removed"),
    [
        (lambda: f".out.json.forge-{_dead_pid()}-abc12345.tmp", 0, True),
        (lambda: f".other.json.forge-{_dead_pid()}-x_y9.tmp", 0, True),
        (lambda: f".out.json.forge-{os.getppid()}-abc12345.tmp", 3_600, True),
        (lambda: f".out.json.forge-{os.getppid()}-abc12345.tmp", 60, False),
        (lambda: f".out.json.forge-{os.getpid()}-abc12345.tmp", 60, False),
        (lambda: f".out.json.{_dead_pid()}-abc12345.tmp", 3_600, False),
        (lambda: f"out.json.forge-{_dead_pid()}-abc12345.tmp", 3_600, False),
        (lambda: ".out.json.forge-12x-abc12345.tmp", 3_600, False),
    ],
    ids=[
        "writer-gone",
        "writer-gone-other-target",
        "older-than-stale-after",
        "writer-running",
        "this-process",
        "not-our-pattern",
        "not-hidden",
        "no-pid",
    ],
)
def test_write_removes_temporary_files_of_killed_writers_only(tmp_path, name, age, removed):
    leftover = tmp_path / name()
    leftover.write_bytes(b"x" * 1_000)
    past = time.time() - age
    os.utime(leftover, (past, past))

    write_text_atomic(tmp_path / "out.json", "[]")

    actual = sorted(p.name for p in tmp_path.iterdir())
    assert actual == sorted(["out.json"] + ([] if removed else [leftover.name]))


def test_write_after_a_kill_9_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out.json"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "import forge_app.files._transcripts as t\n"
            "os.replace = lambda *a: time.sleep(60)\n"
            "t.write_bytes_atomic(sys.argv[1], b'x' * 1_000_000)\n",
            str(target),
        ]
    )
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(".out.json.forge-*.tmp")) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p.name for p in tmp_path.iterdir()]
    writer.send_signal(signal.SIGKILL)
    writer.wait()

    write_text_atomic(target, "[]")

    actual = (len(left), sorted(p.name for p in tmp_path.iterdir()))
    assert actual == (1, ["out.json"])


def test_write_through_a_symlink_writes_where_it_points(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text_atomic(link, "new")
    actual = (link.is_symlink(), real.read_text(), sorted(p.name for p in tmp_path.iterdir()))
    assert actual == (True, "new", ["link.json", "real.json"])


def test_write_through_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "sub-target.json")
    write_text_atomic(link, "new")
    actual = (link.is_symlink(), (tmp_path / "sub-target.json").read_text())
    assert actual == (True, "new")


def test_write_through_a_symlink_loop_is_refused(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(OutputNotWritten) as raised:
        write_text_atomic(a, "new")
    assert ("symlink loop" in str(raised.value), a.is_symlink(), b.is_symlink()) == (
        True,
        True,
        True,
    )
