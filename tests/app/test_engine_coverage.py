"""The coverage check finds what a model-written summary left out, and fills it in."""

from __future__ import annotations

from forge_app.compaction.llm._coverage import Facts, check_coverage, facts_of, with_verified_facts
from forge_app.compaction.llm._prompt import VERIFIED_FACTS_HEADING
from forge_app.summary.transformers import SummaryTransformer
from forge_domain import ContextSummary, TextMessage, ToolCall, ToolResult


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
        ToolResult.failed("c2", "1 failed"),
        TextMessage.assistant("One test fails; fixing it."),
        TextMessage.user("Also update the changelog please"),
        TextMessage.assistant(
            None, (ToolCall(id="c3", name="read", arguments='{"file_path": "/repo/CHANGES.md"}'),)
        ),
        ToolResult.of("c3", "# Changes"),
    ]


def _facts():
    raw = ContextSummary.from_messages(_span())
    return facts_of(raw, SummaryTransformer("/repo")(raw))


def test_facts_of_collects_modified_paths_failed_commands_and_pending_asks():
    actual = _facts()

    assert actual == Facts(
        modified_paths=("src/config.py",),
        failed_commands=("pytest -x",),
        pending_asks=("Also update the changelog please",),
    )


def test_check_coverage_accepts_paraphrased_asks_and_absolute_paths():
    summary = (
        "## Relevant files\n- /repo/src/config.py renamed loader\n"
        "## Blocked\n`pytest   -x` fails\n## Pending user asks\n- update the CHANGELOG (asked)"
    )

    actual = check_coverage(summary, _facts())

    assert (actual.ratio, actual.missing) == (1.0, Facts())


def test_check_coverage_reports_and_fills_a_missing_file():
    summary = "## Blocked\npytest -x fails\n## Pending user asks\nAlso update the changelog please"
    coverage = check_coverage(summary, _facts())

    actual = (coverage.ratio, with_verified_facts(summary, coverage.missing))

    assert actual == (
        2 / 3,
        f"{summary}\n\n{VERIFIED_FACTS_HEADING}\n- Modified file: `src/config.py`",
    )


def test_check_coverage_of_nothing_is_complete():
    actual = check_coverage("anything", Facts()).ratio

    assert actual == 1.0
