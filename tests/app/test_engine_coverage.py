"""The coverage check finds what a model-written summary left out, and fills it in."""

from __future__ import annotations

from forge_app.compaction.llm._coverage import (
    Facts,
    FailedOperation,
    check_coverage,
    facts_of,
    with_verified_facts,
)
from forge_app.compaction.llm._prompt import VERIFIED_FACTS_HEADING
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import TextMessage, ToolCall, ToolResult
from forge_domain.summary import ContextSummary


def _span():
    return [
        TextMessage.user("Rename the config loader and run the tests"),
        TextMessage.assistant(
            "Renaming.",
            (
                ToolCall(
                    id="c1",
                    name="write",
                    arguments='{"file_path": "/repo/src/config.py", "content": "x"}',
                ),
            ),
        ),
        ToolResult.of("c1", "ok"),
        TextMessage.assistant(
            None, (ToolCall(id="c2", name="shell", arguments='{"command": "pytest -x"}'),)
        ),
        ToolResult.failed("c2", "collected 3 items\nFAILED tests/test_config.py::test_load"),
        TextMessage.assistant("One test fails; fixing it."),
        TextMessage.user("Also update the changelog please"),
        TextMessage.assistant(
            None, (ToolCall(id="c3", name="read", arguments='{"file_path": "/repo/CHANGES.md"}'),)
        ),
        ToolResult.of("c3", "# Changes"),
    ]


TASK = "Rename the config loader in src/config.py and run the whole test suite"
ERROR = "FAILED tests/test_config.py::test_load"


def _facts():
    raw = ContextSummary.from_messages(_span())
    return facts_of(raw, SummaryTransformer("/repo")(raw), TASK)


def test_facts_of_collects_the_task_paths_failures_with_evidence_and_pending_asks():
    actual = _facts()

    assert actual == Facts(
        task=TASK,
        modified_paths=("src/config.py",),
        failed_operations=(FailedOperation(operation="pytest -x", evidence=ERROR),),
        pending_asks=("Also update the changelog please",),
    )


def test_facts_of_names_the_operation_of_any_failed_tool():
    span = [
        TextMessage.user("Fetch the spec"),
        TextMessage.assistant(
            None, (ToolCall(id="f1", name="fetch", arguments='{"url": "https://x.test/spec"}'),)
        ),
        ToolResult.failed("f1", "HTTP 404 Not Found"),
    ]
    raw = ContextSummary.from_messages(span)

    actual = facts_of(raw, SummaryTransformer()(raw)).failed_operations

    assert actual == (
        FailedOperation(operation="https://x.test/spec", evidence="HTTP 404 Not Found"),
    )


def test_check_coverage_accepts_paraphrases_absolute_paths_and_the_task_kept_verbatim():
    summary = (
        "## Relevant files\n- /repo/src/config.py renamed loader\n"
        f"## Blocked\n`pytest   -x` fails: {ERROR.lower()}\n"
        "## Pending user asks\n- update the CHANGELOG (asked)"
    )

    actual = check_coverage(summary, _facts(), kept=f"system prompt\n\n{TASK}")

    assert (actual.ratio, actual.missing) == (1.0, Facts())


def test_check_coverage_accepts_a_task_the_summary_restates():
    summary = "## Goal\nRename the loader (src/config.py) and run the whole test suite."

    actual = check_coverage(summary, Facts(task=TASK)).ratio

    assert actual == 1.0


def test_check_coverage_reports_and_fills_a_missing_file_failure_and_task():
    summary = (
        "## Blocked\npytest -x fails on something\n"
        "## Pending user asks\nAlso update the changelog please"
    )
    coverage = check_coverage(summary, _facts(), kept="system prompt")

    actual = (
        coverage.ratio,
        coverage.report(),
        with_verified_facts(summary, coverage.missing),
    )

    assert actual == (
        1 / 4,
        "checked task, 1 modified path, 1 failed operation, 1 pending ask; missing: "
        f"task {TASK[:59] + '…'!r}; modified path `src/config.py`; "
        f"failed operation `pytest -x` -> {ERROR}",
        f"{summary}\n\n{VERIFIED_FACTS_HEADING}\n"
        f"- Task: {TASK}\n"
        "- Modified file: `src/config.py`\n"
        f"- Failed: `pytest -x` -> `{ERROR}`",
    )


def test_check_coverage_of_nothing_is_complete_and_says_so():
    coverage = check_coverage("anything", Facts())

    actual = (coverage.ratio, coverage.report())

    assert actual == (1.0, "checked nothing; missing: none")
