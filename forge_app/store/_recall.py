"""What the recall tools show the model: search hits and pages of original messages.

A page holds at most ``page_chars`` characters (a fraction of the model's window),
so expanding can never overflow the window by itself; a message longer than a page
continues on the next one. Texts are shown as they were, so an exact error message
comes back exactly, except secrets: what goes back into a context passes through the
summaries' one rule (``forge_app.summary.redact``); a person's ``history export`` and
``history expand`` keep the originals.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from forge_app.store._records import SearchHit, StoredMessage
from forge_app.summary import redact
from forge_domain import JsonValue

__all__: list[str] = []


def render_hits(query: str, hits: Sequence[SearchHit]) -> str:
    """One line per hit: its ref, position, role and snippet."""
    if not hits:
        return f"no archived message matches {query!r}"
    if hits[0].partial:
        lines = [
            f"no archived message holds every word of {query!r}; {len(hits)} hold some of "
            "them (partial matches, not the answer); recall_expand a ref to read them:"
        ]
    else:
        lines = [
            f"{len(hits)} archived message(s) match {query!r}; recall_expand a ref to read them:"
        ]
    lines.extend(
        f"- ref {hit.ref or '(in context)'} · message {hit.seq} ({hit.role}): {hit.snippet}"
        for hit in hits
    )
    return "\n".join(lines)


def _text(content: JsonValue) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(str(part["text"]))
            else:
                parts.append(json.dumps(part, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def message_block(message: StoredMessage) -> str:
    """A message as the model reads it: a header line, then its text and its calls, secrets
    redacted (:func:`forge_app.summary.redact`)."""
    body = message.openai()
    header = f"--- message {message.seq} · {message.role}"
    if isinstance(body.get("tool_call_id"), str):
        header += f" · answers call {body['tool_call_id']}"
    lines = [header + " ---", _text(body.get("content"))]
    for call in body.get("tool_calls") or []:  # type: ignore[union-attr]  # a JSON list
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            function = call["function"]
            assert isinstance(function, dict)
            lines.append(
                f"-> call {call.get('id')}: {function.get('name')}({function.get('arguments')})"
            )
    return redact("\n".join(line for line in lines if line))


CONTINUED = "\n[continues on the next page]\n"
"""Ends a page where a message is cut, to go on at the start of the next page."""
_MIN_PIECE = 80
"""The smallest piece of a long message worth starting at the end of a page."""


def paginate(blocks: Sequence[str], page_chars: int) -> list[str]:
    """Pack ``blocks`` into pages of at most ``page_chars`` characters, splitting long ones.

    Joined again with :data:`CONTINUED` removed, the pages give back every block, each
    followed by a newline.

    Raises:
        ValueError: ``page_chars`` leaves no room for a piece of a message.
    """
    if page_chars <= len(CONTINUED) + _MIN_PIECE:
        raise ValueError(f"a page of {page_chars} characters is too small")
    pages: list[str] = []
    current = ""
    for block in blocks:
        text = block + "\n"
        while text:
            room = page_chars - len(current)
            if len(text) <= room:
                current, text = current + text, ""
            elif current and (len(text) <= page_chars or room < len(CONTINUED) + _MIN_PIECE):
                pages.append(current)
                current = ""
            else:
                take = room - len(CONTINUED)
                pages.append(current + text[:take] + CONTINUED)
                current, text = "", text[take:]
    if current or not pages:
        pages.append(current)
    return pages


def render_page(ref: str, page: int, pages: Sequence[str], first: int, last: int) -> str:
    """Page ``page`` (1-based) of ``ref`` with a header and the call for the next page."""
    head = f"ref {ref} · page {page} of {len(pages)} · original messages {first}-{last}\n"
    tail = f"\n(more: recall_expand(ref={ref!r}, page={page + 1}))" if page < len(pages) else ""
    return head + pages[page - 1] + tail
