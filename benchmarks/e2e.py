"""End to end, side by side with Hermes: JSON bytes in, compacted, JSON bytes out.

``python -m benchmarks.e2e [--size 5000] [--seed 1] [--runs 15] [--clock cpu|wall]
[--no-hermes] [--out benchmarks/E2E.md]``

The workload of issue 12's speed targets: the generated session of ``--size`` messages
as JSON bytes, compacted with ``Compact(retention_window=20, eviction_window=1.0)`` and
the forced strategy (everything but the last 20 messages is summarised: the most work a
compaction can have). Our side does what ``forge-compact compact`` does with the bytes of
a file: decode them (``parse_transcript``), compact, write the transcript back
(``Transcript.dumps``) as bytes. Hermes's side: ``json.loads``, ``compress(force=True)``
with its summariser stubbed (``benchmarks/hermes.py``; ``protect_last_n=20``, a 200K
window), ``json.dumps``. Every timed job runs once per round, all jobs interleaved, so a
spell of load on the shared machine falls on both sides. Also measured: the peak memory
of our end-to-end run against the transcript's size, and the per-turn trigger check at
100 and at ``--size`` messages. Targets are printed as PASS / MISS and written, with the
machine and the command, to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import hermes as hermes_side
from benchmarks import ours
from benchmarks.generator import Message, generate_session
from benchmarks.run import _loadavg, machine
from benchmarks.stats import Stats, fmt_stats, fmt_time, peak_memory, time_interleaved, use_clock
from forge_app.compaction import Compactor
from forge_app.files._transcripts import Transcript, parse_transcript
from forge_domain import Compact, Context

E2E_MIN_SPEEDUP = 3.0
COMPACTION_MIN_SPEEDUP = 10.0
PEAK_MAX_RATIO = 3.0
TRIGGER_MAX_MEDIAN = 20e-6
TRIGGER_MAX_GROWTH = 1.5
TRIGGER_BASE_SIZE = 100
COMPACT = Compact(retention_window=20, eviction_window=1.0)
"""Summarise everything but the last 20 messages."""

Job = tuple[Callable[[Any], object], Callable[[], Any]]


class Ours:
    """Our side: bytes -> Transcript -> compacted -> bytes, as ``forge-compact compact``."""

    def __init__(self) -> None:
        """One compactor for every run (as one CLI call builds one)."""
        self.compactor = Compactor(COMPACT, cwd="/repo")
        self.strategy = self.compactor.forced_strategy()

    def decode(self, data: bytes) -> Transcript:
        """What ``read_transcript`` does with a file's bytes."""
        return parse_transcript(data, "bench.json")

    def compact(self, transcript: Transcript) -> Transcript:
        """One forced compaction."""
        outcome = self.compactor.compact(transcript.context, self.strategy)
        return transcript.with_context(outcome.context)

    def encode(self, transcript: Transcript) -> bytes:
        """What ``write_transcript`` writes."""
        return transcript.dumps().encode("utf-8")

    def end_to_end(self, data: bytes) -> bytes:
        """Bytes in, bytes out."""
        return self.encode(self.compact(self.decode(data)))


class Hermes:
    """Hermes's side: ``json.loads`` -> ``compress(force=True)`` -> ``json.dumps``."""

    def __init__(self, hermes: hermes_side.Hermes) -> None:
        """Drive ``hermes`` (its summariser already stubbed)."""
        self.hermes = hermes

    def fresh(self) -> object:
        """A new compressor (built outside the timing)."""
        return self.hermes.compressor()

    def compress(self, job: tuple[object, list[Message]]) -> list[Message]:
        """One forced ``compress()`` (it copies its input)."""
        compressor, messages = job
        result: list[Message] = compressor.compress(messages, force=True)  # type: ignore[attr-defined]
        return result

    def end_to_end(self, job: tuple[object, bytes]) -> bytes:
        """Bytes in, bytes out."""
        compressor, data = job
        return json.dumps(self.compress((compressor, json.loads(data)))).encode("utf-8")


STEPS = ("end to end", "decode", "compaction", "encode")
"""The timed steps of each side, in the order their runs are interleaved."""


def jobs(
    data: bytes, hermes: hermes_side.Hermes | None, steps: tuple[str, ...] = STEPS
) -> dict[str, Job]:
    """Every timed job of ``steps``, with its untimed setup, by name (``ours decode``, …)."""
    us = Ours()
    ours_jobs: dict[str, Callable[[], Job]] = {
        "end to end": lambda: (us.end_to_end, lambda: data),
        "decode": lambda: (us.decode, lambda: data),
        # a fresh Context per run: nothing cached on messages carries over
        "compaction": lambda: (us.compact, lambda: us.decode(data)),
        "encode": lambda: (us.encode, _constant(us.compact(us.decode(data)))),
    }
    table = {f"ours {step}": ours_jobs[step]() for step in steps}
    if hermes is not None:
        them = Hermes(hermes)
        hermes_jobs: dict[str, Callable[[], Job]] = {
            "end to end": lambda: (them.end_to_end, lambda: (them.fresh(), data)),
            "decode": lambda: (json.loads, lambda: data),
            "compaction": lambda: (them.compress, lambda: (them.fresh(), json.loads(data))),
            "encode": lambda: (
                lambda r: json.dumps(r).encode("utf-8"),
                _constant(them.compress((them.fresh(), json.loads(data)))),
            ),
        }
        table |= {f"hermes {step}": hermes_jobs[step]() for step in steps}
    return table


def _constant(value: object) -> Callable[[], object]:
    return lambda: value


def measure(
    data: bytes, hermes: hermes_side.Hermes | None, runs: int, steps: tuple[str, ...] = STEPS
) -> dict[str, Stats]:
    """``runs`` interleaved rounds of every job of :func:`jobs`; the figures by job name."""
    table = jobs(data, hermes, steps)
    return dict(zip(table, time_interleaved(list(table.values()), runs), strict=True))


def trigger_checks(size: int, seed: int, rounds: int = 5, extra: int = 500) -> dict[int, Stats]:
    """Per-call trigger check (``token_count`` + ``should_compact``) at 100 and ``size``
    messages, while each session grows by ``extra`` messages (interleaved rounds)."""
    sizes = (TRIGGER_BASE_SIZE, size)
    compact = ours.default_config().compact
    sessions = {n: generate_session(n + extra, seed=seed) for n in sizes}
    contexts = {n: Context.from_openai(sessions[n][:n]) for n in sizes}
    continuations = {
        n: ours.with_usage(
            Context.from_openai(sessions[n][n:]).messages, contexts[n].token_count_approx()
        )
        for n in sizes
    }
    checks: dict[int, list[float]] = {n: [] for n in sizes}
    step = extra // rounds
    for round_ in range(rounds):
        for n in sizes:
            part = continuations[n][round_ * step : (round_ + 1) * step]
            samples = ours.trigger_samples(contexts[n], part, compact)
            contexts[n] = samples.context
            checks[n] += samples.check
    return {n: Stats.of(taken) for n, taken in checks.items()}


def ratio(slow: Stats | None, fast: Stats | None) -> float | None:
    """How many times ``fast``'s median fits in ``slow``'s (None when either is missing)."""
    if slow is None or fast is None or fast.median <= 0:
        return None
    return slow.median / fast.median


def _target(name: str, ok: bool | None, measured: str) -> str:
    mark = "n/a" if ok is None else ("PASS" if ok else "MISS")
    return f"| {name} | {mark} | {measured} |"


def machine_line(hermes: hermes_side.Hermes | None, clock: str, load_start: str) -> str:
    """``Machine: …`` with the clock and the load average from ``load_start`` to now."""
    info = machine(hermes)
    info["clock"] = clock
    info["load average"] = f"{load_start} -> {_loadavg()}"
    return f"Machine: {', '.join(f'{k}: {v}' for k, v in info.items())}"


def report(args: argparse.Namespace, hermes: hermes_side.Hermes | None) -> str:
    """Run every measurement; the Markdown report."""
    session = generate_session(args.size, seed=args.seed)
    data = json.dumps(session).encode("utf-8")
    load_start = _loadavg()
    started = time.perf_counter()
    stats = measure(data, hermes, args.runs)
    peak, _ = peak_memory(lambda: Ours().end_to_end(data))
    triggers = trigger_checks(args.size, args.seed)
    elapsed = time.perf_counter() - started

    rows = ["| step | ours | Hermes | Hermes / ours |", "|---|--:|--:|--:|"]
    for step in ("decode", "compaction", "encode", "end to end"):
        mine, theirs = stats[f"ours {step}"], stats.get(f"hermes {step}")
        times = ratio(theirs, mine)
        rows.append(
            f"| {step} | {fmt_stats(mine)} | {fmt_stats(theirs) if theirs else ''} | "
            f"{f'{times:.2f}x' if times is not None else ''} |"
        )
    e2e = ratio(stats.get("hermes end to end"), stats["ours end to end"])
    compaction = ratio(stats.get("hermes compaction"), stats["ours compaction"])
    peak_ratio = peak / len(data)
    small, large = triggers[TRIGGER_BASE_SIZE], triggers[args.size]
    growth = large.median / small.median
    trigger_ok = growth <= TRIGGER_MAX_GROWTH and large.median <= TRIGGER_MAX_MEDIAN
    targets = [
        "| target | result | measured |",
        "|---|:-:|---|",
        _target(
            f"end to end >= {E2E_MIN_SPEEDUP:g}x faster than Hermes",
            None if e2e is None else e2e >= E2E_MIN_SPEEDUP,
            "Hermes not installed" if e2e is None else f"{e2e:.2f}x",
        ),
        _target(
            f"compaction of a decoded context >= {COMPACTION_MIN_SPEEDUP:g}x faster than Hermes",
            None if compaction is None else compaction >= COMPACTION_MIN_SPEEDUP,
            "Hermes not installed" if compaction is None else f"{compaction:.2f}x",
        ),
        _target(
            f"trigger check O(1): at {args.size:,} messages <= {TRIGGER_MAX_GROWTH:g}x its cost "
            f"at {TRIGGER_BASE_SIZE}, median <= {TRIGGER_MAX_MEDIAN * 1e6:g} µs",
            trigger_ok,
            f"{fmt_time(large.median)} at {args.size:,}, {fmt_time(small.median)} at "
            f"{TRIGGER_BASE_SIZE} ({growth:.2f}x)",
        ),
        _target(
            f"peak memory <= {PEAK_MAX_RATIO:g}x the transcript",
            peak_ratio <= PEAK_MAX_RATIO,
            f"{peak / 1e6:.1f} MB for {len(data) / 1e6:.1f} MB ({peak_ratio:.2f}x)",
        ),
    ]
    command = "python -m benchmarks.e2e " + " ".join(sys.argv[1:])
    return "\n\n".join(
        [
            "# End to end, side by side with Hermes",
            machine_line(hermes, args.clock, load_start),
            f"Command: `{command.strip()}` ({elapsed:.0f} s)",
            f"Workload: the generated {args.size:,}-message session (seed {args.seed}), "
            f"{len(data) / 1e6:.1f} MB of JSON; ours: `Compact(retention_window=20, "
            "eviction_window=1.0)`, forced strategy; Hermes: `compress(force=True)`, "
            "summariser stubbed, `protect_last_n=20`, 200K window. Median "
            f"[{stats['ours end to end'].spread_label}] of {args.runs} interleaved runs, "
            f"{args.clock} time.",
            "\n".join(rows),
            f"Trigger check per call (µs, median [p10-p90]): {TRIGGER_BASE_SIZE} messages "
            f"{fmt_stats(small)}, {args.size:,} messages {fmt_stats(large)}.",
            "## Targets",
            "\n".join(targets),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks.e2e``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e2e", description=__doc__)
    parser.add_argument("--size", type=int, default=5_000, help="session size (default 5000)")
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument("--runs", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--no-hermes", action="store_true", help="leave Hermes out")
    parser.add_argument(
        "--out", default="benchmarks/E2E.md", help="Markdown report ('-': print only)"
    )
    args = parser.parse_args(argv)
    use_clock(args.clock)
    hermes = None if args.no_hermes else hermes_side.load()
    text = report(args, hermes) + "\n"
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
