"""A compacted file holds no usage that measured the conversation before the compaction.

Provider ``usage`` on a message measured the request that produced it; once compaction
rewrites anything before it, it no longer measures anything. In memory the context's
``usage_floor`` says so; a file has no floor, so the usage is dropped when it is written,
in every format, and a second ``compact`` of a compacted file is a no-op.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from forge_app.cli.compacting import compact_transcript
from forge_app.files._agents import default_agent
from forge_app.files._transcripts import parse_transcript
from forge_domain import Context
from forge_domain.formats import messages_to_format
from forge_domain.formats._openai import messages_from_openai
from tests.app.cli_process import forge
from tests.sessions import session_paths

FILE_FORMATS = ["openai", "anthropic", "responses", "claude-code", "codex"]


def _with_usage(raw: list[dict]) -> list[dict]:
    """``raw`` with a plausible provider usage on every assistant message (a tokenizer
    counting 30% over chars/4 for the whole request, the reply included)."""
    context = Context(messages_from_openai(raw))
    out: list[dict] = []
    prefix = 0
    for message, entry in zip(context, raw, strict=True):
        prefix += message.approx_tokens
        if entry.get("role") == "assistant":
            completion = math.ceil(message.approx_tokens * 1.3)
            total = math.ceil(prefix * 1.3)
            usage = {
                "prompt_tokens": total - completion,
                "completion_tokens": completion,
                "total_tokens": total,
            }
            entry = {**entry, "usage": usage}
        out.append(entry)
    return out


def _document(raw: list[dict], fmt: str) -> tuple[str, str]:
    """The file text of ``raw`` in ``fmt``, and a file name that reads back as it."""
    if fmt == "openai":
        return json.dumps(raw), "session.json"
    if fmt == "claude-code":
        raw = [entry for entry in raw if entry.get("role") != "system"]
    inner = {"claude-code": "anthropic", "codex": "responses"}.get(fmt, fmt)
    system, entries = messages_to_format(inner, messages_from_openai(raw))
    if fmt == "claude-code":
        events = [
            {
                "type": entry["role"],
                "message": entry,
                "uuid": f"u{index}",
                "sessionId": "s1",
                "timestamp": f"2026-01-01T00:00:{index % 60:02}Z",
            }
            for index, entry in enumerate(entries)
        ]
    elif fmt == "codex":
        events = [
            {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s1"}},
            *({"type": "response_item", "payload": item} for item in entries),
        ]
    else:
        key = "messages" if fmt == "anthropic" else "input"
        document = {key: entries} if system is None else {"system": system, key: entries}
        return json.dumps(document), "session.json"
    return "".join(json.dumps(event) + "\n" for event in events), "session.jsonl"


def _compacted_twice(text: str, name: str) -> tuple[object, ...]:
    agent = default_agent()
    first, metrics = compact_transcript(parse_transcript(text, name), agent, source=name)
    written = first.dumps()
    second, again = compact_transcript(parse_transcript(written, name), agent, source=name)
    return metrics.trigger, again.trigger, second.dumps() == written


@pytest.mark.parametrize("fmt", FILE_FORMATS)
@pytest.mark.parametrize("path", session_paths(), ids=lambda p: p.stem)
def test_compacted_usage_second_compact_of_an_output_is_a_no_op(path: Path, fmt: str) -> None:
    raw = _with_usage(json.loads(path.read_text(encoding="utf-8")))
    text, name = _document(raw, fmt)
    first_trigger, second_trigger, unchanged = _compacted_twice(text, name)
    assert (second_trigger, unchanged) == ("none", True), first_trigger


def test_compacted_usage_fires_on_the_usage_sessions() -> None:
    """The table above is not vacuous: the larger sessions compact on their first run."""
    fired = [
        path.stem
        for path in session_paths()
        if _compacted_twice(
            json.dumps(_with_usage(json.loads(path.read_text(encoding="utf-8")))), "s.json"
        )[0]
        == "threshold"
    ]
    assert len(fired) >= 5


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "claude-code"])
def test_compacted_usage_no_stale_usage_in_the_written_file(fmt: str) -> None:
    path = next(p for p in session_paths() if p.stem == "msa-deepseek-django-15400")
    raw = _with_usage(json.loads(path.read_text(encoding="utf-8")))
    text, name = _document(raw, fmt)
    compacted, metrics = compact_transcript(
        parse_transcript(text, name), default_agent(), source=name
    )
    read_back = parse_transcript(compacted.dumps(), name).context
    actual = (
        metrics.trigger,
        [index for index, message in enumerate(read_back) if message.usage is not None],
        read_back.token_count(),
    )
    assert actual == ("threshold", [], compacted.context.token_count())


def test_compacted_usage_validate_counts_the_compacted_size(tmp_path: Path) -> None:
    path = next(p for p in session_paths() if p.stem == "msa-deepseek-django-15400")
    source = tmp_path / "in.json"
    source.write_text(json.dumps(_with_usage(json.loads(path.read_text(encoding="utf-8")))))
    out = tmp_path / "out.json"
    compacted = forge("compact", source, "-o", out, "--json-metrics", tmp_path / "m.json")
    metrics = json.loads((tmp_path / "m.json").read_text())
    again = forge("compact", out, "--json-metrics", tmp_path / "m2.json")
    second = json.loads((tmp_path / "m2.json").read_text())
    actual = (compacted.returncode, again.returncode, second["trigger"], second["tokens_before"])
    assert actual == (0, 0, "none", metrics["tokens_after"])
