"""Convert public third-party agent trajectories into OpenAI chat-completions message lists.

Reproduces every ``*.json`` beside this file from the git snapshots named in ``SOURCES``
(repository, commit or ref, path). Plain stdlib: it reads each source file with
``git --git-dir=<mirror>/<owner>+<name>/repo show <commit>:<path>`` and writes one JSON
list of messages per session, then checks each list against the rules the project's
validator enforces (``forge-compact validate``).

    python benchmarks/sessions/convert.py [--mirrors DIR] [--out DIR] [--table]

``--mirrors`` is the folder holding one bare clone per repository as ``owner+name/repo``
(default ``/work/.mirror``); any bare clone at the listed commit works. ``--table`` prints
the Markdown table of SOURCES.md.

Conversion rules, common to every format:

* Only ``role``, ``content``, ``tool_calls`` (``id``, ``type``, ``function.name``,
  ``function.arguments`` as a JSON string) and ``tool_call_id`` are written; every other
  key (costs, timestamps, raw provider responses, agent bookkeeping) is dropped.
* Text is never rewritten. Where a format stores one model turn in several records
  (Claude Code content blocks) the pieces are joined; where it holds things the model
  never saw (console lines of aider) they are dropped. Each such step is counted in the
  session's ``notes``.
* Text-protocol agents (the model writes commands in its text, the harness answers with a
  user message) stay text-protocol: observations remain ``user`` messages, as the model
  received them. Agents with native tool calling keep ``tool_calls`` and ``tool`` results.

Formats (``kind`` in ``SOURCES``):

``msa_text``
    mini-swe-agent 1.x ``.traj.json``: ``messages`` already in chat format (bash blocks in
    assistant text, observations as user messages); the ``extra`` key is dropped.
``msa_toolcall``
    mini-swe-agent 2.x ``.traj.json`` with native tool calls. The final ``exit`` message
    (the submitted patch, which is the output of the last ``bash`` call) becomes the tool
    result of that call when the call has none.
``sweagent_history``
    SWE-agent ``.traj``: the ``history`` list (what the model was sent), keeping
    ``role``/``content``; ``agent``, ``thought``, ``action`` and ``is_demo`` are dropped
    (thought and action are already part of the assistant content).
``claude_code``
    Claude Code session JSONL. Records of one API message (same ``message.id``) are merged:
    ``text`` blocks joined by a blank line, ``tool_use`` blocks become ``tool_calls``
    (``input`` serialised as JSON), ``thinking`` blocks dropped. ``tool_result`` blocks become
    ``tool`` messages right after their call (a list of text parts is joined with newlines);
    other user content becomes a user message. Side-chain (sub-agent) records are skipped,
    except in a sub-agent's own file (``select="sidechain"``), where every record is one.
``openhands_llm_log``
    OpenHands agent-sdk completion log with prompt-based ("non function calling") tool use:
    the ``messages`` sent, then the model's raw reply (``raw_response``) as the last
    assistant turn.
``aider_md``
    ``.aider.chat.history.md``: one session (from its ``# aider chat started at`` header to
    the next). ``#### `` lines are what the user typed (prefix and aider's two trailing
    markdown spaces removed), ``> `` lines are aider's console output and are dropped, every
    other line is the model's reply. Blank lines at the edges of a message are trimmed.
    User lines that are aider commands (``/undo``, ``/clear``, ``/ask``, ``/add`` ...) are
    dropped: aider acts on them and sends the model none of them (``/ask`` is followed by its
    question as a separate line, which is kept). The log holds neither aider's system prompt
    nor the file contents it adds to each request, and ``/clear`` reset the model's history:
    the session is the user-visible dialogue, not one exact model context.
``codex_rollout``
    Codex CLI rollout JSONL (``~/.codex/sessions``): the ``response_item`` records, which are
    the Responses API items the model was sent. ``session_meta.base_instructions`` becomes the
    system message and ``developer`` messages become system messages (both come before the
    first user item); the text parts of a message are joined by a blank line. An assistant
    message and the ``function_call`` items that follow it (one model response, until a
    result or a ``reasoning`` item) form one assistant turn; ``function_call_output`` becomes
    a ``tool`` message. ``custom_tool_call`` (freeform ``apply_patch``) becomes a tool call
    whose arguments are ``{"input": <the patch>}`` as JSON. ``reasoning`` items (encrypted)
    and hosted ``web_search_call`` items (no output item in the rollout) are dropped, as are
    ``event_msg``/``turn_context`` records (UI events and settings that duplicate the items).
``gemini_cli``
    Gemini CLI chat file (``~/.gemini/tmp/<hash>/chats/session-*.json``): ``user`` messages
    and ``gemini`` replies; each reply's ``toolCalls`` become ``tool_calls`` (``args``
    serialised as JSON) followed by one ``tool`` message per call, holding the
    ``functionResponse.response`` sent back to the model (its ``output`` text when that is
    the only key, else the object as JSON). ``thoughts`` are dropped. No system prompt is
    recorded.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

Message = dict[str, Any]


@dataclass(frozen=True)
class Source:
    """One session to produce: where its source lives and how to read it."""

    name: str
    repo: str
    commit: str
    path: str
    kind: str
    licence: str
    agent: str
    model: str
    task: str
    select: str = ""  # aider: the session's start stamp; claude_code: "sidechain"


SOURCES: tuple[Source, ...] = (
    Source(
        name="msa-gemini3pro-sphinx-9229",
        repo="gruckion/mini-swe-agent",
        commit="d12a71affd95403b036b2bdbd827349b77bfffb9",
        path="swebench_results/20251118_gemini-3-pro-74pct/trajs/sphinx-doc__sphinx-9229/"
        "sphinx-doc__sphinx-9229.traj.json",
        kind="msa_text",
        licence="MIT",
        agent="mini-swe-agent 1.15.0 (bash-only, text protocol)",
        model="gemini-3-pro-preview",
        task="SWE-bench Verified sphinx-doc__sphinx-9229",
    ),
    Source(
        name="msa-gemini3pro-xarray-3151",
        repo="gruckion/mini-swe-agent",
        commit="d12a71affd95403b036b2bdbd827349b77bfffb9",
        path="swebench_results/20251118_gemini-3-pro-74pct/trajs/pydata__xarray-3151/"
        "pydata__xarray-3151.traj.json",
        kind="msa_text",
        licence="MIT",
        agent="mini-swe-agent 1.15.0 (bash-only, text protocol)",
        model="gemini-3-pro-preview",
        task="SWE-bench Verified pydata__xarray-3151",
    ),
    Source(
        name="msa-gemini3pro-pytest-6197",
        repo="gruckion/mini-swe-agent",
        commit="d12a71affd95403b036b2bdbd827349b77bfffb9",
        path="swebench_results/20251118_gemini-3-pro-74pct/trajs/pytest-dev__pytest-6197/"
        "pytest-dev__pytest-6197.traj.json",
        kind="msa_text",
        licence="MIT",
        agent="mini-swe-agent 1.15.0 (bash-only, text protocol)",
        model="gemini-3-pro-preview",
        task="SWE-bench Verified pytest-dev__pytest-6197",
    ),
    Source(
        name="msa2-deepseek-v4-astropy-12907",
        repo="SWE-agent/mini-swe-agent",
        commit="9672e6b73735e63c59aa91cf830a8db857752c49",
        path="eval/example_trajectories/astropy__astropy-12907.traj.json",
        kind="msa_toolcall",
        licence="MIT",
        agent="mini-swe-agent 2.3.0 (native tool calling)",
        model="deepseek-v4-flash (response.model; config deepseek/deepseek-chat)",
        task="SWE-bench Verified astropy__astropy-12907",
    ),
    Source(
        name="sweagent-gpt4-pydicom-1458",
        repo="SWE-agent/SWE-agent",
        commit="3ea751c087f32b16e039a2233dd6eefecef325d5",
        path="tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__"
        "t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
        kind="sweagent_history",
        licence="MIT",
        agent="SWE-agent 0.x (ACI commands, text protocol)",
        model="gpt-4-1106-preview (run-name shortcut gpt4, SWE-agent 0.7 models.py)",
        task="SWE-bench dev pydicom__pydicom-1458",
    ),
    Source(
        name="claudecode-opus45-py2rust",
        repo="DRMacIver/claude-reliability",
        commit="4e49f16a86de76d9b0dc3ea2b8526677abe89f52",
        path="snapshot-tests/tests/python-to-rust-port/transcript.jsonl",
        kind="claude_code",
        licence="MIT (README and Cargo.toml; no LICENSE file)",
        agent="Claude Code 2.1.14 (native tool use)",
        model="claude-opus-4-5-20251101",
        task="port a small Python package to Rust with 100% coverage",
    ),
    Source(
        name="claudecode-opus45-coverage-fix",
        repo="DRMacIver/claude-reliability",
        commit="4e49f16a86de76d9b0dc3ea2b8526677abe89f52",
        path="snapshot-tests/tests/coverage-test-fix/transcript.jsonl",
        kind="claude_code",
        licence="MIT (README and Cargo.toml; no LICENSE file)",
        agent="Claude Code (native tool use)",
        model="claude-opus-4-5-20251101",
        task="add multiply_numbers() with a test; a stop hook then demands a clean git tree",
    ),
    Source(
        name="openhands-sdk-deepseek-nonfncall-hello",
        repo="OpenHands/software-agent-sdk",
        commit="611629e6999ad398dc49c761721eefe18d5e6bd9",
        path="tests/fixtures/llm_data/nonfncall-llm-logs/"
        "litellm_proxy__deepseek__deepseek-chat-1757015076.651.json",
        kind="openhands_llm_log",
        licence="MIT",
        agent="OpenHands agent-sdk (prompt-based tool calls, text protocol)",
        model="litellm_proxy/deepseek/deepseek-chat",
        task="create hello.py printing Hello, World!",
    ),
    Source(
        name="aider-sonnet35-blame-chart",
        repo="Aider-AI/aider",
        commit="5dc9490bb35f9729ef2c95d00a19ccd30c26339c",
        path="tests/fixtures/chat-history.md",
        kind="aider_md",
        licence="Apache-2.0",
        agent="aider v0.50.1-dev (diff edit format, no tools)",
        model="claude-3-5-sonnet-20240620",
        task="aider's own website: rework the blame chart (developer session)",
        select="2024-08-13 13:42:45",
    ),
    Source(
        name="codex-gpt55-compaction-config",
        repo="codemie-ai/codemie-code",
        commit="8e8d4ce5ad2dfae14cb26caf5d3cddebee929990",
        path="src/agents/plugins/codex/__tests__/fixtures/"
        "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        kind="codex_rollout",
        licence="Apache-2.0",
        agent="Codex CLI 0.125.0 (codex-tui, native tool calls, Responses API)",
        model="gpt-5.5 (turn_context.model)",
        task="codemie-code: show the tools, then set the default context compaction to 90%",
    ),
    Source(
        name="geminicli-gemini3pro-explore-hello",
        repo="codemie-ai/codemie-code",
        commit="8e8d4ce5ad2dfae14cb26caf5d3cddebee929990",
        path="tests/integration/metrics/fixtures/gemini/"
        "session-2026-01-16T11-01-file-ops-37b7abef.json",
        kind="gemini_cli",
        licence="Apache-2.0",
        agent="Gemini CLI (native function calling)",
        model="gemini-3-pro",
        task="show tools; explore a repository for adaptability and security issues; edit hello.md",
    ),
    Source(
        name="claudecode-opus46-spotter-a0y",
        repo="marot/spotter",
        commit="8cc42b0bd39d04e71e509d7d58e6782ab435329f",
        path="test/fixtures/transcripts/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
        kind="claude_code",
        licence="MIT",
        agent="Claude Code 2.1.39 (native tool use)",
        model="claude-opus-4-6",
        task="spotter (Elixir/Phoenix) bead spotter-a0y: implement its subtasks",
    ),
    Source(
        name="claudecode-sonnet45-subagent-dov",
        repo="marot/spotter",
        commit="8cc42b0bd39d04e71e509d7d58e6782ab435329f",
        path="test/fixtures/transcripts/4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
        "agent-a2898e3.jsonl",
        kind="claude_code",
        licence="MIT",
        agent="Claude Code 2.1.39 sub-agent (Task tool, native tool use)",
        model="claude-sonnet-4-5-20250929",
        task="spotter: Explore sub-agent, study how two LiveViews render transcripts",
        select="sidechain",
    ),
    Source(
        name="claudecode-haiku45-subagent-0rt",
        repo="marot/spotter",
        commit="8cc42b0bd39d04e71e509d7d58e6782ab435329f",
        path="test/fixtures/transcripts/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/"
        "agent-afc096d.jsonl",
        kind="claude_code",
        licence="MIT",
        agent="Claude Code 2.1.39 sub-agent (Task tool, native tool use)",
        model="claude-haiku-4-5-20251001",
        task="spotter: Explore sub-agent, map an Elixir/Phoenix project's structure",
        select="sidechain",
    ),
)


def git_show(mirrors: Path, source: Source) -> str:
    """Return the text of ``source.path`` at ``source.commit`` from the bare clone."""
    git_dir = mirrors / source.repo.replace("/", "+") / "repo"
    result = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{source.commit}:{source.path}"],
        check=True,
        capture_output=True,
    )
    return result.stdout.decode("utf-8")


def tool_call(call_id: str, name: str, arguments: str) -> Message:
    """One OpenAI tool call."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def convert_msa_text(text: str, notes: Counter[str]) -> list[Message]:
    """mini-swe-agent 1.x: keep role and content of each message."""
    out = []
    for message in json.loads(text)["messages"]:
        if "extra" in message:
            notes["extra_dropped"] += 1
        out.append({"role": message["role"], "content": message["content"]})
    return out


def convert_msa_toolcall(text: str, notes: Counter[str]) -> list[Message]:
    """mini-swe-agent 2.x with native tool calls; ``exit`` answers an open last call."""
    out: list[Message] = []
    open_calls: list[str] = []
    for message in json.loads(text)["messages"]:
        role = message["role"]
        if role == "exit":
            if open_calls:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": open_calls.pop(0),
                        "content": message["content"],
                    }
                )
                notes["exit_mapped_to_final_tool_result"] += 1
            else:
                notes["exit_message_dropped"] += 1
            continue
        if role == "tool":
            open_calls.remove(message["tool_call_id"])
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message["tool_call_id"],
                    "content": message["content"],
                }
            )
            continue
        converted: Message = {"role": role, "content": message.get("content")}
        if message.get("reasoning_content"):
            notes["reasoning_content_dropped"] += 1
        calls = message.get("tool_calls") or []
        if calls:
            converted["tool_calls"] = [
                tool_call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls
            ]
            open_calls = [c["id"] for c in calls]
        out.append(converted)
    return out


def convert_sweagent_history(text: str, notes: Counter[str]) -> list[Message]:
    """SWE-agent: the ``history`` the model was sent, role and content only."""
    out = []
    for entry in json.loads(text)["history"]:
        if entry.get("is_demo"):
            notes["demonstration_kept_as_user_message"] += 1
        out.append({"role": entry["role"], "content": entry["content"]})
    return out


def _tool_result_text(block: dict[str, Any], notes: Counter[str]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if part.get("type") == "text":
            parts.append(part["text"])
        else:
            notes[f"tool_result_{part.get('type')}_part_dropped"] += 1
    if len(parts) > 1:
        notes["tool_result_text_parts_joined"] += 1
    return "\n".join(parts)


def convert_claude_code(text: str, select: str, notes: Counter[str]) -> list[Message]:
    """Claude Code JSONL: merge each API message's blocks, pair tool results with calls."""
    out: list[Message] = []
    current: Message | None = None
    current_id = None
    texts: list[str] = []
    results: list[Message] = []

    def flush() -> None:
        nonlocal current, current_id, texts, results
        if current is not None:
            current["content"] = "\n\n".join(texts)
            if len(texts) > 1:
                notes["assistant_text_blocks_joined"] += 1
            out.append(current)
            out.extend(results)
        current, current_id, texts, results = None, None, [], []

    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record.get("type") not in ("user", "assistant"):
            notes[f"record_{record.get('type')}_skipped"] += 1
            continue
        if record.get("isSidechain") and select != "sidechain":
            notes["sidechain_record_skipped"] += 1
            continue
        message = record["message"]
        content = message["content"]
        if record["type"] == "assistant":
            if current is None or message.get("id") != current_id:
                flush()
                current, current_id = {"role": "assistant", "content": ""}, message.get("id")
            for block in content:
                if block["type"] == "text":
                    texts.append(block["text"])
                elif block["type"] == "tool_use":
                    arguments = json.dumps(block["input"], ensure_ascii=False)
                    current.setdefault("tool_calls", []).append(
                        tool_call(block["id"], block["name"], arguments)
                    )
                else:
                    notes[f"assistant_{block['type']}_block_dropped"] += 1
            continue
        if isinstance(content, str):
            flush()
            out.append({"role": "user", "content": content})
            continue
        user_texts = []
        for block in content:
            if block["type"] == "tool_result":
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": block["tool_use_id"],
                        "content": _tool_result_text(block, notes),
                    }
                )
                if block.get("is_error"):
                    notes["tool_result_is_error_flag_dropped"] += 1
            elif block["type"] == "text":
                user_texts.append(block["text"])
            else:
                notes[f"user_{block['type']}_block_dropped"] += 1
        if user_texts:
            flush()
            out.append({"role": "user", "content": "\n\n".join(user_texts)})
    flush()
    return out


def convert_openhands_llm_log(text: str, notes: Counter[str]) -> list[Message]:
    """OpenHands agent-sdk completion log: the prompt's messages plus the raw reply."""
    log = json.loads(text)
    out = [{"role": m["role"], "content": m["content"]} for m in log["messages"]]
    reply = log["raw_response"]["choices"][0]["message"]["content"]
    out.append({"role": "assistant", "content": reply})
    notes["final_raw_reply_appended"] += 1
    return out


def _joined_text(parts: list[dict[str, Any]], notes: Counter[str]) -> str:
    texts = [part["text"] for part in parts if "text" in part]
    if len(texts) < len(parts):
        notes["non_text_parts_dropped"] += len(parts) - len(texts)
    if len(texts) > 1:
        notes["text_parts_joined"] += 1
    return "\n\n".join(texts)


def convert_codex_rollout(text: str, notes: Counter[str]) -> list[Message]:
    """Codex CLI rollout: the Responses API items, one assistant turn per model response."""
    out: list[Message] = []
    turn: Message | None = None  # the assistant message new calls join, until a result
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        payload = record.get("payload") or {}
        if record["type"] == "session_meta":
            instructions = (payload.get("base_instructions") or {}).get("text")
            if instructions:
                out.append({"role": "system", "content": instructions})
            continue
        if record["type"] != "response_item":
            notes[f"record_{record['type']}_skipped"] += 1
            continue
        kind = payload["type"]
        if kind == "message":
            role = {"developer": "system"}.get(payload["role"], payload["role"])
            content = _joined_text(payload["content"], notes)
            turn = {"role": role, "content": content}
            out.append(turn)
            if role != "assistant":
                turn = None
        elif kind in ("function_call", "custom_tool_call"):
            if kind == "function_call":
                arguments = payload["arguments"]
            else:
                arguments = json.dumps({"input": payload["input"]}, ensure_ascii=False)
                notes["custom_tool_input_wrapped_as_json"] += 1
            if turn is None:
                turn = {"role": "assistant", "content": ""}
                out.append(turn)
            turn.setdefault("tool_calls", []).append(
                tool_call(payload["call_id"], payload["name"], arguments)
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = payload["output"]
            if not isinstance(output, str):
                output = json.dumps(output, ensure_ascii=False)
                notes["structured_output_serialised"] += 1
            out.append({"role": "tool", "tool_call_id": payload["call_id"], "content": output})
            turn = None
        elif kind == "reasoning":
            notes["reasoning_item_dropped"] += 1
            turn = None
        else:
            notes[f"{kind}_item_dropped"] += 1
    return out


def convert_gemini_cli(text: str, notes: Counter[str]) -> list[Message]:
    """Gemini CLI chat file: user messages, replies with their tool calls and results."""
    out: list[Message] = []
    for message in json.loads(text)["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = _joined_text(content, notes)
        if message["type"] == "user":
            out.append({"role": "user", "content": content})
            continue
        if message["type"] != "gemini":
            notes[f"message_{message['type']}_skipped"] += 1
            continue
        if message.get("thoughts"):
            notes["thoughts_dropped"] += 1
        converted: Message = {"role": "assistant", "content": content}
        calls = message.get("toolCalls") or []
        if calls:
            converted["tool_calls"] = [
                tool_call(c["id"], c["name"], json.dumps(c["args"], ensure_ascii=False))
                for c in calls
            ]
        out.append(converted)
        for call in calls:
            (result,) = call["result"]
            response = result["functionResponse"]["response"]
            if set(response) == {"output"}:
                output = response["output"]
            else:
                output = json.dumps(response, ensure_ascii=False)
                notes["response_object_serialised"] += 1
            out.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return out


_USER = re.compile(r"^####(?: (.*?))?  $")
_CONSOLE = re.compile(r"^>.*  $")


def convert_aider_md(text: str, select: str, notes: Counter[str]) -> list[Message]:
    """One aider session from a chat-history file: user lines and model replies."""
    sessions = re.split(r"(?m)^# aider chat started at (.*)\n", text)
    body = next(sessions[i + 1] for i in range(1, len(sessions), 2) if sessions[i] == select)
    blocks: list[tuple[str, list[str]]] = []
    for line in body.split("\n"):
        user = _USER.match(line)
        if user:
            kind, value = "user", user.group(1) or ""
        elif _CONSOLE.match(line) or line == ">":
            notes["console_lines_dropped"] += 1
            blocks.append(("console", []))
            continue
        else:
            kind, value = "assistant", line
        if blocks and blocks[-1][0] == kind:
            blocks[-1][1].append(value)
        else:
            blocks.append((kind, [value]))
    out: list[Message] = []
    for kind, lines in blocks:
        content = "\n".join(lines).strip("\n")
        if kind == "console" or not content.strip():
            continue
        if kind == "user" and content.startswith("/"):
            notes["aider_commands_dropped"] += 1
            if content.split()[0] == "/clear":
                notes["clear_commands_dropped (model history was reset there)"] += 1
            continue
        if out and out[-1]["role"] == kind:
            notes[f"consecutive_{kind}_messages"] += 1
        out.append({"role": kind, "content": content})
    return out


def convert(source: Source, text: str) -> tuple[list[Message], Counter[str]]:
    """Dispatch on ``source.kind``."""
    notes: Counter[str] = Counter()
    if source.kind == "msa_text":
        messages = convert_msa_text(text, notes)
    elif source.kind == "msa_toolcall":
        messages = convert_msa_toolcall(text, notes)
    elif source.kind == "sweagent_history":
        messages = convert_sweagent_history(text, notes)
    elif source.kind == "claude_code":
        messages = convert_claude_code(text, source.select, notes)
    elif source.kind == "openhands_llm_log":
        messages = convert_openhands_llm_log(text, notes)
    elif source.kind == "aider_md":
        messages = convert_aider_md(text, source.select, notes)
    elif source.kind == "codex_rollout":
        messages = convert_codex_rollout(text, notes)
    elif source.kind == "gemini_cli":
        messages = convert_gemini_cli(text, notes)
    else:
        raise ValueError(f"unknown kind {source.kind!r}")
    return messages, notes


def problems(messages: list[Message]) -> list[str]:
    """The project's validity rules, restated: roles, tool pairing, no empty message."""
    found = []
    seen: set[str] = set()
    open_calls: set[str] = set()
    started = False
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                found.append(f"[{index}] orphan or duplicate tool result")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            found.append(f"[{index}] previous tool calls unanswered: {sorted(open_calls)}")
            open_calls = set()
        if role not in ("system", "user", "assistant"):
            found.append(f"[{index}] unknown role {role!r}")
        if role == "system" and started:
            found.append(f"[{index}] system message after the conversation started")
        started = started or role != "system"
        calls = message.get("tool_calls") or []
        for call in calls:
            if call["id"] in seen:
                found.append(f"[{index}] duplicate tool call id {call['id']}")
            seen.add(call["id"])
            open_calls.add(call["id"])
        content = message.get("content")
        if not calls and (not content or (isinstance(content, str) and not content.strip())):
            found.append(f"[{index}] empty {role} message")
    if open_calls:
        found.append(f"[end] tool calls unanswered: {sorted(open_calls)}")
    return found


def chars(messages: list[Message]) -> int:
    """Total length of contents, tool-call names and argument strings."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(part.get("text", "")) for part in content)
        for call in message.get("tool_calls") or []:
            total += len(call["function"]["name"]) + len(call["function"]["arguments"])
    return total


def main(argv: list[str] | None = None) -> int:
    """Convert every source; print a summary (or the SOURCES.md table); 1 if any is invalid."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument(
        "--out", type=Path, default=HERE.parents[2] / "shared" / "data" / "sessions-extra"
    )
    parser.add_argument("--table", action="store_true", help="print the SOURCES.md table")
    args = parser.parse_args(argv)
    failed = False
    rows = []
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(HERE / "SOURCES.md", args.out / "SOURCES.md")  # provenance beside the data
    for source in SOURCES:
        messages, notes = convert(source, git_show(args.mirrors, source))
        errors = problems(messages)
        failed = failed or bool(errors)
        target = args.out / f"{source.name}.json"
        data = json.dumps(messages, indent=1, ensure_ascii=False) + "\n"
        target.write_text(data, encoding="utf-8")
        roles = Counter(m["role"] for m in messages)
        calls = sum(len(m.get("tool_calls") or []) for m in messages)
        size = len(data.encode("utf-8"))
        session = f" (session {source.select})" if source.kind == "aider_md" else ""
        rows.append(
            f"| {target.name} | {len(messages)} | {calls} | {chars(messages)} | {size} "
            f"| {source.agent} | {source.model} | {source.task} | {source.repo} "
            f"| `{source.path}`{session} "
            f"| `{source.commit}` | {source.licence} |"
        )
        if not args.table:
            print(f"{target.name}: {len(messages)} messages {dict(roles)}, {calls} tool calls,")
            print(f"    {chars(messages)} chars, {size} bytes, notes {dict(notes) or 'none'}")
            for error in errors:
                print(f"    INVALID {error}")
    if args.table:
        print(
            "| file | messages | tool calls | chars | bytes | agent | model | task "
            "| source repo | path | commit | licence |"
        )
        print("|" + "---|" * 12)
        print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
