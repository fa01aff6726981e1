"""Reading and writing transcript files: a JSON list, an object with ``messages``, or JSONL.

Every reading error names the file and, for bad JSON, the line and column; a bad
message names its index. Only what can be written back is read: ``NaN``, numbers out
of range, lone surrogates and nesting deeper than ``MAX_DEPTH`` are refused as bad
JSON (``_strict_json``), and only regular files (or ``-``, standard input) are read, so
a FIFO or a device never blocks a run. JSONL lines end at ``\\n`` only: U+2028 and its
kin are ordinary characters inside a line.

Writes are atomic (``_atomic``): a failed run never leaves a truncated output behind.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal, cast

from forge_app.errors import MalformedJson, NotATranscript, OutputNotWritten, TranscriptNotFound
from forge_app.files._atomic import STDIO as STDIO  # the CLI reads it from here
from forge_app.files._atomic import write_bytes_atomic, write_text_atomic
from forge_app.files._containers import (
    CONTAINERS,
    FORMAT_OF,
    Container,
    ContainerEventsNotWritable,
    ContainerLog,
    detect_container,
    read_container,
)
from forge_app.files._file_format import FileFormat as FileFormat
from forge_app.files._streamed_list import STREAM_MIN_BYTES, streamed_openai_list
from forge_app.files._strict_json import is_plain, is_plain_but, loads, loads_unwalked
from forge_domain import (
    Context,
    ContextMessage,
    InvalidMessage,
    InvalidTranscript,
    JsonObject,
    JsonValue,
)
from forge_domain.formats import (
    Format,
    detect_format,
    messages_from_format,
    messages_key,
    messages_to_format,
)
from forge_domain.formats._openai import messages_from_openai, plain_messages, shown

__all__ = [  # the atomic writes too: the CLI imports them from this module
    "FileFormat",
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


@dataclass(frozen=True, slots=True)
class Transcript:
    """A conversation read from a file, with enough of the file's shape to write it back."""

    context: Context
    """The messages."""
    layout: Layout = "list"
    """The container the messages were read from."""
    envelope: JsonObject = field(default_factory=dict)
    """The other keys of an object layout (``{"messages": ..., "model": ...}``), kept verbatim
    (Anthropic's ``system`` is read into the messages and written back from them)."""
    format: Format = "openai"
    """The format the messages were read in, and are written back in."""
    container: ContainerLog | None = None
    """The agent log (Claude Code, Codex) the messages were read from, written back around
    them in the ``jsonl`` layout (:mod:`._containers`)."""

    def with_context(self, context: Context) -> Transcript:
        """Return the same file shape holding other messages."""
        return Transcript(context, self.layout, self.envelope, self.format, self.container)

    def dumps(self, layout: Layout | None = None) -> str:
        """Serialise in ``layout`` (default: the layout it was read in) and the format read.

        Usage a compaction left stale is not written (:meth:`Context.without_stale_usage`).
        An Anthropic system prompt needs the object layout: a list is written as
        ``{"system": ..., "messages": [...]}``; JSONL cannot hold it (``ValueError``).
        """
        system, entries = messages_to_format(self.format, self.context.without_stale_usage())
        messages: list[JsonValue] = list(entries)
        chosen = layout or self.layout
        if self.container is not None:
            if chosen == "jsonl" and system is None:
                return self.container.dumps(messages)
            self.container.plain_check()  # a plain file cannot hold the other events
            chosen = "list" if chosen == "jsonl" and system is None else chosen
        if system is not None and chosen == "list":
            chosen = "object"
        match chosen:
            case "jsonl":
                if system is not None:
                    raise ValueError("an Anthropic system prompt cannot be written as JSONL")
                return "".join(
                    json.dumps(m, ensure_ascii=False, allow_nan=False) + "\n" for m in messages
                )
            case "object":
                head: JsonObject = {} if system is None else {"system": system}
                key = messages_key(self.format)
                document: JsonValue = {**self.envelope, **head, key: messages}
            case "list":
                document = messages
        return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


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
    # Lines end at "\n" (a "\r" before it is JSON whitespace): str.splitlines would also
    # split at U+2028, U+0085 … which json.dumps leaves raw inside strings.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip(" \t\r"):
            continue
        try:
            documents.append(loads(line))
        except json.JSONDecodeError as exc:
            raise MalformedJson(path, number, exc.colno, exc.msg) from exc
    return documents


def _messages_of(
    path: Path | str, document: JsonValue, key: str = "messages"
) -> tuple[JsonValue, JsonObject]:
    if isinstance(document, list):
        return document, {}
    if not isinstance(document, dict):
        raise NotATranscript(
            path,
            f"expected a list of messages or an object with '{key}', got {_type_name(document)}",
        )
    if key not in document:
        names = sorted(document)[:6]
        keys = ", ".join(k if k.isprintable() and len(k) <= 30 else shown(k, 30) for k in names)
        keys = keys or "none"
        raise NotATranscript(
            path, f"expected a list of messages or an object with '{key}' (keys: {keys})"
        )
    messages = document[key]
    if not isinstance(messages, list):
        raise NotATranscript(path, f"'{key}' must be a list, got {_type_name(messages)}")
    return messages, {k: v for k, v in document.items() if k != key}


def parse_transcript(
    text: str | bytes, path: Path | str = "<string>", fmt: FileFormat | None = None
) -> Transcript:
    """Read a transcript from ``text`` (or its UTF-8 bytes); ``path`` only names the source
    in errors. ``fmt`` is the format (default: detected, :func:`detect_format`); JSONL
    that is a Claude Code or Codex log (``fmt`` ``claude-code`` / ``codex``, or detected)
    is read as the transcript it wraps (:mod:`._containers`).

    Raises:
        MalformedJson: the text is not JSON, or JSON this tool could not write back
            (``NaN``, a number out of range, a lone surrogate, nesting deeper than
            ``MAX_DEPTH``), with the line and column of the problem.
        NotATranscript: the JSON is not a message list, or a message is malformed.
    """
    if not _lines_only(path, fmt):
        document = loads_unwalked(text)
        if document is not None:  # the common case, read in one pass
            read = _fast_transcript(path, document, _format_of(fmt))
            if read is not None:
                return read
    return _precise_transcript(text, path, fmt)


def _lines_only(path: Path | str, fmt: FileFormat | None) -> bool:
    """Whether the file is read as JSONL only: its name ends in ``.jsonl``, or ``fmt`` is
    an agent log's."""
    return str(path).endswith(".jsonl") or fmt in CONTAINERS


def _format_of(fmt: FileFormat | None) -> Format | None:
    """The message format ``fmt`` names (None: an agent log's, or detected)."""
    return None if fmt in CONTAINERS else cast(Format | None, fmt)


def _precise_transcript(text: str | bytes, path: Path | str, fmt: FileFormat | None) -> Transcript:
    """:func:`parse_transcript` by the strict reader, which says what is wrong and where."""
    container = fmt if fmt in CONTAINERS else None
    plain = _format_of(fmt)
    lines_only = _lines_only(path, fmt)
    if isinstance(text, bytes):
        text = _decoded(path, text)
    if not text.strip() and not lines_only:
        raise NotATranscript(path, "the file is empty; expected a JSON list of messages")
    layout: Layout = "jsonl"
    envelope: JsonObject = {}
    chosen = plain
    if lines_only:
        raw: JsonValue = _decode_lines(path, text)
    else:
        try:
            document: JsonValue = loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data" or not text.lstrip().startswith("{"):
                raise MalformedJson(path, exc.lineno, exc.colno, exc.msg) from exc
            raw = _decode_lines(path, text)
        else:
            chosen = plain or detect_format(document)
            raw, envelope = _messages_of(path, document, messages_key(chosen))
            layout = "list" if isinstance(document, list) else "object"
    if layout == "jsonl" and isinstance(raw, list) and plain is None:
        kind = container or detect_container(raw)
        if kind is not None:
            return _container_transcript(path, kind, text, raw)
    return _transcript(path, raw, envelope, layout, chosen or detect_format(raw))


def _fast_transcript(
    path: Path | str, document: JsonValue, fmt: Format | None
) -> Transcript | None:
    """The transcript in ``document`` as ``from_json`` read it, or None when it holds what
    the strict reader must read or refuse (``_strict_json.is_plain``).

    OpenAI messages of the plain shape are read first, and the walk that checks numbers
    and depth skips them: they hold only strings (plans/008-performance.md).
    """
    found = fmt or detect_format(document)
    key = messages_key(found)
    entries = document.get(key) if isinstance(document, dict) else document
    plain: list[ContextMessage | None] | None = None
    if found == "openai" and isinstance(entries, list):
        plain = plain_messages(entries, taking=True)  # the document is this reader's own
        if not is_plain_but(document, entries, plain):
            return None
    elif not is_plain(document):
        return None
    shape: Layout = "list" if isinstance(document, list) else "object"
    return _transcript(path, *_messages_of(path, document, key), shape, found, plain)


def _container_transcript(
    path: Path | str, kind: Container, text: str, records: list[JsonValue]
) -> Transcript:
    log, entries = read_container(kind, text, records)
    if not entries:
        raise NotATranscript(path, f"the {kind} log holds no turns")
    try:
        context = Context(messages_from_format(FORMAT_OF[kind], entries))
    except InvalidMessage as exc:
        where = f"line {log.line_of(exc.index)}: " if exc.index < len(log.turn_lines) else ""
        raise NotATranscript(path, f"{where}{exc} ({kind} log)", exc.index) from exc
    except InvalidTranscript as exc:
        raise NotATranscript(path, "; ".join(exc.violations)) from exc
    return Transcript(context, "jsonl", {}, FORMAT_OF[kind], log)


def _transcript(
    path: Path | str,
    raw: JsonValue,
    envelope: JsonObject,
    layout: Layout,
    fmt: Format,
    plain: list[ContextMessage | None] | None = None,
) -> Transcript:
    """``plain``: OpenAI messages of the plain shape read already (``plain_messages``)."""
    system = envelope.get("system") if fmt == "anthropic" else None
    if system is not None:
        envelope = {k: v for k, v in envelope.items() if k != "system"}
    try:
        if plain is not None:
            context = Context(messages_from_openai(raw, plain))
        else:
            context = Context(messages_from_format(fmt, raw, system=system))
    except InvalidMessage as exc:
        named = "" if fmt == "openai" else f" ({fmt} format)"
        raise NotATranscript(path, f"{exc}{named}", exc.index) from exc
    except InvalidTranscript as exc:
        raise NotATranscript(path, "; ".join(exc.violations)) from exc
    return Transcript(context, layout, envelope, fmt)


def read_transcript(path: Path | str, fmt: FileFormat | None = None) -> Transcript:
    """Read a transcript file (``-`` reads standard input) in ``fmt`` (default: detected).

    The file's bytes are let go once decoded, before the messages are built, so the read
    never holds the bytes, the decoded document and the messages at once; a document the
    strict reader must read (a number out of range, nesting too deep) is read from the file
    again for it (plans/008-performance.md, round 7a). A large JSON list of OpenAI messages
    is read entry by entry instead, never all its bytes or entries at once
    (:mod:`._streamed_list`, round 9).

    Raises:
        TranscriptNotFound: the file is missing, unreadable, a symlink loop, or not a
            regular file (a directory, FIFO, device or socket).
        MalformedJson: the file is not UTF-8 JSON (line and column of the problem).
        NotATranscript: the JSON is not a message list, or a message is malformed.
    """
    if str(path) == STDIO:
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # replaced by a text stream (tests, embedding applications)
            return parse_transcript(sys.stdin.read(), "<stdin>", fmt)
        return parse_transcript(stdin.read(), "<stdin>", fmt)
    lines_only = _lines_only(path, fmt)
    with _open_regular_file(path) as stream:
        if not lines_only and fmt in (None, "openai"):
            streamed = _streamed_transcript(path, stream)
            if streamed is not None:
                return streamed
        data = _read_all(path, stream)
    if not lines_only:
        document = loads_unwalked(data)
        if document is not None:
            del data  # the models are built from the document: the bytes go first
            read = _fast_transcript(path, document, _format_of(fmt))
            if read is not None:
                return read
            del document
            data = _read_regular_file(path)  # for the strict reader, which says what is wrong
    return _precise_transcript(data, path, fmt)


_OPEN_PROBLEMS = {
    errno.ENOENT: "no such file",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
}
_FILE_KINDS = (
    (stat.S_ISDIR, "is a directory, not a transcript file"),
    (stat.S_ISFIFO, "is a FIFO, not a regular file; pipe it to standard input with '-'"),
    (stat.S_ISCHR, "is a character device, not a regular file"),
    (stat.S_ISBLK, "is a block device, not a regular file"),
    (stat.S_ISSOCK, "is a socket, not a regular file"),
)


def _streamed_transcript(path: Path | str, stream: BinaryIO) -> Transcript | None:
    """The transcript of a large JSON list of OpenAI messages in ``stream`` (``path``
    opened), read entry by entry (:mod:`._streamed_list`); None for a smaller file or one
    that reader leaves to the whole-file reader, with ``stream`` back at its start."""
    if os.fstat(stream.fileno()).st_size < STREAM_MIN_BYTES:
        return None
    text = io.TextIOWrapper(stream, encoding="utf-8", errors="strict", newline="")
    try:
        read = streamed_openai_list(text)
    except OSError as exc:
        raise TranscriptNotFound(path, exc.strerror or str(exc)) from exc
    finally:
        text.detach()
    if read is None:
        stream.seek(0)
        return None
    entries, messages = read
    return _transcript(path, entries, {}, "list", "openai", messages)


def _read_regular_file(path: Path | str) -> bytes:
    """The bytes of ``path``, which must be a regular file (see :func:`_open_regular_file`)."""
    with _open_regular_file(path) as stream:
        return _read_all(path, stream)


def _read_all(path: Path | str, stream: BinaryIO) -> bytes:
    """What is left of ``stream`` (``path`` opened)."""
    try:
        return stream.read()
    except OSError as exc:
        raise TranscriptNotFound(path, exc.strerror or str(exc)) from exc


def _open_regular_file(path: Path | str) -> BinaryIO:
    """``path`` opened for reading; it must be a regular file.

    Opened without blocking and checked with ``fstat`` on the open descriptor, so a
    FIFO with no writer is refused at once and nothing can be swapped in between.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        problem = _kind_problem(path) or _OPEN_PROBLEMS.get(
            exc.errno or 0, exc.strerror or str(exc)
        )
        raise TranscriptNotFound(path, problem) from exc
    problem = _kind_problem(descriptor)
    if problem:
        os.close(descriptor)
        raise TranscriptNotFound(path, problem)
    return os.fdopen(descriptor, "rb")


def _kind_problem(file: Path | str | int) -> str:
    """Why ``file`` (a path or an open descriptor) is not a transcript file; "" if it may be."""
    try:
        mode = os.stat(file).st_mode
    except OSError:
        return ""  # opening it says what is wrong
    if stat.S_ISREG(mode):
        return ""
    return next((p for is_kind, p in _FILE_KINDS if is_kind(mode)), "is not a regular file")


def _decoded(path: Path | str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise MalformedJson(path, line, column, "not UTF-8 text") from exc


def layout_for(path: Path | str, transcript: Transcript) -> Layout:
    """The layout to write ``transcript`` to ``path`` in: JSONL for ``.jsonl``, else as read."""
    if str(path).endswith(".jsonl") or (transcript.container is not None and str(path) == STDIO):
        return "jsonl"
    return "list" if transcript.layout == "jsonl" else transcript.layout


def write_transcript(path: Path | str, transcript: Transcript) -> None:
    """Write ``transcript`` atomically (layout from :func:`layout_for`; ``-``: stdout).

    Raises:
        OutputNotWritten: the file cannot be written, or the messages hold what JSON
            cannot carry (``NaN``, a lone surrogate …, only possible in a context built
            in code: files are checked when read); nothing is written.
    """
    try:
        text = transcript.dumps(layout_for(path, transcript))
    except ContainerEventsNotWritable as exc:
        raise OutputNotWritten(path, str(exc)) from exc
    except (ValueError, RecursionError) as exc:
        raise OutputNotWritten(path, f"not writable as JSON: {exc}") from exc
    write_text_atomic(path, text)
