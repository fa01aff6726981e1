"""The facts a model needs to continue a session, read from the original transcript.

Written independently of the summary builder and the tool catalog (its own
rules, its own regexes), so that a bug in one cannot hide in the other: `eval`
extracts these facts from the uncompacted transcript and checks that each one is
still in the final, compacted context.

Facts:

- **task**: the last user message before the first assistant message (agents
  such as SWE-agent put a demonstration before it);
- **asks**: every distinct later user message written by a person, that is,
  not an observation of a text-protocol agent (``<returncode>``, ``[File: …]``,
  ``OBSERVATION:`` …) and not an earlier summary;
- **modified paths**: files written by a tool call (edit/write/create/patch
  tools by their ``path`` argument, ``str_replace_editor`` commands) or by a
  shell command (``sed -i``, ``> file``, ``tee``, ``cp``/``mv`` targets,
  ``open(..., 'w')`` in inline Python, ``git apply``/``patch`` diff headers),
  and by text-protocol edits (SWE-agent ``create``/``edit``, aider
  SEARCH/REPLACE blocks);
- **failures**: commands whose output shows a failure (a non-zero return or
  exit code, a traceback, an ``is_error`` flag), each with its evidence line
  (the last line of the traceback or the first error line);
- **last error**: the evidence line of the last failure.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from forge_domain import Context, ContextMessage, Role, TextMessage, ToolCall, ToolResult

__all__ = ["Failure", "SessionFacts", "extract_facts"]

_OBSERVATION_STARTS = (
    "<returncode>",
    "<output>",
    "observation",
    "[file:",
    "execution result",
    "exit code",
    "here is the output",
    "(open file:",
    "your command ran successfully",
    "tool output",
)
_SUMMARY_MARKERS = ("authoritative record of earlier work", "[summary of")
_FENCE = re.compile(r"```(?:bash|sh|shell)?\n(.*?)```", re.S)
_RETURN = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|exit code[: ]+(-?\d+)", re.I)
_ERROR_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception)\b.*|ERROR\b.*|error:.*|FAILED\b.*|E\s{3}.+)$",
    re.M,
)
_EDIT_TOOL = re.compile(r"edit|write|create|replace|insert|patch|update_file|save", re.I)
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file")
_REDIRECT = re.compile(r"(?:^|[^<>&0-9])>>?\s*([^\s;&|<>]+)")
_SED_INPLACE = re.compile(r"\bsed\s+(?:-[a-zA-Z]*i[a-zA-Z]*\S*\s+)")
_PY_OPEN_W = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")
_DIFF_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)
_SWE_CREATE = re.compile(r"^create\s+(\S+)", re.M)
_SWE_EDIT = re.compile(r"^edit\s+\d+:\d+", re.M)
_SWE_OPEN_FILE = re.compile(r"\(Open file: ([^)]+)\)")
_AIDER_BLOCK = re.compile(r"^([^\s`][^\n`]*\.[\w]+)\n```[^\n]*\n<<<<<<< SEARCH", re.M)
_DEV_NULL = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_MARKUP = re.compile(r"</?(?:returncode|output)>(?:\s*-?\d+\s*</returncode>)?")
_PATH_LIKE = re.compile(r"[\w@%+=:,./~-]+")


@dataclass(frozen=True, slots=True)
class Failure:
    """A command that failed, and the line that shows it."""

    command: str
    evidence: str


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the model needs to continue, as found in the original transcript."""

    task: str | None
    asks: tuple[str, ...]
    modified_paths: tuple[str, ...]
    failures: tuple[Failure, ...]

    @property
    def last_error(self) -> str | None:
        """The evidence line of the last failure."""
        return self.failures[-1].evidence if self.failures else None


def _is_observation(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return head.startswith(_OBSERVATION_STARTS) or "<returncode>" in head


def _is_summary(text: str) -> bool:
    head = text[:300].lower()
    return any(marker in head for marker in _SUMMARY_MARKERS)


def _content_lines(output: str) -> list[str]:
    """Non-empty lines, without the ``<returncode>``/``<output>`` markup of mini-swe-agent."""
    return [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not _MARKUP.fullmatch(line.strip())
    ]


def _evidence(output: str) -> str | None:
    """The line that shows a failure, or None when the output shows none."""
    code = _RETURN.search(output)
    failed_code = code is not None and (code.group(1) or code.group(2) or "0") != "0"
    if "Traceback (most recent call last)" in output:
        after = output.split("Traceback (most recent call last)")[-1]
        errors = _ERROR_LINE.findall(after)
        lines = _content_lines(after)
        return errors[-1].strip() if errors else (lines[-1] if lines else "Traceback")
    if failed_code:
        errors = _ERROR_LINE.findall(output)
        lines = _content_lines(output)
        number = code.group(1) or code.group(2) if code is not None else None
        return errors[0].strip() if errors else (lines[-1] if lines else f"exit code {number}")
    return None


def _shell_targets(command: str) -> Iterator[str]:
    """Paths a shell command writes."""
    for match in _REDIRECT.finditer(command):
        yield match.group(1)
    for segment in re.split(r"&&|\|\|?|;|\n", command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            words = segment.split()
        if not words:
            continue
        program = words[0]
        rest = [w for w in words[1:] if not w.startswith("-")]
        if program == "sed" and _SED_INPLACE.search(segment) and rest:
            yield rest[-1]
        elif program == "tee" and rest:
            yield from rest
        elif program in {"cp", "mv"} and len(rest) >= 2:
            yield rest[-1]
            if program == "mv":
                yield from rest[:-1]
        elif program in {"touch", "rm"}:
            yield from rest
    for match in _PY_OPEN_W.finditer(command):
        yield match.group(1)
    if "git apply" in command or re.search(r"\bpatch\b", command):
        yield from _DIFF_TARGET.findall(command)


def _tool_targets(name: str, arguments: object) -> Iterator[str]:
    if not isinstance(arguments, dict):
        return
    command = arguments.get("command") or arguments.get("cmd")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    sub = str(command) if command is not None else ""
    path = next((arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)
    if "str_replace_editor" in name or name in {"edit_file", "str_replace_based_edit_tool"}:
        if sub in {"create", "str_replace", "insert", "undo_edit"} and path:
            yield path
        return
    if _EDIT_TOOL.search(name) and path:
        yield path
    patch = arguments.get("patch") or arguments.get("input") or arguments.get("diff")
    if isinstance(patch, str):
        yield from re.findall(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", patch, re.M)
        yield from _DIFF_TARGET.findall(patch)
    if isinstance(command, str) and sub not in {"create", "str_replace", "view", "insert"}:
        yield from _shell_targets(command)


def _text_protocol_targets(text: str, open_file: str | None) -> Iterator[str]:
    for block in _FENCE.findall(text):
        yield from _shell_targets(block)
        yield from _SWE_CREATE.findall(block)
        if open_file and _SWE_EDIT.search(block):
            yield open_file
    yield from _AIDER_BLOCK.findall(text)


def _arguments(call: ToolCall) -> object:
    try:
        return json.loads(call.arguments)
    except ValueError:
        return None


def _command_of(call: ToolCall) -> str:
    """What a call ran: its ``command`` argument, else its name and arguments."""
    arguments = _arguments(call)
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return str(command) if command else f"{call.name} {call.arguments}"


def _commands_of(message: TextMessage) -> list[str]:
    """Commands an assistant message ran: its tool calls, else its fenced shell blocks."""
    if message.tool_calls:
        return [_command_of(call) for call in message.tool_calls]
    return [block.strip() for block in _FENCE.findall(message.text)]


def _clean(path: str) -> str | None:
    """``path`` if it looks like a file path (has a dot or a slash, no shell syntax)."""
    path = path.strip().strip("'\"")
    if path in _DEV_NULL or path.startswith(("$", "-", "=")) or not _PATH_LIKE.fullmatch(path):
        return None
    return path if ("." in path or "/" in path) else None


def extract_facts(messages: Context | Sequence[ContextMessage]) -> SessionFacts:
    """The facts of ``messages`` (an uncompacted transcript)."""
    items = list(messages)
    first_assistant = next(
        (i for i, m in enumerate(items) if m.has_role(Role.ASSISTANT)), len(items)
    )
    head_users = [m for m in items[:first_assistant] if m.has_role(Role.USER)]
    task = head_users[-1].text if head_users else None
    asks: list[str] = []
    paths: list[str] = []
    failures: list[Failure] = []
    pending: dict[str, str] = {}
    last_commands: list[str] = []
    open_file: str | None = None
    for message in items[first_assistant:]:
        if isinstance(message, ToolResult):
            command = pending.get(message.call_id, message.name or "tool")
            evidence = _evidence(message.text)
            if evidence is None and message.is_error:
                lines = [line for line in message.text.splitlines() if line.strip()]
                evidence = lines[-1].strip() if lines else "failed"
            if evidence is not None:
                failures.append(Failure(command, evidence))
            continue
        text = message.text
        if message.has_role(Role.ASSISTANT):
            assert isinstance(message, TextMessage)
            last_commands = _commands_of(message)
            for call in message.tool_calls or ():
                paths.extend(_tool_targets(call.name, _arguments(call)))
                pending[call.id] = _command_of(call)
            if not message.tool_calls:
                paths.extend(_text_protocol_targets(text, open_file))
        elif message.has_role(Role.USER) and not _is_summary(text):
            if _is_observation(text):
                found = _SWE_OPEN_FILE.findall(text)
                open_file = found[-1] if found else open_file
                evidence = _evidence(text)
                if evidence is not None and last_commands:
                    failures.append(Failure(last_commands[-1], evidence))
            elif text.strip() and text not in asks:
                asks.append(text)
    cleaned = [p for p in (_clean(path) for path in paths) if p is not None]
    return SessionFacts(
        task=task,
        asks=tuple(asks),
        modified_paths=tuple(dict.fromkeys(cleaned)),
        failures=tuple(failures),
    )
