"""The three transcript formats: telling them apart, reading, writing and their rules.

Every format reads into the one internal model (:class:`Context` of
:data:`ContextMessage`), so the compactor, engines, validator and triggers work on
all of them unchanged, and an output is written back in the format it came in.

========== ============================================ ==============================
format     a file holds                                 rules checked
========== ============================================ ==============================
openai     chat-completions ``messages``                OpenAI's (``validation``)
anthropic  Messages ``messages`` (+ ``system``)         Anthropic's: the call/result
                                                        and system rules, a user turn
                                                        first
responses  Responses ``input`` items                    the call/result and system
                                                        rules (each call answered by
                                                        the outputs right after it)
========== ============================================ ==============================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

from forge_domain._json import JsonObject, JsonValue
from forge_domain._messages import ContextMessage
from forge_domain.formats._openai import message_to_openai, messages_from_openai
from forge_domain.formats._validation import Violation, find_violations

if TYPE_CHECKING:  # only annotations: the core imports this package (Context.from_openai)
    from forge_domain._context import Context

__all__ = [
    "FORMATS",
    "Format",
    "detect_format",
    "find_format_violations",
    "messages_from_format",
    "messages_key",
    "messages_to_format",
]

Format: TypeAlias = Literal["openai", "anthropic", "responses"]
"""A transcript format."""
FORMATS: Final[tuple[Format, ...]] = get_args(Format)
"""Every format, in the order of the table above."""

_RESPONSES_ITEMS: Final = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "compaction",
        "item_reference",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "mcp_call",
        "image_generation_call",
        "code_interpreter_call",
    }
)
_RESPONSES_PARTS: Final = frozenset({"input_text", "output_text", "input_image", "input_file"})
_ANTHROPIC_BLOCKS: Final = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "server_tool_use",
        "web_search_tool_result",
        "search_result",
    }
)
_OPENAI_PARTS: Final = frozenset({"image_url", "input_audio", "file"})
_OPENAI_KEYS: Final = frozenset({"tool_calls", "tool_call_id", "reasoning_content"})


def _part_format(part: object) -> Format | None:
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in part):
        return "anthropic"
    if kind in _RESPONSES_PARTS:
        return "responses"
    if kind in _OPENAI_PARTS:
        return "openai"
    return None


def _item_format(item: object) -> Format | None:
    """The format one list entry shows, or None when it would read alike in several.

    A ``"type": "message"`` is a Responses item, or a message object as Anthropic's API
    returns it (Claude Code logs keep those): its ``text`` blocks tell them apart.
    """
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if isinstance(kind, str) and kind in _RESPONSES_ITEMS and kind != "message":
        return "responses"
    if item.get("role") == "tool" or any(key in item for key in _OPENAI_KEYS):
        return "openai"
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    for part in parts:
        found = _part_format(part)
        if found is not None:
            return found
    if kind == "message":
        plain = any(isinstance(p, dict) and p.get("type") == "text" for p in parts)
        return "anthropic" if plain else "responses"
    return None


def detect_format(document: JsonValue) -> Format:
    """The format of a parsed transcript file: a list of entries, or an object around one.

    An object with ``input`` (and no ``messages``) is a Responses request; one with
    ``system`` beside ``messages`` is Anthropic's (OpenAI keeps the system prompt in
    the list). Otherwise the first entry that only one format would write decides
    (an Anthropic ``tool_use`` block, a Responses ``function_call`` item, an OpenAI
    ``tool`` role …); plain text turns read the same in every format, as ``openai``.
    """
    entries: JsonValue = document
    if isinstance(document, dict):
        if "input" in document and "messages" not in document:
            return "responses"
        if "system" in document and "messages" in document:
            return "anthropic"
        entries = document.get("messages")
    if isinstance(entries, list):
        for entry in entries:
            found = _item_format(entry)
            if found is not None:
                return found
    return "openai"


def messages_key(fmt: Format) -> str:
    """The key of a request object that holds the entries (``messages`` or ``input``)."""
    return "input" if fmt == "responses" else "messages"


def messages_from_format(
    fmt: Format, entries: object, *, system: JsonValue = None
) -> list[ContextMessage]:
    """Read ``entries`` of ``fmt`` (``system``: Anthropic's top-level system prompt).

    Raises:
        InvalidMessage: naming the index and field of the first malformed entry.
        InvalidTranscript: when ``entries`` is not a list.
    """
    match fmt:
        case "openai":
            return messages_from_openai(entries)
        case "anthropic":  # the other formats' readers load when a file needs them
            from forge_domain.formats._anthropic import messages_from_anthropic

            return messages_from_anthropic(entries, system=system)
        case "responses":
            from forge_domain.formats._responses import messages_from_responses

            return messages_from_responses(entries)


def messages_to_format(
    fmt: Format, messages: Iterable[ContextMessage]
) -> tuple[JsonValue, list[JsonObject]]:
    """Write ``messages`` in ``fmt``: Anthropic's ``system`` (None otherwise) and the entries."""
    match fmt:
        case "openai":
            return None, [message_to_openai(message) for message in messages]
        case "anthropic":
            from forge_domain.formats._anthropic import messages_to_anthropic

            return messages_to_anthropic(messages)
        case "responses":
            from forge_domain.formats._responses import messages_to_responses

            return None, messages_to_responses(messages)


def find_format_violations(context: Context, fmt: Format) -> list[Violation]:
    """Every rule of ``fmt``'s provider that ``context`` breaks, by message index.

    Anthropic's also: a user turn whose ``tool_result`` blocks do not come first, and a
    ``thinking`` block without its ``signature``.
    """
    return find_violations(context, fmt)
