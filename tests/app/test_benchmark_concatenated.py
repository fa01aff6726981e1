"""benchmarks.concatenated: real sessions one after the other, provider-valid, deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.concatenated import concatenated_session, read_sessions
from benchmarks.generator import Message, generate_session
from forge_app import Transcript
from forge_domain import Context
from forge_domain.formats import find_violations


def _session(task: str, call_ids: list[str]) -> list[Message]:
    """A system prompt, a task, one parallel round answering ``call_ids``, a reply."""
    calls = [
        {"id": cid, "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        for cid in call_ids
    ]
    return [
        {"role": "system", "content": f"system of {task}"},
        {"role": "user", "content": task},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": cid, "content": f"out {cid}"} for cid in call_ids),
        {"role": "assistant", "content": f"done {task}"},
    ]


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    # b.json is written in Anthropic's format: it is read by format, not assumed OpenAI
    (tmp_path / "a.json").write_text(json.dumps(_session("task a", ["c1", "c2"])))
    anthropic = Transcript(Context.from_openai(_session("task b", ["c1"])), "list", {}, "anthropic")
    (tmp_path / "b.json").write_text(anthropic.dumps())
    (tmp_path / "notes.md").write_text("not a session")
    return tmp_path


def test_read_sessions_reads_every_json_in_name_order_as_openai(sessions_dir):
    written = json.loads((sessions_dir / "b.json").read_text())
    actual = [[m["content"] for m in s if m["role"] == "user"] for s in read_sessions(sessions_dir)]
    assert ("system" in written, actual) == (True, [["task a"], ["task b"]])


def test_read_sessions_rejects_a_directory_without_sessions(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no \*\.json session"):
        read_sessions(tmp_path)


def test_concatenation_keeps_the_first_system_prompt_and_renames_ids_per_pass(sessions_dir):
    actual = concatenated_session(100, read_sessions(sessions_dir))
    roles = [m["role"] for m in actual]
    ids = [call["id"] for m in actual for call in m.get("tool_calls") or []]
    assert (
        roles.count("system"),
        [m["content"] for m in actual if m["role"] == "user"][:4],
        ids[:5],
        len(ids) == len(set(ids)),
        find_violations(Context.from_openai(actual)),
    ) == (
        1,
        ["task a", "task b", "task a", "task b"],
        ["s0p0-c1", "s0p0-c2", "s1p0-c1", "s0p1-c1", "s0p1-c2"],
        True,
        [],
    )


@pytest.mark.parametrize("size", range(2, 20))
def test_concatenation_is_valid_and_at_most_the_size_asked(sessions_dir, size):
    actual = concatenated_session(size, read_sessions(sessions_dir))
    assert (len(actual) <= size, find_violations(Context.from_openai(actual))) == (True, [])


def test_a_cut_inside_a_parallel_round_drops_that_round(sessions_dir):
    # a.json: system, task, assistant with 2 calls, 2 results: a cut at 4 answers one call
    actual = [m["role"] for m in concatenated_session(4, read_sessions(sessions_dir))]
    assert actual == ["system", "user"]


def test_concatenation_is_deterministic_and_reaches_the_size_of_long_workloads(sessions_dir):
    first = concatenated_session(1_000, read_sessions(sessions_dir))
    again = concatenated_session(1_000, read_sessions(sessions_dir))
    assert (first == again, 990 <= len(first) <= 1_000) == (True, True)


def test_one_pass_holds_each_session_once(sessions_dir):
    actual = concatenated_session(1_000, read_sessions(sessions_dir), passes=1)
    assert [m["content"] for m in actual if m["role"] == "user"] == ["task a", "task b"]


def test_concatenation_rejects_sessions_of_system_prompts_only():
    with pytest.raises(ValueError, match="system prompts"):
        concatenated_session(10, [[{"role": "system", "content": "s"}]])


def test_concatenation_rejects_fewer_than_two_messages():
    with pytest.raises(ValueError, match="at least 2 messages, got 1"):
        concatenated_session(1, [generate_session(10, seed=1)])
