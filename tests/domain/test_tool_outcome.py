"""How a call went, read from its output: failed / ok / unknown, and the evidence kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_domain import ToolResult
from forge_domain.tools import (
    EVIDENCE_CHARS,
    ToolCatalog,
    evidence_runs,
    failure_evidence,
    merged_evidence,
    output_outcome,
    pruned_output,
    shows_traceback,
)
from forge_domain.tools._outcome import output_shows_error, shows_error_line

OUTCOME_ROWS = [
    ("returncode-0", "<returncode>0</returncode>\n<output>\nok\n</output>", "ok"),
    ("returncode-1", "<returncode>1</returncode>\n<output>\n</output>", "failed"),
    (
        "returncode-0-decides",
        "<returncode>0</returncode>\nTraceback (most recent call last):\nKeyError: 1",
        "ok",
    ),
    ("openhands-0", "total 4\n[Command finished with exit code 0]", "ok"),
    ("openhands-2", "boom\n[Command finished with exit code 2]", "failed"),
    ("claude-code", "Exit code 1\nOn branch master\nnothing to commit", "failed"),
    ("swe-agent-ok", "Your command ran successfully and did not produce any output.", "ok"),
    ("swe-agent-lint", "Your proposed edit has introduced new syntax error(s).", "failed"),
    ("editor-error", "ERROR:\nNo replacement was performed", "failed"),
    ("claude-code-refused", "<tool_use_error>File does not exist.</tool_use_error>", "failed"),
    ("claude-code-sibling", "<tool_use_error>Sibling tool call errored</tool_use_error>", "failed"),
    ("traceback", 'Traceback (most recent call last):\n  File "x.py"\nValueError', "failed"),
    ("nothing-said", "total 4\ndrwxr-xr-x 2 root root 4096 .", "unknown"),
    ("empty", "", "unknown"),
]


@pytest.mark.parametrize(
    ("output", "expected"), [r[1:] for r in OUTCOME_ROWS], ids=[r[0] for r in OUTCOME_ROWS]
)
def test_output_outcome_is_ok_only_when_the_output_shows_success(output, expected):
    assert output_outcome(output) == expected


EVIDENCE_ROWS = [
    (
        "traceback",
        "<returncode>1</returncode>\n<output>\nstart\nTraceback (most recent call last):\n"
        '  File "/t/run.py", line 17, in <module>\n    main()\n'
        '  File "/t/lib.py", line 4, in main\n    raise ValueError("bad")\n'
        "ValueError: bad\nmore output\n</output>",
        "ValueError: bad | at /t/lib.py:4 in main | exit code 1",
    ),
    (
        "traceback-without-frames",
        "Traceback (most recent call last):\nKeyboardInterrupt",
        "KeyboardInterrupt",
    ),
    (
        "sphinx-exception",
        "<returncode>2</returncode>\nException occurred:\n"
        '  File "/t/directive.py", line 138, in run\n    raise RuntimeError("x")\n'
        "RuntimeError: x\nThe full traceback has been saved in /tmp/e.log",
        "RuntimeError: x | at /t/directive.py:138 in run | exit code 2",
    ),
    (
        "pytest",
        "<returncode>1</returncode>\n=== FAILURES ===\nE       assert 1 == 2\n"
        "FAILED t.py::test_a - assert 1 == 2\nFAILED t.py::test_b\n=== 2 failed ===",
        "E assert 1 == 2 | FAILED t.py::test_a - assert 1 == 2 | FAILED t.py::test_b | exit code 1",
    ),
    (
        "named-error",
        "Your proposed edit has introduced new syntax error(s).\nERRORS:\n"
        "- E999 SyntaxError: unmatched ']'\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$",
        "- E999 SyntaxError: unmatched ']' | Your proposed edit has introduced new syntax "
        "error(s).",
    ),
    ("exit-code-only", "<returncode>1</returncode>\n<output>\n</output>", "exit code 1"),
    (
        "claude-code-refused",
        "<tool_use_error>File content (806.5KB) exceeds maximum allowed size (256KB)."
        "</tool_use_error>",
        "File content (806.5KB) exceeds maximum allowed size (256KB).",
    ),
    (
        "openhands-trailer",
        "EXECUTION RESULT of [terminal]:\nbash: tree: command not found\n"
        "[The command completed with exit code 127.]\n[Current working directory: /w]\n"
        "[Command finished with exit code 127]",
        "bash: tree: command not found | exit code 127",
    ),
    ("nothing", "", None),
]


@pytest.mark.parametrize(
    ("output", "expected"), [r[1:] for r in EVIDENCE_ROWS], ids=[r[0] for r in EVIDENCE_ROWS]
)
def test_failure_evidence_keeps_the_lines_that_show_the_error(output, expected):
    assert failure_evidence(output) == expected


@given(st.text(max_size=600), st.integers(min_value=0, max_value=300))
def test_failure_evidence_is_one_bounded_line_that_keeps_the_exit_code(text, code):
    output = f"<returncode>{code}</returncode>\n{text}"
    evidence = failure_evidence(output)
    actual = (
        evidence is None or (len(evidence) <= EVIDENCE_CHARS and "\n" not in evidence),
        code == 0 or (evidence or "").endswith(f"exit code {code}"),
    )
    assert actual == (True, True)


PLACEHOLDER_ROWS = [
    ("failed", "failed", "E   assert 1 == 2", "-> failed: E   assert 1 == 2"),
    ("ok", "ok", None, "-> ok"),
    ("ok-error-shown", "ok", "KeyError: 3", "-> ok (error shown: KeyError: 3)"),
    ("unknown", "unknown", None, ""),
]


@pytest.mark.parametrize(
    ("outcome", "evidence", "shown"),
    [r[1:] for r in PLACEHOLDER_ROWS],
    ids=[r[0] for r in PLACEHOLDER_ROWS],
)
def test_pruned_output_is_read_back(outcome, evidence, shown):
    text = pruned_output("bash `make`", outcome, evidence, "1,234 chars, 1 image")
    actual = (text, output_outcome(text), failure_evidence(text), shows_traceback(text))
    expected = (
        f"[tool output pruned: bash `make` {shown}, 1,234 chars, 1 image]".replace("` ,", "`,"),
        outcome,
        evidence,
        outcome != "failed" and evidence is not None,
    )
    assert actual == expected


CATALOG_ROWS = [
    ("no-result", None, "unknown", None),
    ("flag", ToolResult.failed("c", "nothing to see"), "failed", "nothing to see"),
    ("ok", ToolResult.of("c", "<returncode>0</returncode>\nok"), "ok", None),
    (
        "ok-with-traceback",
        ToolResult.of("c", "<returncode>0</returncode>\nTraceback (most recent call last):\nE: x"),
        "ok",
        "E: x",
    ),
    ("unknown", ToolResult.of("c", "hello"), "unknown", None),
]


@pytest.mark.parametrize(
    ("result", "outcome", "evidence"),
    [r[1:] for r in CATALOG_ROWS],
    ids=[r[0] for r in CATALOG_ROWS],
)
def test_catalog_outcome_and_evidence(result, outcome, evidence):
    catalog = ToolCatalog.default()
    actual = (
        catalog.outcome(result),
        None if result is None else catalog.evidence(result),
    )
    assert actual == (outcome, evidence)


def test_catalog_without_inference_reads_only_the_error_flag():
    catalog = ToolCatalog.default().model_copy(update={"failure_inference": "none"})
    traceback = ToolResult.of("c", "<returncode>1</returncode>\nTraceback (most recent call last)")
    actual = (
        catalog.outcome(traceback),
        catalog.evidence(traceback),
        catalog.outcome(ToolResult.failed("c", "boom")),
    )
    assert actual == ("unknown", None, "failed")


@pytest.mark.parametrize(
    ("outcome", "evidence"),
    [("failed", "E   assert 1 == 2 | exit code 1"), ("ok", None), ("unknown", None)],
    ids=["failed", "ok", "unknown"],
)
def test_a_pointer_to_the_same_output_is_read_back(outcome, evidence):
    text = pruned_output("bash `make` (same output as call c1)", outcome, evidence, "9 chars")

    assert (output_outcome(text), failure_evidence(text)) == (outcome, evidence)


MERGES = [
    # (id, last evidence, earlier evidence, merged)
    ("failure_then_pass", None, "KeyError: 'a' | exit code 1", "KeyError: 'a' | exit code 1"),
    ("no_evidence", None, None, None),
    (
        "two_errors",
        "No module named 'pytz' | exit code 1",
        "No module named 'asgiref' | exit code 1",
        "No module named 'pytz' | exit code 1; earlier: No module named 'asgiref' | exit code 1",
    ),
    (
        "same_error_twice",
        "KeyError: 'a' | at x.py:3",
        "KeyError: 'a' | at x.py:9",
        "KeyError: 'a' | at x.py:3",
    ),
    ("at_most_three", "E4", "E3; earlier: E2; earlier: E1", "E4; earlier: E3; earlier: E2"),
]


@pytest.mark.parametrize(
    ("last", "earlier", "merged"), [m[1:] for m in MERGES], ids=[m[0] for m in MERGES]
)
def test_merged_evidence_keeps_each_distinct_error_newest_first(last, earlier, merged):
    actual = merged_evidence(last, earlier)

    assert (actual, evidence_runs(actual) if actual else []) == (
        merged,
        merged.split("; earlier: ") if merged else [],
    )


ERROR_LINE_ROWS = [
    ("error-prefix", "Error: could not load cache\nmake: *** [Makefile:192: build] Error 1", True),
    ("no-such-file", "bash: ./ponyc: No such file or directory", True),
    ("not-found", "sh: 1: pytest: command not found", True),
    ("fatal", "fatal: not a git repository", True),
    ("apt", "Reading package lists... Done\nE: Unable to locate package libgtest-dev", True),
    ("make-target", "gmake[1]: Leaving directory\nmake: *** [Makefile:192: build] Error 2", True),
    ("compiler", "src/a.c:3:1: error: expected ';' before '}' token", True),
    ("plain", "compiled 12 files\nbuild finished", False),
    ("mentions-errors", "src/errors.py\nsrc/error_handler.py", False),
    ("word-in-prose", "The error handling was refactored.", False),
]


@pytest.mark.parametrize(
    ("output", "expected"), [r[1:] for r in ERROR_LINE_ROWS], ids=[r[0] for r in ERROR_LINE_ROWS]
)
def test_shows_error_line_reads_shell_errors_only(output: str, expected: bool) -> None:
    assert shows_error_line(output) is expected


_SHOWN_ERRORS = [
    *(row[1] for row in OUTCOME_ROWS),
    "Traceback (most recent call last):\n  File 'a.py'\nValueError: x\n<returncode>0</returncode>",
    "<returncode>0</returncode>\nTraceback (most recent call last):\nKeyError: 1",
    *(
        pruned_output("bash `make`", outcome, evidence, "9 chars")
        for outcome in ("failed", "ok", "unknown")
        for evidence in (None, "E: boom")
    ),
]


@pytest.mark.parametrize("output", _SHOWN_ERRORS)
def test_output_shows_error_is_a_failure_or_a_traceback(output: str) -> None:
    """One scan gives what the outcome and the traceback check give together."""
    expected = output_outcome(output) == "failed" or shows_traceback(output)
    assert output_shows_error(output) is expected


@given(st.text(alphabet="<>/returncodeExit 01\n[]TracebackERROR:", max_size=80))
def test_output_shows_error_agrees_on_any_text(output: str) -> None:
    expected = output_outcome(output) == "failed" or shows_traceback(output)
    assert output_shows_error(output) is expected
