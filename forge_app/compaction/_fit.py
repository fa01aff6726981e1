"""The last resort of fitting a context: cut the largest message texts, visibly.

When summarising and pruning leave a context over its budget (a single tool
output larger than the whole window, a pasted log in the task), the largest
texts are cut to a common length, the largest first, so that the context fits.
Each cut keeps the start and the end of the text (errors are often at the
end) and says in the middle how much was removed::

    …head of the output…
    [… 48,213 chars cut to fit the context window …]
    …end of the output…

What is never cut: system messages, earlier summaries, tool-call
arguments and non-text parts. Tool outputs and assistant texts are cut first,
then other user texts (observations of text-protocol agents, pasted logs,
demonstrations), and the task (``_boundaries.task_index``: the last user message
of the head, before the first assistant message and any summary) only when the caller allows it
(``reach="task_too"``): the window must be met, a compaction target need not
cost the task. A message is never cut below
``MIN_KEPT_CHARS``. Roles, order, call ids and pairs are unchanged, so a
provider-valid context stays valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from forge_app.compaction._boundaries import task_index
from forge_app.compaction._compactor import is_summary_message
from forge_app.compaction._messages import with_content
from forge_domain import Context, ContextMessage, Role, TextMessage, ToolResult
from forge_domain._messages import CHARS_PER_TOKEN

__all__: list[str] = []  # internal: used by the tiers, the handler and the orchestrator

CUT_MARKER = "[… {count:,} chars cut to fit the context window …]"
"""Put where a text was cut; ``{count}`` is the number of characters removed."""
MIN_KEPT_CHARS = 400
"""Characters a cut message keeps at least (head and end together)."""
_MARKER_CHARS = len(CUT_MARKER.format(count=10**9)) + 2


def _tier(message: ContextMessage, is_task: bool) -> int | None:
    """0: tool outputs and assistant texts; 1: other user texts; 2: the task; None: never."""
    if not isinstance(message.content, str) or len(message.content) <= MIN_KEPT_CHARS:
        return None
    if isinstance(message, ToolResult):
        return 0
    if message.role == Role.ASSISTANT:
        return 0
    if message.role == Role.USER and not is_summary_message(message):
        return 2 if is_task else 1
    return None


def _removed(lengths: Sequence[int], cap: int) -> int:
    """Chars removed by cutting every text longer than ``cap`` (a marker costs chars too)."""
    return sum(max(0, length - cap - _MARKER_CHARS) for length in lengths)


def _cap(lengths: Sequence[int], excess: int) -> int:
    """The largest common length whose cuts remove at least ``excess`` chars.

    A binary search on the cap (the removed amount shrinks as the cap grows);
    ``MIN_KEPT_CHARS`` when even that is not enough.
    """
    low, high = MIN_KEPT_CHARS, max(lengths)
    if _removed(lengths, low) < excess:
        return MIN_KEPT_CHARS
    while low < high:
        middle = (low + high + 1) // 2
        if _removed(lengths, middle) >= excess:
            low = middle
        else:
            high = middle - 1
    return low


def _cut(text: str, keep: int) -> str:
    """``text`` with its middle cut so about ``keep`` chars remain, the cut marked."""
    if len(text) <= keep:
        return text
    head = (keep * 2) // 3
    tail = keep - head
    removed = len(text) - head - tail
    marker = CUT_MARKER.format(count=removed)
    return f"{text[:head].rstrip()}\n{marker}\n{text[len(text) - tail :].lstrip()}"


@dataclass(frozen=True, slots=True)
class Cut:
    """The context after cutting and which messages were cut."""

    context: Context
    """The cut context (the input itself when nothing was cut)."""
    indices: tuple[int, ...]
    """Indices of the messages whose text was cut, in order."""


CutReach = Literal["spare_task", "task_too"]
"""How far cutting may go: everything but the task, or the task too."""


def cut_to_fit(context: Context, budget: int, reach: CutReach = "spare_task") -> Cut:
    """``context`` with its largest texts cut until its estimate is at most ``budget`` tokens.

    Returns the input itself when it already fits or nothing can be cut; the
    result may still be over budget when the parts that are never cut are
    larger (see :func:`irreducible_parts`).
    """
    excess_tokens = context.token_count_approx() - budget
    if excess_tokens <= 0:
        return Cut(context, ())
    messages = list(context)
    excess = excess_tokens * CHARS_PER_TOKEN
    cut_at: list[int] = []
    task = task_index(messages, is_summary=is_summary_message)
    for tier in (0, 1, 2) if reach == "task_too" else (0, 1):
        indices = [i for i, message in enumerate(messages) if _tier(message, i == task) == tier]
        if not indices:
            continue
        cap = _cap([len(messages[index].text) for index in indices], excess)
        for index in indices:
            message = messages[index]
            if len(message.text) <= cap + _MARKER_CHARS:
                continue
            cut = _cut(message.text, cap)
            excess -= len(message.text) - len(cut)
            messages[index] = with_content(message, cut)
            cut_at.append(index)
        if excess <= 0:
            break
    if not cut_at:
        return Cut(context, ())
    return Cut(Context(messages, usage_floor=len(messages)), tuple(sorted(cut_at)))


def irreducible_parts(context: Context) -> str:
    """What :func:`cut_to_fit` cannot shrink, in tokens: e.g. ``system prompt ~9,120, …``."""
    system = summary = arguments = other = 0
    shortest = (MIN_KEPT_CHARS + _MARKER_CHARS) // CHARS_PER_TOKEN
    for message in context:
        tokens = message.approx_tokens
        if isinstance(message, TextMessage) and message.role == Role.SYSTEM:
            system += tokens
        elif isinstance(message, TextMessage) and is_summary_message(message):
            summary += tokens
        elif isinstance(message, TextMessage) and message.tool_calls:
            called = sum(len(call.arguments) for call in message.tool_calls) // CHARS_PER_TOKEN
            arguments += called
            other += min(tokens - called, shortest) if _tier(message, False) is not None else 0
        else:
            other += min(tokens, shortest) if _tier(message, False) is not None else tokens
    parts = (
        ("system prompt", system),
        ("summary", summary),
        ("tool-call arguments", arguments),
        ("other messages at their shortest", other),
    )
    return ", ".join(f"{name} ~{tokens:,}" for name, tokens in parts if tokens)
