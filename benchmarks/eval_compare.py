"""Two ``forge-compact eval --json`` files side by side: did any fact count go down?

    forge-compact eval SESSIONS/*.json --json before.jsonl    # on the tree before
    forge-compact eval SESSIONS/*.json --json after.jsonl     # on the tree after
    python -m benchmarks.eval_compare before.jsonl after.jsonl

The rule of issue 25: the summary's text may change, its facts may not. Prints one Markdown
row per session and window (each fact ``found before → found after / total``, the largest
summary before → after against the default agent's budget at that window, the peak request
over the window before → after), then one line per fact count lower, per summary over its
budget, per request over its window, per row invalid or stopped after but not before (and
one line per replay stopped by a context that cannot fit, before and after alike), and a
count. Exits 1 on any of those but the last.
``benchmarks.forced_facts --compare`` does the same for the forced compactions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.forced_facts import FACTS
from forge_app.files._agents import default_agent

Row = dict[str, Any]


def load(path: Path) -> dict[tuple[str, int], Row]:
    """The rows of one eval JSON file by (session, window)."""
    rows = map(json.loads, path.read_text().splitlines())
    return {(r["session"], r["window"]): r for r in rows}


def budget(window: int) -> int:
    """The summary budget of the default agent at that window (as ``eval`` replays it)."""
    return default_agent().with_compaction_threshold(window).compact.summary_budget()


def _fact(old: Row, new: Row, fact: str) -> str:
    (was, total), (now, _) = old[fact], new[fact]
    if total == 0:
        return "-"
    return f"{was}/{total}" if was == now else f"{was} → {now}/{total}"


def _arrow(was: object, now: object) -> str:
    return f"{was:,}" if was == now else f"{was:,} → {now:,}"


def _row(key: tuple[str, int], old: Row, new: Row) -> str:
    session, window = key
    largest = _arrow(old["largest_summary"], new["largest_summary"])
    peak = _arrow(old["peak_request"], new["peak_request"])
    cells = [_fact(old, new, fact) for fact in FACTS]
    return (
        f"| {session} | {window:,} | " + " | ".join(cells) + f" | {largest} / {budget(window):,} "
        f"| {peak} / {window:,} |"
    )


def problems(old: dict[tuple[str, int], Row], new: dict[tuple[str, int], Row]) -> list[str]:
    """Every fact count lower, summary over budget, request over window, missing row, and
    row invalid or stopped in ``new`` that was not in ``old``."""
    found: list[str] = []
    for key, before in old.items():
        after = new.get(key)
        if after is None:
            found.append(f"MISSING {key}")
            continue
        for fact in FACTS:
            if after[fact][0] < before[fact][0]:
                found.append(f"LOWER {key} {fact}: {before[fact]} -> {after[fact]}")
        if after["largest_summary"] > budget(key[1]):
            found.append(f"OVER BUDGET {key}: {after['largest_summary']} > {budget(key[1])}")
        if after["peak_request"] > key[1]:
            found.append(f"OVER WINDOW {key}: {after['peak_request']} > {key[1]}")
        if (not after["valid"] or after["stopped"]) and before["valid"] and not before["stopped"]:
            found.append(f"NEWLY INVALID {key}: valid={after['valid']} stopped={after['stopped']}")
    return found


def table(old: dict[tuple[str, int], Row], new: dict[tuple[str, int], Row]) -> str:
    """The Markdown table of every row present in both files."""
    lines = [
        "| session | window | task | asks | modified paths | failures with evidence "
        "| last error | largest summary / budget | peak / window |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_row(key, old[key], new[key]) for key in old if key in new]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the before/after table and the problems; exit 1 if there is any."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    old, new = load(args.before), load(args.after)
    print(table(old, new))
    print()
    found = problems(old, new)
    for line in found:
        print(line)
    for key, row in new.items():
        if row["stopped"]:
            was = "also before" if old.get(key, {}).get("stopped") else "not before"
            print(f"STOPPED {key} ({was}): {row['stopped']}")
    lower = sum(line.startswith("LOWER") for line in found)
    others = len(found) - lower
    print(f"{len(old)} rows compared, {lower} fact counts lower, {others} other problems")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
