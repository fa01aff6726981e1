"""Every format compacts alike and is written back in its own format, valid by its rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import tiktoken
from structlog.testing import capture_logs

from forge_app.cli.compacting import compact_transcript
from forge_app.compaction._compactor import Compactor
from forge_app.errors import NotATranscript
from forge_app.files import _tokenizer
from forge_app.files._agents import default_agent
from forge_app.files._tokenizer import CHARS, load_tokenizer
from forge_app.files._transcripts import parse_transcript
from forge_domain import Compact, Context, context_tokens
from forge_domain.formats import (
    FORMATS,
    find_format_violations,
    message_to_openai,
    messages_from_format,
    messages_key,
    messages_to_format,
)
from forge_domain.formats._openai import messages_from_openai
from tests.app.cli_process import forge
from tests.sessions import SESSIONS

SESSION_FILES = sorted(SESSIONS.glob("*.json"))


def _normal(value: object) -> object:
    return json.loads(json.dumps(value))


def _document(raw: list, fmt: str) -> object:
    system, entries = messages_to_format(fmt, messages_from_openai(raw))
    key = messages_key(fmt)
    return _normal({key: entries} if system is None else {"system": system, key: entries})


def _openai(context: Context) -> object:
    return _normal([message_to_openai(m) for m in context])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem if isinstance(p, Path) else p)
def test_formats_forced_compaction_decides_alike_and_writes_valid_output(path, fmt):
    raw = json.loads(path.read_text(encoding="utf-8"))
    compactor = Compactor(Compact())
    reference = compactor.compact(Context.from_openai(raw), compactor.forced_strategy())
    transcript = parse_transcript(json.dumps(_document(raw, fmt)), f"{path.stem}.json")
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    written = parse_transcript(transcript.with_context(outcome.context).dumps())
    actual = (
        transcript.format,
        outcome.result.compacted_range,
        _openai(outcome.context),
        written.format,
        find_format_violations(written.context, fmt),
        _openai(written.context),
    )
    expected = (
        fmt,
        reference.result.compacted_range,
        _openai(reference.context),
        fmt,
        [],
        _openai(reference.context),
    )
    assert actual == expected


@pytest.mark.parametrize("fmt", ["anthropic", "responses"])
def test_formats_cli_compacts_each_format_and_writes_it_back(tmp_path, fmt):
    raw = json.loads((SESSIONS / "sweagent-marshmallow-1867-fc.json").read_text(encoding="utf-8"))
    source = tmp_path / "session.json"
    source.write_text(json.dumps(_document(raw, fmt)))
    result = forge("compact", source, "--force", "-o", tmp_path / "out.json")
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    check = forge("validate", tmp_path / "out.json")
    key = messages_key(fmt)
    actual = (result.returncode, key in written, check.returncode, f"valid ({fmt})" in check.stderr)
    assert actual == (0, True, 0, True)


def test_formats_cli_format_option_overrides_detection(tmp_path):
    source = tmp_path / "s.json"
    source.write_text(
        json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    )
    result = forge("validate", source, "--format", "anthropic")
    actual = (result.returncode, "valid (anthropic)" in result.stderr)
    assert actual == (0, True)


def test_formats_cli_bad_anthropic_turn_is_one_line_with_index(tmp_path):
    source = tmp_path / "s.json"
    turns = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}]
    source.write_text(json.dumps({"system": "s", "messages": turns}))
    result = forge("compact", source)
    actual = (
        result.returncode,
        result.stderr.strip().count("\n"),
        "messages[0].content[0].tool_use_id" in result.stderr,
    )
    assert actual == (2, 0, True)


def test_formats_anthropic_first_turn_must_be_the_users():
    text = json.dumps({"system": "s", "messages": [{"role": "assistant", "content": "hi"}]})
    transcript = parse_transcript(text)
    with pytest.raises(
        NotATranscript, match="the first non-system message must come from the user"
    ):
        compact_transcript(transcript, default_agent(), source="s.json", mode="manual")


def test_formats_anthropic_system_written_as_object_from_a_list(tmp_path):
    turns = [{"role": "user", "content": "hi"}]
    transcript = parse_transcript(json.dumps(turns), "s.json", "anthropic")
    with_system = transcript.with_context(
        Context(
            [
                *messages_from_format("openai", [{"role": "system", "content": "s"}]),
                *transcript.context,
            ]
        )
    )
    actual = json.loads(with_system.dumps())
    assert actual == {"system": "s", "messages": turns}


def test_tokenizer_tiktoken_loads_offline_and_counts():
    tokenizer = load_tokenizer("tiktoken")
    actual = (tokenizer.name, None if tokenizer.count is None else tokenizer.count("hello world"))
    assert actual == ("tiktoken cl100k_base_offline", 2)


def test_tokenizer_auto_uses_chars_for_claude():
    actual = load_tokenizer("auto", model="claude-sonnet-4-5", fmt="anthropic")
    assert actual == CHARS


def test_tokenizer_without_a_bundled_encoding_falls_back_and_says_why(monkeypatch):
    monkeypatch.setattr(_tokenizer, "OFFLINE_ENCODINGS", ("no_such_encoding_offline",))
    with capture_logs() as logs:
        tokenizer = load_tokenizer("tiktoken")
    actual = (tokenizer, [entry["event"] for entry in logs])
    assert actual == (CHARS, ["tokenizer_fell_back"])


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.stem)
def test_tokenizer_count_is_near_the_chars_estimate_on_real_sessions(path):
    context = Context.from_openai(json.loads(path.read_text(encoding="utf-8")))
    counted = context_tokens(context, load_tokenizer("tiktoken").count).value
    estimate = context.token_count_approx()
    actual = 0.5 * estimate <= counted <= 1.5 * estimate
    assert actual is True


def _thinking_session(turns: int) -> list:
    session: list = [{"role": "user", "content": "fix the failing test"}]
    for n in range(turns):
        session += [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": f"step {n}: " + "look " * 80,
                        "signature": f"sig-{n}",
                    },
                    {"type": "text", "text": f"Running check {n}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n}",
                        "name": "Bash",
                        "input": {"command": f"pytest -k t{n}"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "ok " * 200}
                ],
            },
        ]
    return session


def test_formats_anthropic_compaction_keeps_the_continued_turns_thinking_with_its_signature():
    turns = _thinking_session(8)
    transcript = parse_transcript(json.dumps({"system": "s", "messages": turns}))
    compactor = Compactor(Compact(retention_window=2))
    outcome = compactor.compact(transcript.context, compactor.forced_strategy())
    written = json.loads(transcript.with_context(outcome.context).dumps())["messages"]
    last_assistant = next(t for t in reversed(written) if t["role"] == "assistant")
    actual = (
        outcome.changed(),
        written[0]["role"],
        last_assistant["content"][0],
        written[-1] == turns[-1],
        find_format_violations(
            parse_transcript(json.dumps(written), "o.json", "anthropic").context, "anthropic"
        ),
    )
    assert actual == (True, "user", turns[-2]["content"][0], True, [])


@pytest.mark.parametrize(
    ("model", "fmt", "expected"),
    [
        ("gpt-4o-mini", "anthropic", True),
        ("o3", "openai", True),
        ("openai/gpt-5", "responses", True),
        ("claude-opus-4", "openai", False),
        (None, "openai", True),
        (None, "anthropic", False),
    ],
)
def test_tokenizer_openai_families(model, fmt, expected):
    actual = _tokenizer.is_openai_model(model, fmt)
    assert actual == expected


def test_tokenizer_without_tiktoken_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken raises ImportError
    with capture_logs() as logs:
        tokenizer = load_tokenizer("tiktoken")
    actual = (tokenizer, [entry["reason"] for entry in logs])
    assert actual == (CHARS, ["tiktoken is not installed (pip install 'forge-compact[tokens]')"])


def test_tokenizer_damaged_bundled_encoding_falls_back(monkeypatch):
    def damaged(name):
        raise ValueError(f"hash mismatch for {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", damaged)
    with capture_logs() as logs:
        tokenizer = load_tokenizer("tiktoken")
    actual = (tokenizer, [entry["reason"] for entry in logs])
    assert actual == (
        CHARS,
        ["cl100k_base_offline did not load: hash mismatch for cl100k_base_offline"],
    )
