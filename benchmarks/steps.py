"""Where one automatic compaction spends its time, step by step.

``python -m benchmarks.steps [--size 5000] [--runs 15] [--seed 1] [--workload default|e2e]``
replays the steps of ``Compactor.compact`` one by one on a generated session (a fresh
``Context`` per run) and prints, per step, the minimum and the median CPU time over the
runs, after the time to decode the session's JSON bytes (``parse_transcript``). It calls
the compactor's private steps on purpose, so it follows
``forge_app/compaction/_compactor.py``: when those change, this script changes with them.
``--workload default`` compacts with the default agent's config (the table in
``RESULTS.md``); ``e2e`` with the workload of ``benchmarks/e2e.py``
(``Compact(retention_window=20, eviction_window=1.0)``: everything but the last 20
messages is summarised).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

from benchmarks import ours
from benchmarks.generator import generate_session
from forge_app.compaction._compactor import Compactor
from forge_app.files._transcripts import parse_transcript
from forge_app.summary._bounded import bounded_summary
from forge_app.summary._budget import drop_oldest_narration, limit_texts
from forge_app.summary._fit_summary import fit_summary
from forge_app.summary.transformers._keep_last_operation import aggregate_operations
from forge_domain import Compact, Context, ContextMessage, Role, TextMessage
from forge_domain.formats import ensure_valid
from forge_domain.summary import ContextSummary, accumulated_usage, carry_reasoning

T = TypeVar("T")

STEPS = (
    ("decode", "parse_transcript of the session's JSON bytes (not part of the total)"),
    ("validate", "input validation (is_valid)"),
    ("strategy", "retained count and span"),
    ("from_messages", "the bounded build: pre-pass over the span, then from_messages of it"),
    ("transformers", "drop, dedupe, keep-last-operation, strip cwd, aggregate operations"),
    ("budgets", "text limits and narration budget"),
    ("render", "the Jinja frame, fitted to the summary budget (render, cut, re-render)"),
    ("summary_data", 'ContextSummary.model_dump(mode="json")'),
    ("splice", "usage, reasoning carry, new Context"),
)


Timer = Callable[[str, Callable[[], T]], T]


WORKLOADS = ("default", "e2e")
E2E_COMPACT = Compact(retention_window=20, eviction_window=1.0)


def measure(size: int, runs: int, seed: int, workload: str = "default") -> dict[str, list[float]]:
    """CPU seconds per step, ``runs`` samples each."""
    compact = E2E_COMPACT if workload == "e2e" else ours.default_config().compact
    compactor = Compactor(compact, cwd="/repo")
    data = json.dumps(generate_session(size, seed=seed)).encode("utf-8")
    samples: dict[str, list[float]] = {name: [] for name, _ in STEPS}

    def timed(name: str, step: Callable[[], T]) -> T:
        start = time.process_time()
        value = step()
        samples[name].append(time.process_time() - start)
        return value

    for _ in range(runs):
        gc.collect()
        context = timed("decode", lambda: parse_transcript(data, "bench.json")).context
        gc.collect()
        replay_compaction(compactor, context, timed)
    return samples


def replay_compaction(compactor: Compactor, context: Context, timed: Timer[object]) -> Context:
    """The steps of ``Compactor.compact`` (automatic strategy, no max_tokens), each timed."""
    timed("validate", lambda: ensure_valid(context))
    strategy = compactor.automatic_strategy()
    span = timed("strategy", lambda: compactor._span(context, strategy.retained_count(context)))
    if not isinstance(span, tuple):
        raise SystemExit(f"nothing to compact in a {len(context)}-message session")
    start, end = span
    messages = context[start : end + 1]
    fresh: list[ContextMessage] = [m for m in messages if not m.droppable]
    max_chars = compactor.config.summary_budget() * 4  # approx_tokens: chars / 4
    built = timed(
        "from_messages", lambda: bounded_summary(fresh, compactor._catalog, max_chars, 2_000)
    )
    assert isinstance(built, ContextSummary)
    transformed = timed("transformers", lambda: aggregate_operations(compactor._transform(built)))
    assert isinstance(transformed, ContextSummary)
    summary = timed(
        "budgets", lambda: drop_oldest_narration(limit_texts(transformed, 2_000), 16_000)
    )
    assert isinstance(summary, ContextSummary)
    fitted = timed("render", lambda: fit_summary(summary, compactor._frame.render, max_chars))
    assert isinstance(fitted, tuple)
    summary, text = fitted
    data = timed("summary_data", lambda: summary.model_dump(mode="json"))
    assert isinstance(text, str)
    assert isinstance(data, dict)

    def splice() -> Context:
        message = TextMessage(
            role=Role.USER,
            content=text,
            span_usage=accumulated_usage(messages),
            summary_data=data,
        )
        new = carry_reasoning(
            [*context[:start], message, *context[end + 1 :]], messages, after=start + 1
        )
        return Context(new, usage_floor=len(new))

    compacted = timed("splice", splice)
    assert isinstance(compacted, Context)
    return compacted


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks.steps``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.steps", description=__doc__)
    parser.add_argument("--size", type=int, default=5_000, help="session size (default 5000)")
    parser.add_argument("--runs", type=int, default=15, help="runs per step (default 15)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--workload", choices=WORKLOADS, default="default", help="config")
    args = parser.parse_args(argv)
    samples = measure(args.size, args.runs, args.seed, args.workload)
    print(
        f"One automatic compaction of {args.size:,} messages ({args.workload} workload), "
        f"CPU time over {args.runs} runs\n"
    )
    print("| step | min ms | median ms | what |")
    print("|---|--:|--:|---|")
    for name, what in STEPS:
        taken = samples[name]
        print(
            f"| {name} | {min(taken) * 1e3:.2f} | {statistics.median(taken) * 1e3:.2f} | {what} |"
        )
    steps = [taken for name, taken in samples.items() if name != "decode"]
    total_min = sum(min(taken) for taken in steps) * 1e3
    total_median = sum(statistics.median(taken) for taken in steps) * 1e3
    print(f"| total | {total_min:.1f} | {total_median:.1f} | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
