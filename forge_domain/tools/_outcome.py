"""How a tool call went, read from its output: failed, ok or unknown, and the evidence.

OpenAI-format transcripts carry no error flag, so the outcome of a call is read from
the text its tool printed. This module is the one definition of that reading; the
catalog (:meth:`ToolCatalog.outcome`), the summary frame, the pruning placeholders and
the model-written summary's coverage check all go through it.

* **failed** when the output says so: a non-zero exit code in the forms agents print,
  an editor's error prefix, a Python traceback (when no exit code is given);
* **ok** only when the output shows success: an exit code 0, or SWE-agent's
  ``Your command ran successfully``;
* **unknown** otherwise. A status that cannot be known is not printed.

:func:`failure_evidence` keeps a short excerpt of a failed output (the exception line
of a traceback, the failing tests, the first error line, the exit code), at most
:data:`EVIDENCE_CHARS` characters, so a summary can say why a call failed.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

__all__ = [
    "EARLIER_EVIDENCE",
    "EVIDENCE_CHARS",
    "EVIDENCE_RUNS",
    "EVIDENCE_SEPARATOR",
    "PRUNED_MARKER",
    "Outcome",
    "evidence_runs",
    "failure_evidence",
    "merged_evidence",
    "output_outcome",
    "output_reports_failure",
    "pruned_output",
    "shows_traceback",
]  # shows_error_line, output_shows_error: internal, for forge_app's span summary

Outcome: TypeAlias = Literal["failed", "ok", "unknown"]
"""How a call went: its output shows a failure, shows success, or says neither."""

EVIDENCE_CHARS = 200
"""Most characters of evidence kept for one failed call."""

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_CODE = re.compile(r"\[(?:Command finished|The command completed) with exit code (-?\d+)\.?\]")
_LEADING_EXIT_CODE = re.compile(r"Exit code (-?\d+)\s*(?:\n|$)")
_TRACEBACK = "Traceback (most recent call last)"
_TOOL_USE_ERROR = "<tool_use_error>"
_TOOL_USE_ERROR_END = "</tool_use_error>"
_ERROR_PREFIXES = (
    "ERROR:",
    "Ran into [Errno",
    "Invalid `",
    "Your proposed edit has introduced new syntax error",
    _TOOL_USE_ERROR,  # Claude Code
)
_SUCCESS_PREFIXES = ("Your command ran successfully",)

_NOISE = re.compile(
    r"</?[a-z_]+>"  # mini-swe-agent's <output>, <warning>, <output_head> … lines
    r"|<returncode>\s*-?\d+\s*</returncode>"
    r"|\[(?:Command finished|The command completed|Current working directory|Python interpreter)"
    r"[^\]]*\]"  # OpenHands' trailer
    r"|\((?:Open file|Current directory): [^)]*\)|bash-\$"  # SWE-agent's prompt
    r"|EXECUTION RESULT of \[[^\]]*\]:|Exit code -?\d+"
)
_ERRORISH = re.compile(
    r"error|exception|fail|fatal|not found|no such|cannot|can't|denied|invalid|unable"
    r"|refused|timed out|killed|abort|segmentation|^E\s{2,}",
    re.IGNORECASE,
)
_ERROR_LINE = re.compile(
    r"(?:^|: )(?:[Ee]rror|ERROR|[Ff]atal|FATAL|E)(?:\[\w+\])?: "  # Error: …, x: error: …
    r"|: (?:No such file or directory|command not found|Permission denied)$"
    r"|^g?make(?:\[\d+\])?: \*\*\* .* Error \d+$"  # make's failed target
)
_EDGE_CHARS = 400
"""How far into an output its first line, and back from its end its last line, are read."""
_NAMED_ERROR = re.compile(r"\b[A-Za-z_][\w.]*(?:Error|Exception)\b:")
_FAILED_TEST = re.compile(r"(?:FAILED|ERROR) \S+")
_ASSERTION = re.compile(r"E\s{2,}\S")
_EXCEPTION = re.compile(
    r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|Failure|Fault)\b.*"
    r"|[A-Za-z_][\w.]*: .+"
)
_FRAME = re.compile(r'^File "([^"]+)", line (\d+)(?:, in (\S+))?')
PRUNED_MARKER = "[tool output pruned:"
"""How the placeholder of a pruned output starts (:func:`pruned_output`)."""
_PRUNED = re.compile(
    r"\[tool output pruned: [^`\n]*?(?: `[^`\n]*`)?(?: \(same output as call [^)\n]*\))?"
    r"(?P<status> -> failed| -> ok)?(?:: (?P<evidence>.*)| \(error shown: (?P<shown>.*)\))?"
    r", [\d,]+ chars(?:, \d+ images?)?\]"
)
EVIDENCE_SEPARATOR = " | "
"""Between the parts of an evidence excerpt (the error line, where, the exit code)."""
EARLIER_EVIDENCE = "; earlier: "
"""Between the evidence of the last failure of a merged line and that of earlier ones."""
EVIDENCE_RUNS = 3
"""Most failures of one merged line whose evidence is kept (the last ones, newest first)."""


def _exit_code(output: str) -> int | None:
    """The exit code an output reports, or None (the forms of :func:`output_outcome`)."""
    if output.find("<returncode>", 0, 200) >= 0:
        code = _RETURNCODE.search(output[:200])
        if code is not None:
            return int(code.group(1))
    if output.find(" exit code ", -400) >= 0:
        codes = _EXIT_CODE.findall(output[-400:])
        if codes:
            return int(codes[-1])
    if output.startswith("Exit code "):
        leading = _LEADING_EXIT_CODE.match(output)
        if leading is not None:
            return int(leading.group(1))
    return None


def pruned_output(call: str, outcome: Outcome, evidence: str | None, size: str) -> str:
    """The one line that replaces a pruned output: the ``call`` (``bash `pytest -x```), how
    it went (nothing when ``unknown``), the ``evidence`` of an error, the output's ``size``.

    ``[tool output pruned: bash `pytest` -> failed: E   assert 1 == 2, 4,812 chars]``;
    :func:`output_outcome` and :func:`failure_evidence` read the outcome and the evidence
    back, so a summary of pruned outputs keeps them.
    """
    status = "" if outcome == "unknown" else f" -> {outcome}"
    if evidence is not None:
        status += f": {evidence}" if outcome == "failed" else f" (error shown: {evidence})"
    return f"{PRUNED_MARKER} {call}{status}, {size}]"


def _pruned(output: str) -> re.Match[str] | None:
    """The parts of a pruned output's placeholder, or None when ``output`` is not one."""
    return _PRUNED.fullmatch(output) if output.startswith(PRUNED_MARKER) else None


def output_outcome(output: str) -> Outcome:
    """How a call went, as its output text tells.

    Signals, strongest first (an explicit exit code decides on its own):

    1. mini-swe-agent's ``<returncode>N</returncode>`` at the start;
    2. OpenHands' ``[Command finished with exit code N]`` /
       ``[The command completed with exit code N.]`` at the end;
    3. Claude Code's ``Exit code N`` as the first line;
    4. failed: an output that starts with ``ERROR:``, ``Ran into [Errno``,
       ``Invalid ` `` (OpenHands' editor, v0 and SDK), SWE-agent's ``Your proposed
       edit has introduced new syntax error`` or Claude Code's ``<tool_use_error>`` (a
       refused call: a missing file, a file too large to read, a sibling call that
       failed; its ``is_error`` flag is lost when a log is converted to chat messages),
       or holds a Python traceback;
    5. ok: an output that starts with SWE-agent's ``Your command ran successfully``.

    Anything else is ``unknown``: no exit code, no error, no word of success. The
    placeholder of a pruned output (:func:`pruned_output`) says what it was.
    """
    pruned = _pruned(output)
    if pruned is not None:
        status = pruned.group("status")
        return "unknown" if status is None else "failed" if status == " -> failed" else "ok"
    code = _exit_code(output)
    if code is not None:
        return "ok" if code == 0 else "failed"
    head = output.lstrip() if output[:1].isspace() else output
    if head.startswith(_ERROR_PREFIXES) or _TRACEBACK in output:
        return "failed"
    if head.startswith(_SUCCESS_PREFIXES):
        return "ok"
    return "unknown"


def output_shows_error(output: str) -> bool:
    """Return True when :func:`output_outcome` reads ``output`` as failed or
    :func:`shows_traceback` finds a traceback in it (the outputs that get evidence), with
    one scan of the text for a traceback."""
    pruned = _pruned(output)
    if pruned is not None:
        return pruned.group("status") == " -> failed" or pruned.group("shown") is not None
    if _TRACEBACK in output:
        return True
    code = _exit_code(output)
    if code is not None:
        return code != 0
    head = output.lstrip() if output[:1].isspace() else output
    return head.startswith(_ERROR_PREFIXES)


def output_reports_failure(output: str) -> bool:
    """Return True when a tool's output text says the tool failed (:func:`output_outcome`)."""
    return output_outcome(output) == "failed"


def _content_lines(text: str) -> list[str]:
    """The output's non-empty lines, stripped, without the markup agents wrap outputs in."""
    if _TOOL_USE_ERROR in text:  # the tags around Claude Code's error, on its line
        text = text.replace(_TOOL_USE_ERROR, "").replace(_TOOL_USE_ERROR_END, "")
    return [
        line for raw in text.splitlines() if (line := raw.strip()) and not _NOISE.fullmatch(line)
    ]


def _exception_evidence(lines: list[str]) -> list[str] | None:
    """The exception raised after the last stack frame of ``lines``, and where; None
    when there is no frame followed by an exception line."""
    frames = [index for index, line in enumerate(lines) if _FRAME.match(line)]
    if not frames:
        return None
    found = next((i for i in range(frames[-1] + 1, len(lines)) if _EXCEPTION.match(lines[i])), None)
    where = _FRAME.match(lines[frames[-1]])
    if found is None or where is None:
        return None
    path, line_number, function = where.groups()
    return [lines[found], f"at {path}:{line_number}" + (f" in {function}" if function else "")]


def _traceback_evidence(output: str) -> list[str]:
    """The exception line of the last traceback (and where it was raised)."""
    lines = _content_lines(output.rsplit(_TRACEBACK, 1)[1])
    found = _exception_evidence(lines)
    if found is not None:
        return found
    exception = next((line for line in reversed(lines) if _EXCEPTION.match(line)), None)
    return [exception or (lines[-1] if lines else "Traceback")]


def _test_evidence(lines: list[str]) -> list[str] | None:
    """pytest's first assertion line (the error), the first failing test it names, the
    other tests: the error line comes first, so a squeezed summary keeps it."""
    tests = [line for line in lines if _FAILED_TEST.match(line)]
    if not tests:
        return None
    assertion = next((line for line in lines if _ASSERTION.match(line)), None)
    return [*([assertion] if assertion else []), *tests]


def _plain_evidence(lines: list[str]) -> list[str]:
    """The first line naming an exception (``SyntaxError: …``) or pytest's first assertion
    line, the first line that reads like an error, and the last line (each once)."""
    named = next((line for line in lines if _ASSERTION.match(line)), None)
    if named is None:
        named = next((line for line in lines if _NAMED_ERROR.search(line)), None)
    first = next((line for line in lines if _ERRORISH.search(line)), None)
    pieces = [line for line in (named, first, lines[-1] if lines else None) if line is not None]
    return list(dict.fromkeys(pieces))


def _joined(pieces: list[str], limit: int) -> str:
    """``pieces`` joined by `` | ``, the whole cut to ``limit`` characters (marked ``…``)."""
    text = EVIDENCE_SEPARATOR.join(" ".join(piece.split()) for piece in pieces)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def failure_evidence(output: str, limit: int = EVIDENCE_CHARS) -> str | None:
    """A short excerpt of ``output`` that shows why a call failed; None when it shows nothing.

    The first assertion line pytest prints and the failing tests it names (``FAILED
    tests/x.py::test_y``); else the exception line of a Python traceback and where it was
    raised; else the first line that reads like an error and the last line; then the
    exit code when it is not zero (always kept). One line, parts separated by `` | ``,
    at most ``limit`` characters.
    """
    pruned = _pruned(output)
    if pruned is not None:
        return pruned.group("evidence") or pruned.group("shown")
    lines = _content_lines(output)
    pieces = _test_evidence(lines)
    if pieces is None and _TRACEBACK in output:
        pieces = _traceback_evidence(output)
    if pieces is None:
        pieces = _exception_evidence(lines) or _plain_evidence(lines)
    code = _exit_code(output)
    exit_code = f"exit code {code}" if code else ""
    if not pieces:
        return exit_code or None
    if not exit_code:
        return _joined(pieces, limit)
    return (
        _joined(pieces, limit - len(EVIDENCE_SEPARATOR + exit_code))
        + EVIDENCE_SEPARATOR
        + exit_code
    )


def evidence_runs(evidence: str) -> list[str]:
    """The evidence of each failure a (merged) line keeps, newest first."""
    return evidence.split(EARLIER_EVIDENCE)


def merged_evidence(last: str | None, earlier: str | None) -> str | None:
    """The evidence of a line standing for earlier calls and a ``last`` one: the last
    evidence, then (each after ``; earlier: ``) the earlier ones not already said, newest
    first, at most :data:`EVIDENCE_RUNS` in all. A failure a later pass followed keeps
    its evidence; two runs that failed differently keep both errors."""
    if last is None or earlier is None:
        return last if last is not None else earlier
    runs: list[str] = []
    for run in (*evidence_runs(last), *evidence_runs(earlier)):
        head = run.split(EVIDENCE_SEPARATOR, 1)[0]
        if all(head != kept.split(EVIDENCE_SEPARATOR, 1)[0] for kept in runs):
            runs.append(run)
    return EARLIER_EVIDENCE.join(runs[:EVIDENCE_RUNS])


def shows_error_line(output: str) -> bool:
    """Return True when the first or the last line of ``output`` is a shell error as
    programs print them (``Error: …``, ``fatal: …``, ``bash: x: No such file or
    directory``, ``make: *** … Error 1``): what an output without an exit code shows when
    its command went wrong (a shell prints why a command could not run first, a failed
    build ends with it). Two short lines are read, whatever the output's size."""
    head = output[:_EDGE_CHARS].lstrip()
    first = head.split("\n", 1)[0].strip()
    tail = output[-_EDGE_CHARS:].rstrip()
    last = tail[tail.rfind("\n") + 1 :].strip()
    return _ERROR_LINE.search(first) is not None or _ERROR_LINE.search(last) is not None


def shows_traceback(output: str) -> bool:
    """Return True when ``output`` holds a Python traceback (whatever its exit code said),
    or is the placeholder of a pruned output that showed an error."""
    pruned = _pruned(output)
    if pruned is not None:
        return pruned.group("shown") is not None
    return _TRACEBACK in output
