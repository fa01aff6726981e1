"""Run the benchmarks: ``python -m benchmarks.run [--quick] [--out PATH]``.

Prints Markdown tables and writes every figure to a JSON file. See README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import hermes as hermes_side
from benchmarks import ours
from benchmarks.generator import Message, generate_session, json_size
from benchmarks.report import Report
from benchmarks.stats import (
    Stats,
    clock,
    fmt_time,
    peak_memory,
    time_calls,
    time_interleaved,
    use_clock,
)
from forge_domain import Context

SESSIONS_DIR = Path("/work/shared/data/sessions")
FULL_SIZES = (100, 1_000, 5_000, 10_000, 50_000)
QUICK_TRIGGER_SIZES = (100, 1_000, 10_000)
QUICK_COMPACTION_SIZES = (100, 1_000, 5_000)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _hermes_compress(
    hermes: hermes_side.Hermes, session: list[Message], compressor: object
) -> list[Message]:
    return hermes.compress(compressor, session)


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def machine(hermes: hermes_side.Hermes | None) -> dict[str, object]:
    """Where the figures were measured."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hermes": hermes.version if hermes else "not installed",
    }


def _runs(size: int, quick: bool) -> int:
    if quick:
        return 3
    if size >= 50_000:
        return 3
    return 7 if size >= 10_000 else 15


def trigger(report: Report, sizes: tuple[int, ...], quick: bool, seed: int, hermes: object) -> None:
    """Figure 1: the per-response trigger check as the session grows (and Hermes's estimate).

    Sizes are measured in interleaved rounds so that every size sees the same machine load.
    """
    config = ours.default_config()
    extra, rounds = (500, 5) if quick else (2_000, 10)
    sessions = {size: generate_session(size + extra, seed=seed) for size in sizes}
    contexts = {size: Context.from_openai(sessions[size][:size]) for size in sizes}
    continuations = {
        size: ours.with_usage(
            Context.from_openai(sessions[size][size:]).messages,
            contexts[size].token_count_approx(),
        )
        for size in sizes
    }
    checks: dict[int, list[float]] = {size: [] for size in sizes}
    appends: dict[int, list[float]] = {size: [] for size in sizes}
    step = extra // rounds
    for round_ in range(rounds):
        for size in sizes:
            part = continuations[size][round_ * step : (round_ + 1) * step]
            samples = ours.trigger_samples(contexts[size], part, config.compact)
            contexts[size] = samples.context
            checks[size] += samples.check
            appends[size] += samples.append
    rows: dict[int, dict[str, object]] = {}
    for size in sizes:
        rows[size] = {"check": Stats.of(checks[size]), "append": Stats.of(appends[size])}
        if isinstance(hermes, hermes_side.Hermes):
            session = sessions[size]
            turns = max(3, min(20 if quick else 50, (50_000 if quick else 200_000) // size))
            messages = list(session[:size])
            compressor = hermes.compressor()
            taken: list[float] = []
            for message in session[size : size + turns]:
                messages.append(message)
                start = clock()
                hermes.should_compress(compressor, hermes.estimate(messages))
                taken.append(clock() - start)
            rows[size]["hermes_estimate"] = Stats.of(taken)
    report.trigger(rows, config.source)


def compaction(
    report: Report, sizes: tuple[int, ...], quick: bool, seed: int, hermes: object
) -> None:
    """Figures 2-4: compaction time, codec time, peak memory; ours next to Hermes."""
    config = ours.default_config()
    automatic = ours.compactor(config.compact)
    forced = ours.compactor(config.compact, forced=True)
    rows: dict[int, dict[str, object]] = {}
    for size in sizes:
        session = generate_session(size, seed=seed)
        runs = _runs(size, quick)
        context = Context.from_openai(session)
        row: dict[str, object] = {"json_bytes": json_size(session), "runs": runs}
        row["from_openai"] = time_calls(Context.from_openai, session, runs)
        row["to_openai"] = time_calls(Context.to_openai, context, runs)
        # A fresh Context per run (decoded untimed): values cached on messages, such as
        # parsed tool arguments, must not carry over from one run to the next.
        fresh = partial(Context.from_openai, session)
        jobs: dict[str, tuple[Callable[[Any], object], Callable[[], Any]]] = {}
        if automatic is not None and forced is not None:
            jobs["ours"] = (automatic, fresh)
            jobs["ours_forced"] = (forced, fresh)
        if isinstance(hermes, hermes_side.Hermes):
            jobs["hermes"] = (partial(_hermes_compress, hermes, session), hermes.compressor)
        row.update(zip(jobs, time_interleaved(list(jobs.values()), runs), strict=True))
        if automatic is not None and forced is not None:
            peak, outcome = peak_memory(partial(automatic, context))
            row["ours_peak_bytes"] = peak
            row["ours_out"] = (len(outcome.context), outcome.context.token_count_approx())
            row["in"] = (len(context), context.token_count_approx())
            forced_outcome = forced(context)
            row["ours_forced_out"] = (
                len(forced_outcome.context),
                forced_outcome.context.token_count_approx(),
            )
        if isinstance(hermes, hermes_side.Hermes):
            compress = partial(_hermes_compress, hermes, session)
            peak, result = peak_memory(partial(compress, hermes.compressor()))
            row["hermes_peak_bytes"] = peak
            out = Context.from_openai(result)
            row["hermes_out"] = (len(out), out.token_count_approx())
        rows[size] = row
        print(f"  compaction: {size:,} messages done", file=sys.stderr)
    report.compaction(rows)


def real_sessions(report: Report, quick: bool, hermes: object) -> None:
    """Figure 5 and the others on the real sessions in /work/shared/data/sessions."""
    config = ours.default_config()
    automatic = ours.compactor(config.compact)
    rows: dict[str, dict[str, object]] = {}
    files = sorted(SESSIONS_DIR.glob("*.json")) if SESSIONS_DIR.is_dir() else []
    runs = 2 if quick else 5
    for path in files:
        session = json.loads(path.read_text())
        context = Context.from_openai(session)
        row: dict[str, object] = {
            "json_bytes": json_size(session),
            "in": (len(context), context.token_count_approx()),
            "fires": config.compact.should_compact(context, context.token_count()),
            "codec": time_calls(ours.round_trip, session, runs),
        }
        jobs: dict[str, tuple[Callable[[Any], object], Callable[[], Any]]] = {}
        if automatic is not None:
            jobs["ours"] = (automatic, partial(Context.from_openai, session))
        if isinstance(hermes, hermes_side.Hermes):
            jobs["hermes"] = (partial(_hermes_compress, hermes, session), hermes.compressor)
        row.update(zip(jobs, time_interleaved(list(jobs.values()), runs), strict=True))
        if automatic is not None:
            peak, outcome = peak_memory(partial(automatic, context))
            row["ours_peak_bytes"] = peak
            row["ours_out"] = (len(outcome.context), outcome.context.token_count_approx())
        if isinstance(hermes, hermes_side.Hermes):
            out = Context.from_openai(_hermes_compress(hermes, session, hermes.compressor()))
            row["hermes_out"] = (len(out), out.token_count_approx())
        rows[path.name] = row
    report.real(rows, config.source)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks.run``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs (< 60 s)")
    parser.add_argument("--sizes", help="comma-separated session sizes (default: per mode)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--no-hermes", action="store_true", help="skip the Hermes side")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="clock for runs of a millisecond or more (default cpu: robust on a shared machine)",
    )
    parser.add_argument("--out", type=Path, help="JSON results file (default benchmarks/results/)")
    args = parser.parse_args(argv)
    if args.sizes:
        trigger_sizes = compaction_sizes = tuple(int(s) for s in args.sizes.split(","))
    elif args.quick:
        trigger_sizes, compaction_sizes = QUICK_TRIGGER_SIZES, QUICK_COMPACTION_SIZES
    else:
        trigger_sizes = compaction_sizes = FULL_SIZES
    use_clock(args.clock)
    started = time.perf_counter()
    hermes = None if args.no_hermes else hermes_side.load()
    facts = machine(hermes)
    facts["clock"] = args.clock
    facts["loadavg_start"] = _loadavg()
    report = Report(facts, " ".join(["python -m benchmarks.run", *(argv or sys.argv[1:])]))
    if hermes is None:
        print("hermes: not installed" if not args.no_hermes else "hermes: skipped")
    for name, section, sizes in (
        ("trigger", trigger, trigger_sizes),
        ("compaction", compaction, compaction_sizes),
    ):
        section(report, sizes, args.quick, args.seed, hermes)
        print(f"{name}: done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    real_sessions(report, args.quick, hermes)
    report.elapsed = time.perf_counter() - started
    report.machine["loadavg_end"] = _loadavg()
    print(report.markdown())
    out = args.out or Path(__file__).parent / "results" / (
        "latest-quick.json" if args.quick else "latest.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report.as_json(), indent=1) + "\n")
    print(f"\nJSON results: {out} (total {fmt_time(report.elapsed)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
