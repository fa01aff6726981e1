"""The summary transformers' shortcuts give what their plain forms give.

``aggregate_operations`` and ``keep_last_operations`` count the calls they merge and build
each merged line once, instead of folding the calls with ``ToolCallItem.with_earlier`` one
by one; ``redact`` skips the ``assignment`` rule when its gate finds no place the rule
could match. Each is compared here with its plain form: the ``with_earlier`` fold, written
out below, and every rule whose hint the text holds.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Hashable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.generator import generate_session
from forge_app.files._transcripts import parse_transcript
from forge_app.summary import SummaryTransformer
from forge_app.summary._redaction import _FOLDS_TO_ASCII, redact
from forge_app.summary.transformers._keep_last_operation import (
    aggregate_operations,
    keep_last_operations,
    operation_key,
)
from forge_domain import Role
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.tools import (
    FileReadTool,
    FileUpdateTool,
    GenericTool,
    ShellTool,
    Todo,
    TodoChange,
    TodoWriteTool,
)
from tests.app.secret_fakes import redacted_by_every_rule
from tests.sessions import session_paths

# -- merging calls: the with_earlier fold -----------------------------------------------------


def _keep_last_by_folding(contents: tuple[SummaryItem, ...]) -> tuple[SummaryItem, ...]:
    """``keep_last_operations`` as it was written before its shortcut: every superseded call
    folded into a line with ``with_earlier``."""
    last: dict[Hashable, int] = {}
    last_success: dict[Hashable, int] = {}
    keys: list[Hashable | None] = []
    for index, item in enumerate(contents):
        key = operation_key(item.tool) if isinstance(item, ToolCallItem) else None
        keys.append(key)
        if key is not None:
            last[key] = index
            if isinstance(item, ToolCallItem) and item.is_success:
                last_success[key] = index
    kept: list[SummaryItem] = []
    superseded: dict[Hashable, ToolCallItem] = {}
    for index, (item, key) in enumerate(zip(contents, keys, strict=True)):
        if key is None or not isinstance(item, ToolCallItem):
            kept.append(item)
            continue
        final = contents[last[key]]
        if index == last[key] or (
            index == last_success.get(key)
            and isinstance(final, ToolCallItem)
            and not final.is_success
        ):
            previous = superseded.pop(key, None)
            kept.append(item if previous is None else item.with_earlier(previous))
        else:
            previous = superseded.get(key)
            superseded[key] = item if previous is None else item.with_earlier(previous)
    return tuple(kept)


def _aggregate_by_folding(summary: ContextSummary) -> ContextSummary:
    """``aggregate_operations`` as it was written before its shortcut."""
    last: dict[Hashable, tuple[int, int]] = {}
    keyed = 0
    for block_index, block in enumerate(summary.blocks):
        for item_index, item in enumerate(block.contents):
            if isinstance(item, ToolCallItem) and (key := operation_key(item.tool)) is not None:
                last[key] = (block_index, item_index)
                keyed += 1
    if keyed == len(last):
        return summary
    merged: dict[Hashable, ToolCallItem] = {}
    blocks: list[SummaryBlock] = []
    for block_index, block in enumerate(summary.blocks):
        contents: list[SummaryItem] = []
        for item_index, item in enumerate(block.contents):
            key = operation_key(item.tool) if isinstance(item, ToolCallItem) else None
            if key is None or not isinstance(item, ToolCallItem):
                contents.append(item)
                continue
            previous = merged.get(key)
            line = item if previous is None else item.with_earlier(previous)
            if last[key] == (block_index, item_index):
                contents.append(line)
            else:
                merged[key] = line
        blocks.append(block.model_copy(update={"contents": tuple(contents)}))
    return ContextSummary.of_blocks(blocks)


_TOOLS = st.sampled_from(
    [
        FileReadTool(path="a.py"),
        FileReadTool(path="b.py"),
        FileUpdateTool(path="a.py"),
        ShellTool(command="pytest"),
        ShellTool(command="make"),
        GenericTool(name="lookup", arguments='{"q": 1}'),
        TodoWriteTool(
            changes=(TodoChange(todo=Todo(content="fix", status="pending"), kind="added"),)
        ),
    ]
)
_EVIDENCE = st.sampled_from(
    [
        None,
        None,
        "AssertionError: boom | tests/test_a.py:3 | exit code 1",
        "AssertionError: boom | exit code 2",
        "KeyError: 'x'",
        "ImportError: no module | exit code 1; earlier: KeyError: 'x'",
        "SyntaxError: bad; earlier: KeyError: 'x'; earlier: AssertionError: boom",
    ]
)


@st.composite
def _calls(draw: st.DrawFn) -> ToolCallItem:
    """A call, possibly a line an earlier compaction merged, possibly with evidence."""
    earlier = draw(st.integers(min_value=0, max_value=3))
    return ToolCallItem(
        id=draw(st.sampled_from([None, "c1", "c2"])),
        tool=draw(_TOOLS),
        is_success=draw(st.booleans()),
        earlier=earlier,
        earlier_failures=draw(st.integers(min_value=0, max_value=earlier)),
        evidence=draw(_EVIDENCE),
    )


_ITEMS = st.lists(_calls() | st.builds(TextItem, text=st.sampled_from(["go", "ok"])), max_size=12)
_SUMMARIES = st.builds(
    ContextSummary,
    blocks=st.lists(
        st.builds(
            SummaryBlock,
            role=st.sampled_from([Role.USER, Role.ASSISTANT]),
            contents=_ITEMS.filter(bool).map(tuple),
        ),
        max_size=6,
    ).map(tuple),
)


@given(_ITEMS.map(tuple))
def test_keep_last_operations_gives_what_folding_with_earlier_gives(contents):
    assert keep_last_operations(contents) == _keep_last_by_folding(contents)


@given(_SUMMARIES)
def test_aggregate_operations_gives_what_folding_with_earlier_gives(summary):
    assert aggregate_operations(summary) == _aggregate_by_folding(summary)


def _summaries() -> list[tuple[str, ContextSummary]]:
    """The summary of every shared session and of two generated ones (many repeated calls),
    as the compactor's transformers leave it before aggregation."""
    sources = [(path.name, path.read_bytes()) for path in session_paths()]
    sources += [
        (f"generated-{size}", json.dumps(generate_session(size, seed=1)).encode())
        for size in (300, 1_000)
    ]
    transform = SummaryTransformer("/repo")
    return [
        (name, transform(ContextSummary.from_messages(list(parse_transcript(data, name).context))))
        for name, data in sources
    ]


@pytest.fixture(scope="module")
def summaries() -> list[tuple[str, ContextSummary]]:
    return _summaries()


def test_merging_calls_gives_what_folding_gives_on_every_session(summaries):
    for name, summary in summaries:
        aggregated = aggregate_operations(summary)
        folded = _aggregate_by_folding(summary)
        assert aggregated.model_dump_json() == folded.model_dump_json(), name
        for block in summary.blocks:
            kept = keep_last_operations(block.contents)
            assert kept == _keep_last_by_folding(block.contents), name


# -- redaction: the assignment rule's gate ----------------------------------------------------


_PIECES = [
    "api",
    "API",
    # Ignoring case, the pattern reads these as i, i, s and k; lower-cased, the first is
    # two characters (i and a combining dot), the others stay what they are.
    "Ap\u0130",
    "\u0131",
    "\u017fecret",
    "TO\u212aEN",
    "_key",
    "Token",
    "tokens",
    "tokenizer",
    "author",
    "Auth",
    "PASSWORD",
    "secret",
    "pwd",
    "credentials",
    "my.",
    "-",
    "\\",
    '"',
    "'",
    " ",
    "\t",
    "\u00a0",
    "=",
    ":",
    "…",
    "x9Kq2LmN8pR4sT6v",
    "$X",
    "[REDACTED]",
    "\n",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=10).map("".join))
def test_redact_with_the_assignment_gate_gives_what_every_rule_gives(text):
    assert redact(text) == redacted_by_every_rule(text)


def test_redact_gives_what_every_rule_gives_on_every_session_string(summaries):
    strings = {
        value
        for _, summary in summaries
        for value in re.findall(r'"((?:[^"\\]|\\.)*)"', summary.model_dump_json())
    }
    texts = [json.loads(f'"{value}"') for value in strings]
    assert [redact(text) for text in texts] == [redacted_by_every_rule(text) for text in texts]


def test_the_characters_folding_to_ascii_are_every_one_ignoring_case_matches_with_ascii():
    ascii_class = re.compile(r"[\x00-\x7f]", re.IGNORECASE)
    beyond_ascii = [chr(code) for code in range(0x80, sys.maxunicode + 1)]
    folding = [
        char
        for char in beyond_ascii
        if ascii_class.fullmatch(char) or any(ord(part) < 0x80 for part in char.lower())
    ]
    assert folding == [char for char in beyond_ascii if _FOLDS_TO_ASCII.fullmatch(char)]
