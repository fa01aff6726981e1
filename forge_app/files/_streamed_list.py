"""Reading a large JSON list of OpenAI messages one entry at a time.

:func:`~forge_app.files._transcripts.read_transcript` otherwise holds the file's bytes and
the whole decoded document at once: for the 48.5 MB, 100,000-message chat of the growth
benchmark that is the run's high-water mark (150 MB, plans/008-performance.md round 9).
Here the file is decoded a few megabytes at a time and each entry becomes its message as
it is read, so the bytes of the file are never all held and no decoded entry outlives its
message.

Only what the whole-document reader would read the same way is read here; for anything
else :func:`streamed_openai_list` gives None and the caller reads the file as before (from
the start: the result, or the error it reports, is that reader's). None for: a file that
is not a JSON list (an object, JSONL, a byte-order mark), bad JSON or UTF-8 anywhere, a
surrogate escape (the strict reader judges those), an entry that another format would
write (an Anthropic or Responses shape: the format is then not OpenAI), and an entry
holding a number or nesting that :func:`~forge_app.files._strict_json.is_plain` refuses.
"""

from __future__ import annotations

import json
import re
from typing import TextIO

from forge_app.files._strict_json import is_plain
from forge_domain import ContextMessage, JsonValue
from forge_domain.formats import detect_format
from forge_domain.formats._openai import plain_messages

__all__: list[str] = []  # internal: for the transcript reader

STREAM_MIN_BYTES = 8 * 1024 * 1024
"""Files at least this large are read entry by entry (smaller ones gain nothing worth a
second path: their bytes and document are a few megabytes)."""
CHUNK_CHARS = 1 << 22
"""Characters decoded per read (4 Mi: about 4 MB of a mostly ASCII file)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A surrogate escape, lone or in a pair: the strict reader decides those (a pair is read
the same by both readers, a lone one refused; telling them apart is its job)."""
_WHITESPACE = " \t\n\r"
"""JSON's whitespace, the only characters allowed between tokens."""
_SEPARATOR = re.compile(f"[{_WHITESPACE}]*([,\\]])[{_WHITESPACE}]*")
"""What may follow an entry: a comma before the next one, or the list's end."""
_BATCH = 1024
"""Entries decoded before their messages are built, together."""
_decode = json.JSONDecoder().raw_decode
_CUT_OFF = "Unterminated string"
"""How ``json`` says a string was cut off by the end of the text read so far (at the
string's start); any other error within :data:`_ESCAPE_CHARS` of that end may be one too."""
_ESCAPE_CHARS = 6
"""The most characters an escape (``\\uXXXX``) spans."""


class _NotStreamed(Exception):
    """The file is not one this reader reads (see the module): the caller reads it whole."""


class _Chunks:
    """The file's text, a few megabytes at a time, with a read position in it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.text = ""
        self.position = 0
        self.ended = False
        self._tail = ""  # the last 3 characters read, for an escape split between chunks

    def more(self) -> bool:
        """Append the next chunk to what is left unread; False at the end of the file."""
        if self.ended:
            return False
        chunk = self._stream.read(CHUNK_CHARS)
        if not chunk:
            self.ended = True
            return False
        if _SURROGATE_ESCAPE.search(self._tail + chunk[:3]) or _SURROGATE_ESCAPE.search(chunk):
            raise _NotStreamed
        self._tail = (self._tail + chunk)[-3:]
        self.text = self.text[self.position :] + chunk
        self.position = 0
        return True

    def skip_whitespace(self) -> str:
        """The next character after JSON whitespace ("" at the end of the file)."""
        while True:
            text, position = self.text, self.position
            while position < len(text) and text[position] in _WHITESPACE:
                position += 1
            self.position = position
            if position < len(text):
                return text[position]
            if not self.more():
                return ""


def streamed_openai_list(
    stream: TextIO,
) -> tuple[list[JsonValue], list[ContextMessage | None]] | None:
    """The entries of the JSON list in ``stream`` and the messages read of them, as
    :func:`~forge_domain.formats._openai.plain_messages` reads them with ``taking`` (an
    entry read is None in the first list, its message in the second; the others are
    kept for :func:`~forge_domain.formats._openai.messages_from_openai`); None when the
    file is not one this reader reads (see the module).

    Raises:
        OSError: reading the file failed.
    """
    chunks = _Chunks(stream)
    entries: list[JsonValue] = []
    messages: list[ContextMessage | None] = []
    try:
        if chunks.skip_whitespace() != "[":
            return None
        chunks.position += 1
        if chunks.skip_whitespace() == "]":
            chunks.position += 1
        else:
            going_on = True
            while going_on:
                batch: list[JsonValue] = []
                going_on = _read_entries(chunks, batch)
                if not _taken(batch, entries, messages):
                    return None
        if chunks.skip_whitespace() != "":
            return None  # what follows the list: the whole-file reader says what is wrong
    except (_NotStreamed, UnicodeDecodeError):
        return None
    return entries, messages


def _read_entries(chunks: _Chunks, batch: list[JsonValue]) -> bool:
    """Decode up to :data:`_BATCH` entries from the read position into ``batch``, each with
    the comma after it; True when the list goes on after them, False when its end was read
    past. Reads more of the file when an entry, or what follows it, may be cut off."""
    text, position = chunks.text, chunks.position
    while len(batch) < _BATCH:
        try:
            value, end = _decode(text, position)
        except json.JSONDecodeError as exc:
            cut_off = exc.pos >= len(text) - _ESCAPE_CHARS or exc.msg.startswith(_CUT_OFF)
            if not cut_off or not _more(chunks, position):
                raise _NotStreamed from None
            text, position = chunks.text, chunks.position  # the value goes on: decode again
            continue
        separator = _SEPARATOR.match(text, end)
        if (separator is None or separator.end() == len(text)) and _more(chunks, position):
            text, position = chunks.text, chunks.position  # a number, or what follows, may
            continue  # go on: decode it again, whole
        if separator is None:
            raise _NotStreamed
        batch.append(value)
        position = separator.end()
        if separator.group(1) == "]":
            chunks.position = position
            return False
    chunks.position = position
    return True


def _more(chunks: _Chunks, position: int) -> bool:
    """:meth:`_Chunks.more` from ``position``."""
    chunks.position = position
    return chunks.more()


def _taken(
    batch: list[JsonValue], entries: list[JsonValue], messages: list[ContextMessage | None]
) -> bool:
    """Add ``batch``'s entries and their messages (see :func:`streamed_openai_list`); False
    when one of them is not an OpenAI entry the whole-file reader would read the same."""
    read = plain_messages(batch, taking=True)
    for entry, message in zip(batch, read, strict=True):
        if message is None and (detect_format([entry]) != "openai" or not is_plain([entry])):
            return False
    entries.extend(batch)
    messages.extend(read)
    return True
