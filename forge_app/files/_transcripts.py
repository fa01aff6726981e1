"""Reading and writing transcript files: a JSON list, an object with ``messages``, or JSONL.

Every reading error names the file and, for bad JSON, the line and column; a bad
message names its index. Writes are atomic: the text goes to a temporary file in
the destination's directory, which then replaces the destination in one step, so a
failed run never leaves a truncated output behind.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from forge_app.errors import MalformedJson, NotATranscript, OutputNotWritten, TranscriptNotFound
from forge_domain import Context, InvalidMessage, InvalidTranscript, JsonObject, JsonValue

__all__ = [
    "Transcript",
    "layout_for",
    "parse_transcript",
    "read_transcript",
    "write_bytes_atomic",
    "write_text_atomic",
    "write_transcript",
]

Layout = Literal["list", "object", "jsonl"]
"""How the messages sit in the file."""

STDIO = "-"
"""The path that means standard input (reading) or standard output (writing)."""


@dataclass(frozen=True, slots=True)
class Transcript:
    """A conversation read from a file, with enough of the file's shape to write it back."""

    context: Context
    """The messages."""
    layout: Layout = "list"
    """The container the messages were read from."""
    envelope: JsonObject = field(default_factory=dict)
    """The other keys of an object layout (``{"messages": ..., "model": ...}``), kept verbatim."""

    def with_context(self, context: Context) -> Transcript:
        """Return the same file shape holding other messages."""
        return Transcript(context, self.layout, self.envelope)

    def dumps(self, layout: Layout | None = None) -> str:
        """Serialise in ``layout`` (default: the layout it was read in)."""
        messages: list[JsonValue] = list(self.context.to_openai())
        match layout or self.layout:
            case "jsonl":
                return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
            case "object":
                document: JsonValue = {**self.envelope, "messages": messages}
            case "list":
                document = messages
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def _type_name(value: object) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return "null" if value is None else names.get(type(value), f"a {type(value).__name__}")


def _decode_lines(path: Path | str, text: str) -> list[JsonValue]:
    documents: list[JsonValue] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            documents.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise MalformedJson(path, number, exc.colno, exc.msg) from exc
    return documents


def _messages_of(path: Path | str, document: JsonValue) -> tuple[JsonValue, JsonObject]:
    if isinstance(document, list):
        return document, {}
    if not isinstance(document, dict):
        raise NotATranscript(
            path,
            f"expected a list of messages or an object with 'messages', got {_type_name(document)}",
        )
    if "messages" not in document:
        keys = ", ".join(sorted(document)[:6]) or "none"
        raise NotATranscript(
            path, f"expected a list of messages or an object with 'messages' (keys: {keys})"
        )
    messages = document["messages"]
    if not isinstance(messages, list):
        raise NotATranscript(path, f"'messages' must be a list, got {_type_name(messages)}")
    return messages, {k: v for k, v in document.items() if k != "messages"}


def parse_transcript(text: str, path: Path | str = "<string>") -> Transcript:
    """Read a transcript from ``text``; ``path`` only names the source in errors.

    Raises:
        MalformedJson: the text is not JSON (line and column of the problem).
        NotATranscript: the JSON is not a message list, or a message is malformed.
    """
    if not text.strip() and not str(path).endswith(".jsonl"):
        raise NotATranscript(path, "the file is empty; expected a JSON list of messages")
    layout: Layout = "jsonl"
    envelope: JsonObject = {}
    if str(path).endswith(".jsonl"):
        raw: JsonValue = _decode_lines(path, text)
    else:
        try:
            document: JsonValue = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data" or not text.lstrip().startswith("{"):
                raise MalformedJson(path, exc.lineno, exc.colno, exc.msg) from exc
            raw = _decode_lines(path, text)
        else:
            raw, envelope = _messages_of(path, document)
            layout = "list" if isinstance(document, list) else "object"
    try:
        context = Context.from_openai(raw)
    except InvalidMessage as exc:
        raise NotATranscript(path, str(exc), exc.index) from exc
    except InvalidTranscript as exc:
        raise NotATranscript(path, "; ".join(exc.violations)) from exc
    return Transcript(context, layout, envelope)


def read_transcript(path: Path | str) -> Transcript:
    """Read a transcript file (``-`` reads standard input).

    Raises:
        TranscriptNotFound: the file is missing, a directory, or unreadable.
        MalformedJson: the file is not JSON (line and column of the problem).
        NotATranscript: the JSON is not a message list, or a message is malformed.
    """
    if str(path) == STDIO:
        return parse_transcript(sys.stdin.read(), "<stdin>")
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TranscriptNotFound(path, "no such file") from exc
    except IsADirectoryError as exc:
        raise TranscriptNotFound(path, "is a directory, not a transcript file") from exc
    except PermissionError as exc:
        raise TranscriptNotFound(path, "permission denied") from exc
    except UnicodeDecodeError as exc:
        raise MalformedJson(path, 1, exc.start + 1, "not UTF-8 text") from exc
    return parse_transcript(text, path)


def layout_for(path: Path | str, transcript: Transcript) -> Layout:
    """The layout to write ``transcript`` to ``path`` in: JSONL for ``.jsonl``, else as read."""
    if str(path).endswith(".jsonl"):
        return "jsonl"
    return "list" if transcript.layout == "jsonl" else transcript.layout


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, like :func:`write_bytes_atomic`."""
    if str(path) == STDIO:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (``-``: stdout).

    The temporary file sits in the target's directory, is flushed to disk, then
    replaces the target in one step; it is removed if anything fails. An existing
    device or FIFO (``/dev/null``) is written in place, never replaced.

    Raises:
        OutputNotWritten: the directory is missing or not writable; nothing is left behind.
    """
    if str(path) == STDIO:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    if _is_special(target):
        _write_in_place(target, data)
        return
    directory = target.parent
    try:
        handle, temporary = tempfile.mkstemp(
            dir=directory, prefix=f".{target.name}.", suffix=".tmp"
        )
    except FileNotFoundError as exc:
        raise OutputNotWritten(path, f"directory {directory} does not exist") from exc
    except OSError as exc:
        raise OutputNotWritten(path, exc.strerror or str(exc)) from exc
    try:
        os.chmod(temporary, _mode_for(target))
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        raise OutputNotWritten(path, exc.strerror or str(exc)) from exc
    finally:
        Path(temporary).unlink(missing_ok=True)


def _is_special(target: Path) -> bool:
    """True for an existing device, FIFO or socket (``/dev/null``, ``/dev/stdout`` …)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _write_in_place(target: Path, data: bytes) -> None:
    """Write to a special file directly: renaming over a device would replace the device."""
    try:
        with target.open("wb") as stream:
            stream.write(data)
    except OSError as exc:
        raise OutputNotWritten(target, exc.strerror or str(exc)) from exc


def _mode_for(target: Path) -> int:
    """The permission bits a new file gets (or the existing file's, when replacing it)."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_transcript(path: Path | str, transcript: Transcript) -> None:
    """Write ``transcript`` atomically (layout from :func:`layout_for`; ``-``: stdout)."""
    write_text_atomic(path, transcript.dumps(layout_for(path, transcript)))
