"""Folding a summary kept only as text: a transcript file, a framework that keeps text.

A frame written to a file loses its structure (``summary_data`` is never written); the
next compaction reads it back (``read_frame``) instead of quoting it, so a conversation
compacted, saved and compacted again any number of times has one summary, with its task
and every file it changed.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import forge_app.compaction._compactor as compactor_module
from forge_app.cli.app import app
from forge_app.compaction import Compactor
from forge_app.files import Transcript, read_transcript, write_transcript
from forge_app.summary._frame import SUMMARY_MARKER
from forge_app.summary._read_frame import EARLIER_SUMMARY_NOTE, read_frame
from forge_domain import Compact, Context, Role, TextMessage, ToolResult
from forge_domain.summary import ContextSummary, SummaryBlock, SummaryItem, TextItem, ToolCallItem
from forge_domain.tools import FILE_CHANGING_KINDS, TodoWriteTool
from tests.app.engine_sessions import coding_session
from tests.app.test_cli import needs_sessions
from tests.sessions import SESSIONS, session_paths

SESSION_FILES = session_paths()
ROUNDS = 4
"""Compactions per conversation: the first, then one after each of 3 file round trips."""


def _chunks(context: Context) -> list[list]:
    """``context`` in ``ROUNDS`` parts, each cut before a message that is not a tool result."""
    messages, cuts, start = list(context), [], 0
    for part in range(1, ROUNDS + 1):
        cut = len(messages) * part // ROUNDS
        while cut < len(messages) and isinstance(messages[cut], ToolResult):
            cut += 1
        cuts.append(messages[start:cut])
        start = cut
    return cuts


def _changed_paths(context: Context) -> set[str]:
    return {
        item.tool.path
        for message in context
        if isinstance(message, TextMessage) and message.summary_data is not None
        for item in ContextSummary.model_validate(message.summary_data).tool_calls()
        if item.tool.kind in FILE_CHANGING_KINDS
    }


def _summaries(context: Context) -> list[str]:
    return [message.text for message in context if SUMMARY_MARKER in message.text]


def _conversation(tmp_path, session, *, through_files: bool) -> tuple[Context, set[str], str]:
    """The session compacted after each part, saved to a file and read back between parts
    when ``through_files``; with every path a summary recorded changed, and the task."""
    compactor = Compactor(Compact(retention_window=2))
    context = Context.from_openai(json.loads(session.read_text()))
    task = next(m.text for m in context if isinstance(m, TextMessage) and m.role == Role.USER)
    messages: list = []
    changed: set[str] = set()
    for number, part in enumerate(_chunks(context)):
        outcome = compactor.compact(Context([*messages, *part]), compactor.forced_strategy())
        changed |= _changed_paths(outcome.context)
        current = outcome.context
        if through_files:
            path = tmp_path / f"round-{number}.json"
            write_transcript(path, Transcript(current))
            current = read_transcript(path).context
        messages = list(current)
    return Context(messages), changed, task


@needs_sessions
@pytest.mark.parametrize("session", SESSION_FILES, ids=[p.stem for p in SESSION_FILES])
def test_compacting_a_saved_transcript_again_folds_its_summary(tmp_path, session):
    final, changed, task = _conversation(tmp_path, session, through_files=True)

    summaries = _summaries(final)
    text = "\n".join(message.text for message in final)
    actual = {
        "markers": text.count(SUMMARY_MARKER),
        "task kept": task in text,
        "paths missing": sorted(path for path in changed if path not in "".join(summaries)),
        "opaque": EARLIER_SUMMARY_NOTE in text,
    }
    assert actual == {"markers": 1, "task kept": True, "paths missing": [], "opaque": False}


@needs_sessions
@pytest.mark.parametrize("session", SESSION_FILES, ids=[p.stem for p in SESSION_FILES])
def test_folding_through_files_writes_the_summary_folding_in_memory_writes(tmp_path, session):
    in_memory, _, _ = _conversation(tmp_path, session, through_files=False)
    through_files, _, _ = _conversation(tmp_path, session, through_files=True)

    assert _summaries(through_files) == _summaries(in_memory)


@needs_sessions
def test_cli_compact_of_its_own_output_with_new_turns_folds_the_summary(tmp_path):
    source = SESSIONS / "msa-deepseek-django-15400.json"
    messages = json.loads(source.read_text())
    half = len(messages) // 2
    while messages[half]["role"] == "tool":
        half += 1
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(messages[:half]))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    runner = CliRunner()

    results = [runner.invoke(app, ["compact", "--force", str(first), "-o", str(a)])]
    second.write_text(json.dumps([*json.loads(a.read_text()), *messages[half:]]))
    results.append(runner.invoke(app, ["compact", "--force", str(second), "-o", str(b)]))

    texts = [json.dumps(json.loads(path.read_text())) for path in (a, second, b)]
    actual = (
        [r.exit_code for r in results],
        [t.count(json.dumps(SUMMARY_MARKER)[1:-1]) for t in texts],
    )
    assert actual == ([0, 0], [1, 1, 1])


EXTRA = SESSIONS.parent / "sessions-extra"
ALL_FILES = [*SESSION_FILES, *sorted(EXTRA.glob("*.json"))]


def _as_shown(summary: ContextSummary) -> ContextSummary:
    """``summary`` as its frame shows it: no call ids, todos added or cancelled as pending."""

    def shown(item: SummaryItem) -> SummaryItem:
        if not isinstance(item, ToolCallItem):
            return item
        tool = item.tool
        if isinstance(tool, TodoWriteTool):
            changes = tuple(
                change
                if change.kind == "updated"
                else change.model_copy(
                    update={"todo": change.todo.model_copy(update={"status": "pending"})}
                )
                for change in tool.changes
            )
            tool = tool.model_copy(update={"changes": changes})
        return item.model_copy(update={"id": None, "tool": tool})

    blocks = tuple(
        block.model_copy(update={"contents": tuple(shown(item) for item in block.contents)})
        for block in summary.blocks
    )
    return ContextSummary(blocks=blocks)


@needs_sessions
@pytest.mark.parametrize("budget", [None, 500], ids=["default-budget", "500-tokens"])
@pytest.mark.parametrize("session", ALL_FILES, ids=[p.stem for p in ALL_FILES])
def test_read_frame_of_a_real_summary_gives_the_summary_its_frame_shows(session, budget):
    compactor = Compactor(Compact(retention_window=2, summary_max_tokens=budget))
    outcome = compactor.compact(read_transcript(session).context, compactor.forced_strategy())
    written = [
        m for m in outcome.context if isinstance(m, TextMessage) and m.summary_data is not None
    ]

    actual = [read_frame(message.text) for message in written]

    expected = [_as_shown(ContextSummary.model_validate(m.summary_data)) for m in written]
    assert (len(actual), actual) == (1, expected)


REF = "[archived: ref c3, 12 original messages — recall_expand shows them]"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda text: f"{text}\n\n{REF}", {"markers": 1, "ref lines": 1, "opaque": 0}),
        (lambda text: f"{text}\nedited by hand", {"markers": 1, "ref lines": 0, "opaque": 0}),
        (
            lambda text: text.replace("### 1. ", "### 7. ", 1),
            {"markers": 1, "ref lines": 0, "opaque": 1},
        ),
    ],
    ids=["store_ref_line", "text_after_the_frame", "edited_inside"],
)
def test_compactor_folds_a_frame_kept_as_text_once(edit, expected):
    compactor = Compactor(Compact(retention_window=2))
    first = compactor.compact(coding_session(), compactor.forced_strategy()).context
    edited = [
        TextMessage.user(edit(m.text))  # its text only
        if isinstance(m, TextMessage) and m.summary_data is not None
        else m
        for m in first
    ]
    grown = Context([*edited, *coding_session(3)[2:]])

    again = compactor.compact(grown, compactor.forced_strategy()).context

    text = "\n".join(message.text for message in again)
    actual = {
        "markers": text.count(SUMMARY_MARKER),
        "ref lines": text.count(REF),
        "opaque": text.count(EARLIER_SUMMARY_NOTE),
    }
    assert actual == expected


def _quoted_whole(text: str) -> ContextSummary:
    """How a frame kept as text folded before read_frame: quoted as the user's text."""
    return ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=(TextItem(text=text),)),))


@needs_sessions
@pytest.mark.parametrize("session", SESSION_FILES, ids=[p.stem for p in SESSION_FILES])
def test_compacting_a_transcript_nested_before_the_fix_unnests_it(tmp_path, monkeypatch, session):
    with monkeypatch.context() as before_the_fix:
        before_the_fix.setattr(compactor_module, "earlier_summary", _quoted_whole)
        nested, _, _ = _conversation(tmp_path, session, through_files=True)
    compactor = Compactor(Compact(retention_window=2))
    grown = Context([*nested, TextMessage.user("Go on."), TextMessage.assistant("Going on.")])

    again = compactor.compact(grown, compactor.forced_strategy()).context

    assert "\n".join(message.text for message in again).count(SUMMARY_MARKER) == 1
