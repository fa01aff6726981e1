"""The messages a conversation is made of.

A context entry is either a :class:`TextMessage` (system, user or assistant text,
possibly with tool calls) or a :class:`ToolResult`. Images are content parts of a
user message. Every model keeps the OpenAI fields it does not understand in
``extra`` so that a transcript written back is the transcript that was read.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Literal, NamedTuple, Self, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import from_json

from forge_domain._errors import InvalidArguments
from forge_domain._json import JsonObject, JsonValue
from forge_domain._token_estimates import CHARS_PER_TOKEN as CHARS_PER_TOKEN
from forge_domain._token_estimates import image_tokens, opaque_chars, reasoning_text
from forge_domain._usage import Usage


class Role(StrEnum):
    """Who wrote a text message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"

    @property
    def title(self) -> str:  # type: ignore[override]  # str.title is a method; a label reads better
        """The capitalised label used in summaries (``User``)."""
        return self.value.capitalize()


class TextPart(BaseModel):
    """A text part of a multi-part content array."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["text"] = "text"
    text: str
    """The text."""
    extra: JsonObject = Field(default_factory=dict)
    """Unknown keys of the part (``cache_control`` …), kept verbatim."""


class ImagePart(BaseModel):
    """An image part (``image_url``) of a multi-part content array."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["image"] = "image"
    url: str
    """The image URL or data URI."""
    detail: str | None = None
    """OpenAI's ``detail`` hint, when given."""
    url_extra: JsonObject = Field(default_factory=dict)
    """Unknown keys inside ``image_url``."""
    extra: JsonObject = Field(default_factory=dict)
    """Unknown keys of the part."""


class OtherPart(BaseModel):
    """A content part of a type this library does not interpret (audio, file, refusal …)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["other"] = "other"
    raw: JsonObject
    """The part exactly as read."""


ContentPart: TypeAlias = Annotated[TextPart | ImagePart | OtherPart, Field(discriminator="kind")]
Content: TypeAlias = str | tuple[ContentPart, ...] | None


def content_text(content: Content) -> str:
    """Concatenate the text of a content value; images and other parts contribute nothing."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content if isinstance(part, TextPart))


def _ceil_quarter(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


class TokenPieces(NamedTuple):
    """What a message's token count is made of: one definition for every counter."""

    texts: list[str]
    """Texts a tokenizer reads: content, tool names and arguments, readable reasoning."""
    opaque_chars: int
    """Characters counted by the chars/4 rule whatever the tokenizer: parts kept whole,
    encrypted reasoning (token_estimates)."""
    image_tokens: int
    """The images' estimated tokens (token_estimates)."""


_Pieces: TypeAlias = tuple[list[str], int, int]
""":class:`TokenPieces` as a plain tuple (what ``approx_tokens`` reads, cheaper to build)."""


def _chars_estimate(pieces: _Pieces) -> int:
    """chars/4 rounded up over the texts and opaque characters, plus the images."""
    texts, opaque, images = pieces
    return _ceil_quarter(sum(map(len, texts)) + opaque) + images


def _content_pieces(content: Content) -> _Pieces:
    """The pieces of a content value (see :class:`TokenPieces`)."""
    if content is None:
        return [], 0, 0
    if isinstance(content, str):
        return [content], 0, 0
    texts: list[str] = []
    opaque = images = 0
    for part in content:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ImagePart):
            images += image_tokens(part.detail)
        elif isinstance(part, OtherPart):
            opaque += opaque_chars(part.raw)
    return texts, opaque, images


class _Estimated(BaseModel):
    """A message whose ``approx_tokens`` is computed on first use, then kept in its ``__dict__``.

    Kept because contexts sum the estimates of thousands of messages again and again
    (plans/008-performance.md has the measured gain and the command to re-measure it).
    pydantic's ``model_copy`` copies the ``__dict__``, so a copy with ``update`` drops the
    kept estimate: it was computed from the old fields.
    """

    def model_copy(self, *, update: Mapping[str, object] | None = None, deep: bool = False) -> Self:
        """Copy the message; with ``update``, its ``approx_tokens`` is computed afresh."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied.__dict__.pop("approx_tokens", None)
        return copied


class ToolCall(BaseModel):
    """One tool call requested by an assistant message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """The call id that the tool result must answer."""
    name: str
    """The tool's name."""
    arguments: str = "{}"
    """The arguments exactly as the model wrote them (a JSON document as text)."""
    call_type: str | None = "function"
    """OpenAI's ``type`` field; None when the transcript omitted it."""
    function_extra: JsonObject = Field(default_factory=dict)
    """Unknown keys inside ``function``."""
    extra: JsonObject = Field(default_factory=dict)
    """Unknown keys of the call (``index`` …)."""

    def has_valid_arguments(self) -> bool:
        """Return True when ``arguments`` parses as JSON."""
        try:
            from_json(self.arguments)
        except ValueError:
            return False
        return True

    @property
    def parsed_arguments(self) -> JsonValue:
        """The arguments parsed as JSON (parsed again on each read).

        Raises:
            InvalidArguments: when the text is not JSON.
        """
        try:
            return cast(JsonValue, from_json(self.arguments))
        except ValueError as exc:
            raise InvalidArguments(self.name, self.arguments) from exc

    @property
    def approx_chars(self) -> int:
        """Characters counted for token estimation: arguments plus name."""
        return len(self.arguments) + len(self.name)


class TextMessage(_Estimated):
    """A system, user or assistant message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["text"] = "text"
    role: Role
    """Who wrote it."""
    content: Content = ""
    """Text, content parts, or None (an assistant turn with only tool calls)."""
    tool_calls: tuple[ToolCall, ...] | None = None
    """Tool calls of an assistant message; None when the message has none."""
    reasoning_details: tuple[JsonObject, ...] | None = None
    """Opaque reasoning records (OpenRouter / Anthropic thinking); only ``text`` is counted."""
    reasoning_content: str | None = None
    """A provider's plain reasoning text (DeepSeek ``reasoning_content``)."""
    name: str | None = None
    """OpenAI's optional participant name."""
    droppable: bool = False
    """Attachments and reminders that compaction may drop instead of summarising."""
    usage: Usage | None = None
    """Usage the provider reported for this response."""
    span_usage: Usage | None = None
    """On a summary: the accumulated usage of the messages it replaced (accounting only)."""
    summary_data: JsonObject | None = None
    """On a summary: its structured form, so a later compaction can fold it (never sent)."""
    wire_role: str | None = None
    """The role as written in the transcript when it differs from ``role`` (``developer``)."""
    content_absent: bool = False
    """True when the transcript had no ``content`` key at all."""
    extra: JsonObject = Field(default_factory=dict)
    """Unknown keys of the message, kept verbatim."""

    @classmethod
    def system(cls, content: str) -> TextMessage:
        """Build a system message."""
        return cls(role=Role.SYSTEM, content=content)

    @classmethod
    def user(cls, content: str, *, droppable: bool = False) -> TextMessage:
        """Build a user message."""
        return cls(role=Role.USER, content=content, droppable=droppable)

    @classmethod
    def assistant(
        cls,
        content: str | None,
        tool_calls: tuple[ToolCall, ...] | None = None,
        *,
        usage: Usage | None = None,
        reasoning_details: tuple[JsonObject, ...] | None = None,
    ) -> TextMessage:
        """Build an assistant message."""
        return cls(
            role=Role.ASSISTANT,
            content=content,
            tool_calls=tool_calls or None,
            usage=usage,
            reasoning_details=reasoning_details,
        )

    @classmethod
    def image(cls, url: str, *, detail: str | None = None) -> TextMessage:
        """Build a user message holding one image."""
        return cls(role=Role.USER, content=(ImagePart(url=url, detail=detail),))

    @property
    def text(self) -> str:
        """The message's text without image or other parts."""
        return content_text(self.content)

    def has_role(self, role: Role) -> bool:
        """Return True when the message has this role."""
        return self.role == role

    def has_tool_call(self) -> bool:
        """Return True when the message carries a tool-call list, even an empty one (forge)."""
        return self.tool_calls is not None

    def has_tool_result(self) -> bool:
        """Text messages are never tool results."""
        return False

    def token_pieces(self) -> TokenPieces:
        """Its content, tool calls (name and arguments) and reasoning, as :class:`TokenPieces`."""
        return TokenPieces(*self._pieces())

    def _pieces(self) -> _Pieces:
        texts, opaque, images = _content_pieces(self.content)
        for call in self.tool_calls or ():
            texts += (call.name, call.arguments)
        for detail in self.reasoning_details or ():
            text, hidden = reasoning_text(detail)
            texts.append(text)
            opaque += hidden
        if self.reasoning_content:
            texts.append(self.reasoning_content)
        return texts, opaque, images

    @cached_property
    def approx_tokens(self) -> int:
        """chars/4 rounded up over text, tool calls and reasoning (forge's rule), plus the
        estimates of images, encrypted reasoning and parts kept whole (token_estimates)."""
        return _chars_estimate(self._pieces())


class ToolResult(_Estimated):
    """The output of one tool call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["tool"] = "tool"
    call_id: str
    """The id of the call this answers."""
    name: str | None = None
    """The tool's name when the transcript records it."""
    content: str | tuple[ContentPart, ...] = ""
    """The output: text or content parts."""
    is_error: bool = False
    """True when the tool failed."""
    usage: Usage | None = None
    """Usage, if any was recorded (rare)."""
    extra: JsonObject = Field(default_factory=dict)
    """Unknown keys of the message, kept verbatim."""

    @classmethod
    def of(cls, call_id: str, output: str, *, name: str | None = None) -> ToolResult:
        """Build a successful result."""
        return cls(call_id=call_id, name=name, content=output)

    @classmethod
    def failed(cls, call_id: str, output: str, *, name: str | None = None) -> ToolResult:
        """Build a failed result."""
        return cls(call_id=call_id, name=name, content=output, is_error=True)

    @property
    def text(self) -> str:
        """The output's text."""
        return content_text(self.content)

    @property
    def droppable(self) -> bool:
        """Tool results are never droppable."""
        return False

    def has_role(self, role: Role) -> bool:
        """Tool results have no role of their own (forge)."""
        return False

    def has_tool_call(self) -> bool:
        """Tool results never carry calls."""
        return False

    def has_tool_result(self) -> bool:
        """Always True."""
        return True

    def token_pieces(self) -> TokenPieces:
        """Its output, as :class:`TokenPieces`."""
        return TokenPieces(*_content_pieces(self.content))

    @cached_property
    def approx_tokens(self) -> int:
        """chars/4 rounded up over the text output, plus the estimates of its images and
        parts kept whole (token_estimates)."""
        return _chars_estimate(_content_pieces(self.content))


ContextMessage: TypeAlias = Annotated[TextMessage | ToolResult, Field(discriminator="kind")]
"""One entry of a context."""
