"""Claude Code session logs and Codex rollouts (tests/fixtures/formats, real public files):
read as the transcript they wrap, written back as the same log, never losing an event."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_app.compaction._compactor import Compactor
from forge_app.errors import NotATranscript, OutputNotWritten
from forge_app.files._containers import detect_container, read_container
from forge_app.files._transcripts import parse_transcript, read_transcript, write_transcript
from forge_domain import Compact
from forge_domain.formats import (
    find_format_violations,
    message_to_openai,
    messages_from_anthropic,
    messages_from_responses,
)
from tests.app.cli_process import forge
from tests.app.test_formats_fixtures import claude_code_messages, codex_items
from tests.profiles import examples

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
CLAUDE = FIXTURES / "claude-code-representative.jsonl"
CODEX = FIXTURES / "codex-rollout-synthetic.jsonl"
EDGE = FIXTURES / "claude-code-edge-cases.jsonl"
LOGS = [("claude-code", CLAUDE, "anthropic"), ("codex", CODEX, "responses")]
IDS = ["claude-code", "codex"]


def _records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().split("\n") if line.strip()]


def _openai(context) -> list:
    return [message_to_openai(m) for m in context]


def _without_usage(line: str) -> str:
    """A log line with the usage of its turn left out (as a compaction leaves a kept turn)."""
    record = json.loads(line)
    for key in ("message", "payload"):
        if isinstance(record.get(key), dict):
            record[key] = {k: v for k, v in record[key].items() if k != "usage"}
    return json.dumps(record, sort_keys=True)


def _longer(path: Path, times: int) -> str:
    """The log with its turns ``times`` over (ids made unique per copy): a longer session."""
    lines = [line for line in path.read_text().split("\n") if line.strip()]
    head, body = lines[:1], lines[1:]
    copies = [
        re.sub(r'((?:_id|"id")"?\s*:\s*")', rf"\g<1>{n}-", line)
        for n in range(times)
        for line in body
    ]
    return "\n".join([*head, *copies]) + "\n"


@pytest.mark.parametrize(("kind", "path", "fmt"), LOGS, ids=IDS)
def test_log_is_read_as_the_transcript_it_wraps(kind, path, fmt):
    records = _records(path)
    wrapped = (
        messages_from_anthropic(claude_code_messages(records))
        if kind == "claude-code"
        else messages_from_responses(codex_items(records))
    )
    detected = read_transcript(path)
    named = read_transcript(path, kind)
    actual = (
        detect_container(records),
        detected.format,
        detected.container.kind,
        _openai(detected.context) == _openai(wrapped),
        _openai(named.context) == _openai(detected.context),
    )
    assert actual == (kind, fmt, kind, True, True)


@pytest.mark.parametrize(("kind", "path", "fmt"), LOGS, ids=IDS)
def test_log_read_and_written_back_is_byte_identical(tmp_path, kind, path, fmt):
    out = tmp_path / "out.jsonl"
    write_transcript(out, read_transcript(path))
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize(("kind", "path", "fmt"), LOGS, ids=IDS)
def test_compacted_log_keeps_every_event_and_the_untouched_turns_verbatim(kind, path, fmt):
    text = _longer(path, 8)
    transcript = parse_transcript(text, "log.jsonl")
    compactor = Compactor(Compact(retention_window=2))
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    written = transcript.with_context(outcome.context).dumps()
    again = parse_transcript(written, "out.jsonl")
    before, after = transcript.container, again.container
    kept_lines = {_without_usage(line) for line in text.split("\n") if line.strip()}
    turn_lines_kept = [_without_usage(after.lines[i]) in kept_lines for i in after.turn_lines]
    actual = (
        outcome.changed(),
        (again.format, after.kind),
        after.other_events() == before.other_events(),
        Counter(x for i, x in enumerate(after.lines) if i not in after.turn_lines)
        == Counter(x for i, x in enumerate(before.lines) if i not in before.turn_lines),
        _openai(again.context) == _openai(outcome.context.without_stale_usage()),
        [i for i in after.turn_lines if '"usage"' in after.lines[i]],  # all measured the old
        find_format_violations(again.context, fmt),
        turn_lines_kept[-2:],  # the retention window's turns are the original events
        turn_lines_kept.count(False) >= 1,  # the summary is a new event
        len(after.lines) < len(before.lines),
    )
    assert actual == (True, (fmt, kind), True, True, True, [], [], [True, True], True, True)


def test_new_claude_code_events_carry_the_session_of_the_events_they_replace():
    transcript = parse_transcript(_longer(CLAUDE, 8), "log.jsonl")
    compactor = Compactor(Compact(retention_window=2))
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    again = parse_transcript(transcript.with_context(outcome.context).dumps(), "o.jsonl")
    original = {_without_usage(line) for line in transcript.container.lines}
    new = [
        json.loads(line)
        for line in again.container.lines
        if _without_usage(line) not in original  # a kept turn without its usage is not new
    ]
    session = _records(CLAUDE)[0]["sessionId"]
    actual = {(e["type"], e["sessionId"], e["isSidechain"], "uuid" in e) for e in new}
    assert actual <= {("user", session, False, False), ("assistant", session, False, False)}
    assert actual


@pytest.mark.parametrize(("kind", "path", "fmt"), LOGS, ids=IDS)
def test_log_with_other_events_is_not_written_as_a_plain_file(tmp_path, kind, path, fmt):
    out = tmp_path / "out.json"
    with pytest.raises(OutputNotWritten) as caught:
        write_transcript(out, read_transcript(path))
    actual = (
        out.exists(),
        "events other than turns" in str(caught.value),
        ".jsonl" in str(caught.value),
    )
    assert actual == (False, True, True)


def test_log_of_turns_only_is_written_as_a_plain_file(tmp_path):
    lines = [line for line in CODEX.read_text().split("\n") if '"response_item"' in line]
    source = tmp_path / "turns.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.json"
    write_transcript(out, read_transcript(source))
    items = [json.loads(line)["payload"] for line in lines]
    assert json.loads(out.read_text()) == items


def test_malformed_claude_code_log_names_the_line_and_field():
    with pytest.raises(NotATranscript) as caught:
        read_transcript(EDGE)
    message = str(caught.value)
    actual = (caught.value.index, "line 10:" in message, "messages[9].content" in message)
    assert actual == (9, True, True)


@pytest.mark.parametrize(
    "lines",
    [
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        [{"type": "message", "role": "user", "content": "hi"}],
        [{"type": "user", "message": {"role": "user", "content": "x"}, "role": "user"}],
    ],
    ids=["openai-jsonl", "responses-jsonl", "has-role"],
)
def test_plain_jsonl_is_no_container(lines):
    assert detect_container(lines) is None


def test_a_plain_file_named_as_a_log_has_no_turns(tmp_path):
    path = tmp_path / "plain.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n')
    with pytest.raises(NotATranscript, match="holds no turns"):
        read_transcript(path, "claude-code")


@pytest.mark.parametrize(("kind", "path", "fmt"), LOGS, ids=IDS)
def test_cli_compacts_a_log_into_a_log(tmp_path, kind, path, fmt):
    source = tmp_path / f"{kind}.jsonl"
    source.write_text(_longer(path, 8))
    out = tmp_path / "out.jsonl"
    run = forge("compact", source, "--force", "-o", out, "--format", kind)
    written = read_transcript(out)
    actual = (
        run.returncode,
        written.container.kind,
        written.format,
        written.container.other_events(),
    )
    assert actual == (0, kind, fmt, read_transcript(source).container.other_events())


def test_cli_refuses_a_log_to_a_plain_file_in_one_line(tmp_path):
    out = tmp_path / "out.json"
    run = forge("compact", CLAUDE, "--force", "-o", out)
    lines = run.stderr.strip().splitlines()
    actual = (run.returncode, out.exists(), len(lines), "summary x1" in run.stderr)
    assert actual == (2, False, 1, True)


def test_cli_validates_a_codex_rollout():
    run = forge("validate", CODEX)
    actual = (run.returncode, "valid (responses): 8 messages" in run.stderr)
    assert actual == (0, True)


def _texts(n: int) -> list:
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"n{i}"}]}
        for i in range(n)
    ]


@given(
    start=st.integers(min_value=0, max_value=8),
    length=st.integers(min_value=0, max_value=8),
    new=st.integers(min_value=0, max_value=3),
)
@settings(max_examples=examples(60), deadline=None)
def test_every_other_event_survives_any_replacement_in_order(start, length, new):
    text = _longer(CODEX, 3)
    records = [json.loads(line) for line in text.split("\n") if line.strip()]
    log, entries = read_container("codex", text, records)
    start = min(start, len(entries))
    end = min(len(entries), start + length)
    changed = [*entries[:start], *_texts(new), *entries[end:]]
    written = log.dumps(changed)
    lines = [line for line in written.split("\n") if line.strip()]
    again, read_back = read_container("codex", written, [json.loads(x) for x in lines])
    others = [x for i, x in enumerate(log.lines) if i not in log.turn_lines]
    kept = [x for i, x in enumerate(again.lines) if i not in again.turn_lines]
    actual = (read_back == changed, kept == others)
    assert actual == (True, True)
