"""The catalog's shortcuts give exactly what the plain definitions give (hypothesis)."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from forge_domain import ToolCall
from forge_domain.tools import (
    FileUpdateTool,
    Todo,
    ToolCatalog,
    output_outcome,
    output_reports_failure,
)
from forge_domain.tools._items import EXCERPT_CHARS, argument_excerpt, excerpt_of

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(
    st.text(max_size=10),
    JSON_VALUES | st.text(alphabet='ab"\\\n\t\x01é', min_size=100, max_size=400),
    max_size=5,
)


def _plain_excerpt(arguments: object) -> str:
    """The definition: the whole compact JSON, cut to EXCERPT_CHARS with an ellipsis."""
    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    if text in ("{}", ""):
        return ""
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


@given(ARGUMENTS | JSON_VALUES)
def test_argument_excerpt_is_the_cut_compact_json(arguments):
    call = ToolCall(id="c", name="anything", arguments=json.dumps(arguments))
    assert argument_excerpt(call) == _plain_excerpt(arguments)
    assert excerpt_of(arguments) == _plain_excerpt(arguments)  # the catalog's, parsed once


@given(ARGUMENTS)
def test_a_generic_line_is_the_excerpt_of_the_arguments(arguments):
    """A tool the catalog does not know reads its arguments once (excerpt_of) and gets the
    same generic line as the excerpt of the call's text."""
    call = ToolCall(id="c", name="not_in_the_catalog", arguments=json.dumps(arguments))
    (tool,) = ToolCatalog.default().classify(call)
    assert tool.arguments == _plain_excerpt(arguments)


_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_CODE = re.compile(r"\[(?:Command finished|The command completed) with exit code (-?\d+)\.?\]")
_LEADING = re.compile(r"Exit code (-?\d+)\s*(?:\n|$)")
_PRUNED = re.compile(
    r"\[tool output pruned: \w+(?: `[^`]*`)?( -> failed| -> ok)?"
    r"(?:: .*| \(error shown: .*\))?, [\d,]+ chars\]"
)


def _plain_outcome(output: str) -> str:
    """The definition, without the substring pre-checks."""
    pruned = _PRUNED.fullmatch(output)
    if pruned is not None:
        return {" -> failed": "failed", " -> ok": "ok"}.get(pruned.group(1) or "", "unknown")
    code = _RETURNCODE.search(output[:200])
    if code is None:
        codes = _EXIT_CODE.findall(output[-400:])
        code = _LEADING.match(output) if not codes else None
        number = int(codes[-1]) if codes else int(code.group(1)) if code else None
    else:
        number = int(code.group(1))
    if number is not None:
        return "ok" if number == 0 else "failed"
    head = output.lstrip()
    if (
        head.startswith(("ERROR:", "Ran into [Errno", "Invalid `", "Your proposed edit has"))
        or "Traceback (most recent call last)" in output
    ):
        return "failed"
    return "ok" if head.startswith("Your command ran successfully") else "unknown"


FRAGMENTS = st.sampled_from(
    [
        "<returncode>0</returncode>",
        "<returncode> 3 </returncode>",
        "<returncode>",
        "[Command finished with exit code 0]",
        "[Command finished with exit code 2]",
        "[The command completed with exit code 1.]",
        " exit code ",
        "Exit code 1\n",
        "Exit code 0",
        "ERROR:",
        "Invalid `x`",
        "Your proposed edit has introduced new syntax error(s).",
        "Your command ran successfully and did not produce any output.",
        "Traceback (most recent call last)",
        "[tool output pruned: bash `make` -> failed: boom, 1,234 chars]",
        "[tool output pruned: read `a.py`, 12 chars]",
        "  ",
        "\n",
        "ok",
        "x" * 150,
        "y" * 390,
    ]
)


@given(st.lists(FRAGMENTS, max_size=8).map("".join))
def test_output_outcome_matches_its_definition(output):
    actual = (output_outcome(output), output_reports_failure(output))
    assert actual == (_plain_outcome(output), _plain_outcome(output) == "failed")


@given(
    st.lists(st.sampled_from(["read_file", "todo_write", "mcp__x__y", "Bash", "zz"]), max_size=6)
)
def test_classifier_agrees_with_single_call_classification(names):
    catalog = ToolCatalog.default()
    classifier = catalog.classifier()
    calls = [
        ToolCall(id=f"c{i}", name=name, arguments=json.dumps({"path": "a", "todos": []}))
        for i, name in enumerate(names)
    ]
    for call in calls:
        assert classifier.tools(call) == catalog.classify(call)
        assert classifier.written_todos(call) == catalog.written_todos(call)


def test_classifier_shares_tools_of_identical_pure_calls_only():
    classifier = ToolCatalog.default().classifier()
    read = ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}')
    again = ToolCall(id="c2", name="read_file", arguments='{"path": "a.py"}')
    assert classifier.tools(again) is classifier.tools(read)  # same name and arguments
    # SWE-agent's edit names its file only in the output: identical calls differ.
    edit = ToolCall(id="c3", name="edit", arguments='{"replacement": "x"}')
    first = classifier.tools(edit, output="[File: /r/a.py (9 lines total)]")
    second = classifier.tools(edit, output="[File: /r/b.py (9 lines total)]")
    assert (first, second) == ((FileUpdateTool(path="/r/a.py"),), (FileUpdateTool(path="/r/b.py"),))
    # todo_write diffs against the list before the call: identical calls differ.
    write = ToolCall(
        id="c4", name="todo_write", arguments='{"todos": [{"content": "A", "status": "pending"}]}'
    )
    empty = classifier.tools(write, todos=())
    known = classifier.tools(write, todos=(Todo(content="A", status="pending"),))
    assert empty != known
