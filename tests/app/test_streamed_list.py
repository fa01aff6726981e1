"""The entry-by-entry reader of large JSON lists: it reads what the whole-file reader reads,
or leaves the file to it.

Each file is read twice by ``read_transcript``: once with every file taken as large (the
streamed reader tries it first, a few characters at a time so that every entry, string and
escape is cut by a chunk's end somewhere), once with none (the whole-file reader alone).
Both must give the same transcript, or the same error.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_app.errors import ForgeAppError
from forge_app.files import _streamed_list, _transcripts
from forge_app.files._streamed_list import streamed_openai_list
from forge_app.files._strict_json import MAX_DEPTH
from forge_app.files._transcripts import read_transcript
from tests.sessions import session_paths

_SESSIONS = session_paths()

_CALL = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"c": 1}'}}
_PLAIN = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": 'fix it, please: {"a": [1, 2]}, done'},
    {"role": "assistant", "content": None, "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "ok ✓ é 😀"},
    {"role": "assistant", "content": 'done \\ " , ] }'},
]


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> object:
    """The transcript read, or the error's type and text."""
    monkeypatch.setattr(_transcripts, "STREAM_MIN_BYTES", 0 if streamed else 10**15)
    try:
        return read_transcript(path)
    except ForgeAppError as exc:
        return type(exc), str(exc)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int = 5) -> tuple[object, object]:
    monkeypatch.setattr(_streamed_list, "CHUNK_CHARS", chunk)
    return _read(path, monkeypatch, True), _read(path, monkeypatch, False)


def _taken(text: str, chunk: int = 5) -> bool:
    """Whether the streamed reader reads ``text`` (rather than leaving it)."""
    original = _streamed_list.CHUNK_CHARS
    _streamed_list.CHUNK_CHARS = chunk
    try:
        return streamed_openai_list(io.StringIO(text)) is not None
    finally:
        _streamed_list.CHUNK_CHARS = original


_TAKEN = [
    ("indented", json.dumps(_PLAIN, indent=2, ensure_ascii=False)),
    ("compact", json.dumps(_PLAIN, separators=(",", ":"), ensure_ascii=False)),
    ("ascii escapes but no surrogate", json.dumps(_PLAIN[:3], indent=1)),
    ("empty list", " [ ] \n"),
    (
        "whitespace everywhere",
        "\r\n\t[\n" + " ,\n ".join(json.dumps(m, ensure_ascii=False) for m in _PLAIN) + "\t]\n",
    ),
    (
        "a message the plain reader leaves",
        json.dumps([{"role": "user", "content": "a", "name": "n"}]),
    ),
    ("text parts", json.dumps([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])),
    ("bad message", json.dumps([{"role": "user", "content": 3}])),
    ("unpaired call", json.dumps(_PLAIN[2:3])),
]
_LEFT = [
    ("object layout", json.dumps({"messages": _PLAIN})),
    ("byte-order mark", "\ufeff" + json.dumps(_PLAIN)),
    ("lone surrogate", '[{"role": "user", "content": "\\ud800"}]'),
    ("surrogate pair", '[{"role": "user", "content": "\\ud83d\\ude00"}]'),
    ("nan", '[{"role": "user", "content": "a", "usage": {"prompt_tokens": NaN}}]'),
    ("huge number", '[{"role": "user", "content": "a", "usage": {"x": 1' + "0" * 19 + "}}]"),
    (
        "too deep",
        json.dumps([{"role": "user", "content": "a", "x": [[[]]]}]).replace(
            "[[[]]]", "[" * MAX_DEPTH + "]" * MAX_DEPTH
        ),
    ),
    (
        "anthropic blocks",
        json.dumps(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
                },
            ]
        ),
    ),
    (
        "responses items",
        json.dumps([{"type": "function_call", "call_id": "c", "name": "x", "arguments": "{}"}]),
    ),
    ("trailing comma", '[{"role": "user", "content": "a"},]'),
    ("missing comma", '[{"role": "user", "content": "a"} {"role": "user", "content": "b"}]'),
    ("extra data", '[{"role": "user", "content": "a"}] []'),
    ("unterminated", '[{"role": "user", "content": "a"'),
    ("unterminated string", '[{"role": "user", "content": "a, b, c'),
    ("no closing bracket", '[{"role": "user", "content": "a"}'),
    ("bad escape", '[{"role": "user", "content": "a\\q"}]'),
    ("not a list", '"just text"'),
    ("empty file", ""),
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 22])
@pytest.mark.parametrize(("name", "text"), _TAKEN + _LEFT, ids=[n for n, _ in _TAKEN + _LEFT])
def test_streamed_read_is_the_whole_file_read(tmp_path, monkeypatch, name, text, chunk):
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")

    streamed, whole = _both(path, monkeypatch, chunk)

    assert streamed == whole


@pytest.mark.parametrize(("name", "text"), _TAKEN, ids=[n for n, _ in _TAKEN])
def test_streamed_reader_reads_plain_openai_lists(name, text):
    assert _taken(text)


@pytest.mark.parametrize(("name", "text"), _LEFT, ids=[n for n, _ in _LEFT])
def test_streamed_reader_leaves_what_the_whole_file_reader_must_judge(name, text):
    assert not _taken(text)


def test_streamed_read_of_bytes_that_are_not_utf8_is_the_whole_file_read(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')

    streamed, whole = _both(path, monkeypatch)

    assert streamed == whole
    assert isinstance(whole, tuple)  # an error: the bytes are not UTF-8


def test_small_files_are_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_PLAIN), encoding="utf-8")
    monkeypatch.setattr(_transcripts, "streamed_openai_list", _refuse)

    assert len(read_transcript(path).context) == len(_PLAIN)  # below STREAM_MIN_BYTES


def _refuse(stream: object) -> None:
    raise AssertionError("the streamed reader was tried on a small file")


@pytest.mark.parametrize("path", _SESSIONS, ids=[p.stem for p in _SESSIONS])
def test_streamed_read_of_real_sessions_is_the_whole_file_read(path, monkeypatch):
    streamed, whole = _both(path, monkeypatch, chunk=4096)

    assert streamed == whole


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_MESSAGE = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, _TEXT),
    st.builds(lambda t: {"role": "assistant", "content": t}, _TEXT),
    st.builds(lambda t: {"role": "system", "content": t}, _TEXT),
    st.builds(lambda t: {"role": "user", "content": t, "name": "n"}, _TEXT),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    messages=st.lists(_MESSAGE, max_size=6),
    indent=st.sampled_from([None, 0, 2]),
    ascii_only=st.booleans(),
    chunk=st.integers(min_value=1, max_value=40),
)
def test_streamed_read_of_any_message_list_is_the_whole_file_read(
    tmp_path, monkeypatch, messages, indent, ascii_only, chunk
):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(messages, indent=indent, ensure_ascii=ascii_only), encoding="utf-8")

    streamed, whole = _both(path, monkeypatch, chunk)

    assert streamed == whole
