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
  ``OBSERVATION:``, SWE-agent's ``bash-$`` prompt, mini-swe-agent's format
  errors and the output of its submit command …) and not an earlier summary;
- **modified paths**: files written by a tool call (edit/write/create/patch
  tools by their ``path`` argument, ``str_replace_editor`` commands) or by a
  shell command (``sed -i``, ``> file``, ``tee``, ``cp``/``mv`` targets,
  ``open(..., 'w')`` in inline Python, ``git apply``/``patch`` diff headers),
  and by text-protocol edits (SWE-agent ``create``/``edit``, aider
  SEARCH/REPLACE blocks); a ``>`` inside quotes is not a redirection;
- **failures**: commands whose output shows a failure (a non-zero return or
  exit code, a traceback, an ``is_error`` flag), each with its evidence line
  (the exception line of the last traceback, else the first error line, else
  the last line of the output). An output with no line at all has no evidence:
  only its exit code, which :mod:`._retention` looks for next to the command;
- **last error**: the evidence line (or exit code) of the last failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from forge_app.evaluation._shell_writes import DIFF_TARGET, shell_targets
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
    "please always provide exactly one action",  # mini-swe-agent's format error
)
_SWE_AGENT_PROMPT = re.compile(r"\(Current directory: [^)\n]*\)\s*bash-\$\s*$")
_SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
"""Commands of mini-swe-agent's submit step: the next user message is their output."""
_SUMMARY_MARKERS = ("authoritative record of earlier work", "[summary of")
_FENCE_LINE = re.compile(r"^(`{3,})[ \t]*([\w-]*)[ \t]*$")
_SHELL_FENCES = frozenset({"bash", "sh", "shell"})
_RETURN = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|exit code[: ]+(-?\d+)", re.I)
_TRACEBACK = "Traceback (most recent call last)"
_ERROR_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception)\b.*|ERROR\b.*|error:.*|FAILED\b.*|E\s{3}.+)$",
    re.M,
)
_EDIT_TOOL = re.compile(r"edit|write|create|replace|insert|patch|update_file|save", re.I)
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file")
_SWE_CREATE = re.compile(r"^create\s+(\S+)", re.M)
_SWE_EDIT = re.compile(r"^edit\s+\d+:\d+", re.M)
_SWE_OPEN_FILE = re.compile(r"\(Open file: ([^)]+)\)")
_AIDER_BLOCK = re.compile(r"^([^\s`][^\n`]*\.[\w]+)\n```[^\n]*\n<<<<<<< SEARCH", re.M)
_DEV_NULL = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_REFUSED = re.compile(r"\s*<tool_use_error>(.*?)(?:</tool_use_error>)?\s*", re.S)
"""Claude Code's refused call (a missing file, a sibling call that failed): its error flag,
kept in the text when a log is converted to chat messages."""
_MARKUP = re.compile(r"</?(?:returncode|output)>(?:\s*-?\d+\s*</returncode>)?")
_PATH_LIKE = re.compile(r"[\w@%+=,./~-]+")


@dataclass(frozen=True, slots=True)
class Failure:
    """A command that failed, the line that shows it, and the exit code it reported."""

    command: str
    evidence: str | None
    """The output's line that shows the failure; None when the output has no line."""
    exit_code: int | None = None
    """The non-zero exit code the output reported, if any."""
    output_chars: int = 0
    """The length of the output (how far from the command its evidence can be)."""

    @property
    def shown(self) -> str:
        """What shows the failure: the evidence line, else ``exit code N`` (else ``failed``)."""
        if self.evidence is not None:
            return self.evidence
        return f"exit code {self.exit_code}" if self.exit_code is not None else "failed"


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the model needs to continue, as found in the original transcript."""

    task: str | None
    asks: tuple[str, ...]
    modified_paths: tuple[str, ...]
    failures: tuple[Failure, ...]

    @property
    def last_error(self) -> Failure | None:
        """The last failure (its evidence line, or its exit code when it has none)."""
        return self.failures[-1] if self.failures else None


def _is_observation(text: str) -> bool:
    head = text.lstrip()[:200].lower()
    return (
        head.startswith(_OBSERVATION_STARTS)
        or "<returncode>" in head
        or _SWE_AGENT_PROMPT.search(text[-300:]) is not None
    )


def _is_summary(text: str) -> bool:
    head = text[:300].lower()
    return any(marker in head for marker in _SUMMARY_MARKERS)


def _shell_blocks(text: str) -> list[str]:
    """The bodies of the fenced shell blocks of ``text``: its ```` ```bash ```` (``sh``,
    ``shell``) blocks, else its bare fences of three backticks (SWE-agent writes its
    commands so; an agent that tags its commands quotes output in bare fences).

    Fences are read line by line: a fence closes only on a bare line of at least as many
    backticks, so a block never spans the end of one fence and the start of the next.
    """
    tagged: list[str] = []
    bare: list[str] = []
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for line in text.splitlines():
        fence = _FENCE_LINE.match(line.strip())
        if opened is None:
            if fence is not None:
                opened, body = (len(fence.group(1)), fence.group(2).lower()), []
        elif fence is not None and not fence.group(2) and len(fence.group(1)) >= opened[0]:
            width, language = opened
            if language in _SHELL_FENCES:
                tagged.append("\n".join(body))
            elif not language and width == 3:
                bare.append("\n".join(body))
            opened = None
        else:
            body.append(line)
    return tagged or bare


def _content_lines(output: str) -> list[str]:
    """Non-empty lines, without the ``<returncode>``/``<output>`` markup of mini-swe-agent."""
    return [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not _MARKUP.fullmatch(line.strip())
    ]


def _exception_line(traceback: str) -> str | None:
    """The exception line of a Python traceback: the first line after its frames that is
    not indented (frames and their source lines are)."""
    lines = [line for line in traceback.splitlines() if line.strip()]
    framed = False
    for line in lines:
        if line.startswith((" ", "\t")):
            framed = framed or line.lstrip().startswith('File "')
            continue
        if framed and not _MARKUP.fullmatch(line.strip()):
            return line.strip()
    return None


def _evidence(output: str) -> tuple[bool, str | None, int | None]:
    """Whether ``output`` shows a failure, the line that shows it, and its exit code."""
    code = _RETURN.search(output)
    number = int(code.group(1) or code.group(2)) if code is not None else None
    failed_code = number is not None and number != 0
    lines = _content_lines(output)
    if _TRACEBACK in output:
        after = output.split(_TRACEBACK)[-1]
        errors = _ERROR_LINE.findall(after)
        exception = _exception_line(after)
        tail = _content_lines(after)
        if exception is not None:
            return True, exception, number if failed_code else None
        return True, errors[-1].strip() if errors else (tail[-1] if tail else None), number
    if failed_code:
        errors = _ERROR_LINE.findall(output)
        return True, errors[0].strip() if errors else (lines[-1] if lines else None), number
    return False, None, None


def _path_argument(arguments: dict[str, object]) -> str | None:
    """The file a call names in its arguments (the first of :data:`_PATH_KEYS` given)."""
    return next((v for k in _PATH_KEYS if isinstance(v := arguments.get(k), str)), None)


def _tool_targets(name: str, arguments: object) -> Iterator[str]:
    if not isinstance(arguments, dict):
        return
    command = arguments.get("command") or arguments.get("cmd")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    sub = str(command) if command is not None else ""
    path = _path_argument(arguments)
    if "str_replace_editor" in name or name in {"edit_file", "str_replace_based_edit_tool"}:
        if sub in {"create", "str_replace", "insert", "undo_edit"} and path:
            yield path
        return
    if _EDIT_TOOL.search(name) and path:
        yield path
    patch = arguments.get("patch") or arguments.get("input") or arguments.get("diff")
    if isinstance(patch, str):
        yield from re.findall(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", patch, re.M)
        yield from DIFF_TARGET.findall(patch)
    if isinstance(command, str) and sub not in {"create", "str_replace", "view", "insert"}:
        yield from shell_targets(command)


def _text_protocol_targets(text: str, open_file: str | None) -> Iterator[str]:
    for block in _shell_blocks(text):
        yield from shell_targets(block)
        yield from _SWE_CREATE.findall(block)
        if open_file and _SWE_EDIT.search(block):
            yield open_file
    yield from _AIDER_BLOCK.findall(text)


def _arguments(call: ToolCall) -> object:
    """The call's arguments, parsed; None when they are not JSON (or nest too deeply)."""
    try:
        return json.loads(call.arguments)
    except (ValueError, RecursionError):
        return None


def _command_of(call: ToolCall) -> str:
    """What a call ran: its ``command`` argument, else the file it acted on, else its first
    string argument (what a context shows of the call, and a summary line names), else its
    name and arguments."""
    arguments = _arguments(call)
    if not isinstance(arguments, dict):
        return f"{call.name} {call.arguments}"
    command = arguments.get("command")
    if command:
        return str(command)
    first = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), None)
    return _path_argument(arguments) or first or f"{call.name} {call.arguments}"


def _commands_of(message: TextMessage) -> list[str]:
    """Commands an assistant message ran: its tool calls, else its fenced shell blocks."""
    if message.tool_calls:
        return [_command_of(call) for call in message.tool_calls]
    return [block.strip() for block in _shell_blocks(message.text)]


def _clean(path: str) -> str | None:
    """``path`` if it looks like a file path (has a dot or a slash, no shell syntax)."""
    path = path.strip().strip("'\"")
    if path in _DEV_NULL or path.startswith(("$", "-", "=")) or not _PATH_LIKE.fullmatch(path):
        return None
    has_name = any(char not in "./~" for char in path)
    return path if has_name and ("." in path or "/" in path) else None


def _failure(command: str, output: str, flagged: bool) -> Failure | None:
    """The failure ``output`` shows for ``command`` (``flagged``: the result says error)."""
    failed, evidence, code = _evidence(output)
    refused = _REFUSED.fullmatch(output)
    if not failed and (flagged or refused is not None):
        lines = _content_lines(output if refused is None else refused.group(1))
        failed, evidence = True, lines[-1] if lines else None
    if not failed:
        return None
    return Failure(command, evidence, code, len(output))


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
            failure = _failure(command, message.text, message.is_error)
            if failure is not None:
                failures.append(failure)
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
            submitted = any(m in c for c in last_commands[-1:] for m in _SUBMIT_MARKERS)
            if _is_observation(text) or submitted:
                found = _SWE_OPEN_FILE.findall(text)
                open_file = found[-1] if found else open_file
                failure = _failure(last_commands[-1], text, False) if last_commands else None
                if failure is not None:
                    failures.append(failure)
            elif text.strip() and text not in asks:
                asks.append(text)
            last_commands = []
    cleaned = [p for p in (_clean(path) for path in paths) if p is not None]
    return SessionFacts(
        task=task,
        asks=tuple(asks),
        modified_paths=tuple(dict.fromkeys(cleaned)),
        failures=tuple(failures),
    )
