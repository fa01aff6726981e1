"""What one forced compaction keeps: the facts of ``forge-compact eval``, without the replay.

``python -m benchmarks.forced_facts [--json PATH] [--sessions DIR ...]``

Each session of ``../shared/data/sessions`` (and ``--sessions`` directories), and the
generated workloads of ``benchmarks.e2e`` (5,000 messages, seeds 1 and 2), is compacted
once with the forced strategy (a person's ``/compact``: everything but the retention
window is summarised) by the bundled default agent with the threshold of a 8,000,
16,000 and 32,000-token window, and by the e2e configuration (``retention_window=20``,
no threshold: the 10,000-token summary ceiling). The facts of the uncompacted session
(``forge_app.evaluation.extract_facts``) are looked for in the result
(``retention``), as ``forge-compact eval`` does after a replay. Also printed: the
summary's size against its budget, and the omission note's counts. One JSON object per
row goes to ``--json`` so two trees can be compared (``--compare A B``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks.generator import generate_session
from forge_app.compaction import Compactor
from forge_app.evaluation import extract_facts, retention
from forge_app.files._agents import default_agent
from forge_app.files._transcripts import parse_transcript
from forge_domain import Compact, Context, TextMessage

_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sessions"
WINDOWS = (8_000, 16_000, 32_000)
FACTS = ("task", "asks", "modified_paths", "failures", "last_error")
E2E = Compact(retention_window=20, eviction_window=1.0)


def _workloads(dirs: list[Path]) -> list[tuple[str, Context]]:
    found: list[tuple[str, Context]] = []
    for directory in dirs:
        for path in sorted(directory.glob("*.json")):
            found.append((path.stem, parse_transcript(path.read_bytes(), str(path)).context))
    for seed in (1, 2):
        data = json.dumps(generate_session(5_000, seed=seed)).encode()
        found.append((f"generated-5000-seed{seed}", parse_transcript(data, "gen.json").context))
    return found


def _configs() -> list[tuple[str, Compact]]:
    agent = default_agent()
    configs = [(f"{w // 1000}K", agent.with_compaction_threshold(w).compact) for w in WINDOWS]
    configs.append(("e2e", E2E))
    return configs


def _row(name: str, label: str, compact: Compact, context: Context) -> dict[str, object]:
    compactor = Compactor(compact, cwd="/repo" if name.startswith("generated") else None)
    outcome = compactor.compact(context, compactor.forced_strategy())
    kept = retention(extract_facts(context), outcome.context)
    summaries = [
        m for m in outcome.context if isinstance(m, TextMessage) and m.summary_data is not None
    ]
    tokens = max((math.ceil(len(m.text) / 4) for m in summaries), default=0)
    omitted: dict[str, int] = {}
    notes = 0
    user_items = 0
    for message in summaries:
        data = message.summary_data or {}
        for block in data.get("blocks", []):  # type: ignore[union-attr]
            for item in block.get("contents", []):
                if block.get("role") == "user" and item.get("kind") == "text":
                    user_items += 1
                pairs = item.get("omitted") if isinstance(item, dict) else None
                if pairs:
                    notes += 1
                    for kind, count in pairs:
                        omitted[kind] = omitted.get(kind, 0) + count
    row: dict[str, object] = {
        "session": name,
        "config": label,
        "summary_tokens": tokens,
        "budget": compact.summary_budget(),
        "notes": notes,
        "summary_asks": user_items,
        "omitted": omitted,
    }
    for fact in FACTS:
        row[fact] = list(getattr(kept, fact))
    return row


def _table(rows: list[dict[str, object]]) -> str:
    lines = [
        "| session | config | summary / budget | notes | asks itemised | task | asks "
        "| modified paths | failures | last error |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [f"{r[f][0]}/{r[f][1]}" for f in FACTS]  # type: ignore[index]
        lines.append(
            f"| {r['session']} | {r['config']} | {r['summary_tokens']:,} / {r['budget']:,} "
            f"| {r['notes']} | {r['summary_asks']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def _load(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = map(json.loads, path.read_text().splitlines())
    return {(r["session"], r["config"]): r for r in rows}


def _compare(before: Path, after: Path) -> int:
    old, new = _load(before), _load(after)
    lower = 0
    for key, row in old.items():
        for fact in FACTS:
            if new[key][fact][0] < row[fact][0]:
                lower += 1
                print(f"LOWER {key} {fact}: {row[fact]} -> {new[key][fact]}")
        if new[key]["summary_asks"] < row["summary_asks"]:
            lower += 1
            print(f"LOWER {key} summary asks: {row['summary_asks']} -> {new[key]['summary_asks']}")
        if new[key]["summary_tokens"] > new[key]["budget"]:
            print(f"OVER BUDGET {key}: {new[key]['summary_tokens']} > {new[key]['budget']}")
    print(f"{len(old)} rows compared, {lower} fact counts lower")
    return 1 if lower else 0


def main(argv: list[str] | None = None) -> int:
    """Run the forced compactions and print the table (or compare two JSON files)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=Path, nargs="*", default=[_SHARED])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    args = parser.parse_args(argv)
    if args.compare:
        return _compare(*args.compare)
    rows = [
        _row(name, label, compact, context)
        for name, context in _workloads(args.sessions)
        for label, compact in _configs()
    ]
    if args.json:
        args.json.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
