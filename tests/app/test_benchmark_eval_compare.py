"""``benchmarks.eval_compare``: the rows of two eval JSON files, and what it flags."""

from __future__ import annotations

import json

from benchmarks.eval_compare import budget, main, problems, table


def _row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "session": "s",
        "window": 8000,
        "valid": True,
        "stopped": None,
        "peak_request": 5000,
        "largest_summary": 1000,
        "task": [1, 1],
        "asks": [2, 3],
        "modified_paths": [4, 4],
        "failures": [0, 0],
        "last_error": [1, 1],
    }
    return row | changes


def _key(row: dict[str, object]) -> tuple[str, int]:
    return (str(row["session"]), int(row["window"]))  # type: ignore[call-overload]


def test_equal_rows_have_no_problem_and_a_lower_count_is_one():
    before = {_key(_row()): _row()}
    lower = {_key(_row()): _row(asks=[1, 3])}
    higher = {_key(_row()): _row(asks=[3, 3], largest_summary=1100)}
    assert (problems(before, before), problems(before, lower), problems(before, higher)) == (
        [],
        ["LOWER ('s', 8000) asks: [2, 3] -> [1, 3]"],
        [],
    )


def test_over_budget_over_window_newly_stopped_and_missing_rows_are_flagged():
    before = {_key(_row()): _row(), ("t", 16000): _row(session="t", window=16000)}
    after = {
        _key(_row()): _row(
            largest_summary=budget(8000) + 1, peak_request=8001, stopped="turn 1: too big"
        )
    }
    kinds = [line.split(" ")[0] for line in problems(before, after)]
    assert kinds == ["OVER", "OVER", "NEWLY", "MISSING"]


def test_a_replay_stopped_before_and_after_is_no_problem():
    stopped = _row(stopped="turn 1: the system prompt alone is over the window", peak_request=0)
    assert problems({_key(stopped): stopped}, {_key(stopped): stopped}) == []


def test_the_table_shows_before_and_after_where_they_differ(tmp_path, capsys):
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text(json.dumps(_row()) + "\n")
    new.write_text(json.dumps(_row(failures=[0, 0], asks=[3, 3], largest_summary=1200)) + "\n")
    code = main([str(old), str(new)])
    row = table({_key(_row()): _row()}, {_key(_row()): _row(asks=[3, 3])}).splitlines()[-1]
    assert (code, row, "1 rows compared, 0 fact counts lower" in capsys.readouterr().out) == (
        0,
        "| s | 8,000 | 1/1 | 2 → 3/3 | 4/4 | - | 1/1 | 1,000 / 1,680 | 5,000 / 8,000 |",
        True,
    )
