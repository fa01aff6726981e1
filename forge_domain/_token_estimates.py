"""Token estimates of the parts a tokenizer cannot read: images, opaque reasoning, attachments.

Text is counted by characters (:data:`CHARS_PER_TOKEN`) or by a tokenizer the
application injects (:mod:`forge_domain._token_count`). The other parts of a message
are estimated here, the same way whichever text count is used:

* an image: :data:`IMAGE_TOKENS`, or :data:`LOW_DETAIL_IMAGE_TOKENS` when it asks for
  ``detail: low``. Anthropic bills about ``width * height / 750`` tokens, about 1,600
  for an image at its size limit; OpenAI bills 85 for low detail and 765-1,105 for
  common sizes at high detail. The estimate is the upper end, so compaction comes
  early rather than late;
* reasoning records: their readable text (``text``, ``thinking``, ``summary`` texts)
  counts as text; encrypted or redacted reasoning (``encrypted_content``, ``data``)
  is estimated from its length at :data:`CHARS_PER_TOKEN`; signatures are not
  counted (they are not tokens the model reads);
* any other part or item kept whole (a document, a server tool result, a compaction
  item): its JSON text at :data:`CHARS_PER_TOKEN`.
"""

from __future__ import annotations

import json
from typing import Final

from forge_domain._json import JsonObject

__all__ = ["IMAGE_TOKENS", "LOW_DETAIL_IMAGE_TOKENS"]  # the helpers serve messages and token_count

CHARS_PER_TOKEN: Final = 4
"""The token estimate: this many characters make a token (rounded up per message)."""
IMAGE_TOKENS: Final = 1_600
"""Tokens counted for one image (the upper end of what providers bill)."""
LOW_DETAIL_IMAGE_TOKENS: Final = 85
"""Tokens counted for one image that asks for ``detail: low`` (OpenAI's fixed price)."""
_OPAQUE_KEYS: Final = ("encrypted_content", "data")
"""Keys of reasoning records whose value is encrypted or redacted reasoning."""


def image_tokens(detail: str | None) -> int:
    """The estimate for one image."""
    return LOW_DETAIL_IMAGE_TOKENS if detail == "low" else IMAGE_TOKENS


def reasoning_text(record: JsonObject) -> tuple[str, int]:
    """The readable text of one reasoning record, and the length of its opaque payload."""
    pieces: list[str] = []
    for key in ("text", "thinking"):
        value = record.get(key)
        if isinstance(value, str):
            pieces.append(value)
    summary = record.get("summary")
    if isinstance(summary, list):
        for part in summary:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str):
                pieces.append(text)
    opaque = 0
    for key in _OPAQUE_KEYS:
        value = record.get(key)
        if isinstance(value, str):
            opaque += len(value)
    return "".join(pieces), opaque


def opaque_chars(raw: JsonObject) -> int:
    """Characters counted for a part or item kept whole: its compact JSON text."""
    return len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")))
