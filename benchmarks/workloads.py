"""Issue 25's speed targets on every workload, side by side with Hermes.

``python -m benchmarks.workloads [--size 5000] [--runs 9] [--quick] [--clock cpu|wall]
[--no-hermes] [--only NAME,...] [--sessions DIR] [--json PATH]``;
``python -m benchmarks.workloads --profile NAME [--size] [--runs]``: where our compaction of
that workload spends its time (cProfile over ``--runs`` compactions, each of a context
decoded afresh, untimed).

The workloads: the generated session with seeds 1, 2 and 3 (default mix), the generated
session (seed 1) in each other mix of :data:`benchmarks.generator.MIXES`, and the shared
real sessions concatenated (:mod:`benchmarks.concatenated`), repeated up to the same size
and once each (one pass: 1,642 messages of the 11 shared sessions). Each is
measured as ``benchmarks.e2e`` measures its one session (:func:`benchmarks.e2e.measure`,
the same jobs and config): decode, compaction of a decoded context and end to end (JSON
bytes in to bytes out), ours and Hermes's (summariser stubbed), their runs interleaved,
CPU time by default. Prints a Markdown table with PASS / MISS per target per workload
(compaction >= 10x Hermes, end to end >= 3x) and writes every figure to ``--json``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import e2e
from benchmarks import hermes as hermes_side
from benchmarks.concatenated import concatenated_session, read_sessions
from benchmarks.generator import DEFAULT_MIX, MIXES, Message, Mix, generate_session
from benchmarks.run import SESSIONS_DIR, _loadavg
from benchmarks.stats import Stats, fmt_time, use_clock

STEPS = ("decode", "compaction", "end to end")
"""The steps timed per workload (``e2e``'s encode is left out: it is in end to end)."""
TARGETS = {"compaction": e2e.COMPACTION_MIN_SPEEDUP, "end to end": e2e.E2E_MIN_SPEEDUP}
"""The minimum speed-up over Hermes per step."""
SEEDS = (1, 2, 3)
MIX_SEED = 1
QUICK_SIZE = 1_000
QUICK_RUNS = 3
_RESULTS = Path(__file__).parent / "results"


@dataclass(frozen=True)
class Workload:
    """A named session to compact, built for a size."""

    name: str
    description: str
    build: Callable[[int], list[Message]]


def _generated(seed: int, mix: Mix) -> Callable[[int], list[Message]]:
    return lambda size: generate_session(size, seed=seed, mix=mix)


def workloads(sessions: Path) -> list[Workload]:
    """Every workload, in the order they are run and reported."""
    found = [
        Workload(f"seed {seed}", "generated, default mix", _generated(seed, DEFAULT_MIX))
        for seed in SEEDS
    ]
    found += [
        Workload(f"{mix.name} (seed {MIX_SEED})", mix.description, _generated(MIX_SEED, mix))
        for mix in MIXES.values()
        if mix != DEFAULT_MIX
    ]
    found += [
        Workload(
            "concatenated sessions",
            f"every `*.json` of {sessions} in name order, repeated up to the size "
            "(benchmarks/concatenated.py)",
            lambda size: concatenated_session(size, read_sessions(sessions)),
        ),
        Workload(
            "concatenated sessions (one pass)",
            "the same, each session once (1,642 messages of the 11 shared sessions): no "
            "session repeats, so no call is classified from an earlier identical one",
            lambda size: concatenated_session(size, read_sessions(sessions), passes=1),
        ),
    ]
    return found


@dataclass(frozen=True)
class Measured:
    """One workload's figures."""

    workload: Workload
    messages: int
    size: int
    """Bytes of JSON."""
    stats: dict[str, Stats]

    def speedup(self, step: str) -> float | None:
        """Hermes's median over ours for ``step`` (None without Hermes)."""
        return e2e.ratio(self.stats.get(f"hermes {step}"), self.stats[f"ours {step}"])

    def verdicts(self) -> dict[str, str]:
        """PASS / MISS / n/a per target."""
        out: dict[str, str] = {}
        for step, minimum in TARGETS.items():
            times = self.speedup(step)
            out[step] = "n/a" if times is None else ("PASS" if times >= minimum else "MISS")
        return out

    def as_json(self) -> dict[str, object]:
        """Every figure of the workload."""
        return {
            "workload": self.workload.name,
            "description": self.workload.description,
            "messages": self.messages,
            "bytes": self.size,
            "stats": {job: stats.as_json() for job, stats in self.stats.items()},
            "speedups": {step: self.speedup(step) for step in STEPS},
            "targets": self.verdicts(),
        }


def measure(
    workload: Workload, size: int, hermes: hermes_side.Hermes | None, runs: int
) -> Measured:
    """Build the workload's session at ``size`` and time its steps, both sides interleaved."""
    session = workload.build(size)
    data = json.dumps(session).encode("utf-8")
    return Measured(workload, len(session), len(data), e2e.measure(data, hermes, runs, STEPS))


def _cell(stats: Stats | None) -> str:
    return fmt_time(stats.median) if stats is not None else ""


def _times(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else ""


def table(results: list[Measured]) -> str:
    """The Markdown table: one row per workload, medians, speed-ups, verdicts."""
    header = (
        "| workload | messages | MB | decode ours | decode Hermes | compaction ours "
        "| compaction Hermes | compaction Hermes / ours | end to end ours | end to end Hermes "
        f"| end to end Hermes / ours | compaction >= {TARGETS['compaction']:g}x "
        f"| end to end >= {TARGETS['end to end']:g}x |"
    )
    rows = [header, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|:-:|"]
    for result in results:
        cells = [result.workload.name, f"{result.messages:,}", f"{result.size / 1e6:.1f}"]
        for step in STEPS:
            cells += [
                _cell(result.stats[f"ours {step}"]),
                _cell(result.stats.get(f"hermes {step}")),
            ]
            if step != "decode":
                cells.append(_times(result.speedup(step)))
        verdicts = result.verdicts()
        cells += [verdicts[step] for step in TARGETS]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def report(
    args: argparse.Namespace, hermes: hermes_side.Hermes | None, command: str
) -> tuple[str, dict[str, object]]:
    """Measure the chosen workloads; the Markdown report and the JSON document."""
    chosen = _chosen(args)
    load_start = _loadavg()
    started = time.perf_counter()
    results: list[Measured] = []
    for workload in chosen:
        results.append(measure(workload, args.size, hermes, args.runs))
        print(f"{workload.name}: done at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - started
    machine = e2e.machine_line(hermes, args.clock, load_start)
    described = "\n".join(f"- **{w.name}**: {w.description}" for w in chosen)
    text = "\n\n".join(
        [
            "# Workloads, side by side with Hermes",
            machine,
            f"Command: `{command}` ({elapsed:.0f} s)",
            f"Each workload at {args.size:,} messages (the concatenated sessions: whole "
            "sessions, cut where no call is left unanswered); ours: `Compact(retention_window"
            "=20, eviction_window=1.0)`, forced strategy; Hermes: `compress(force=True)`, "
            "summariser stubbed, `protect_last_n=20`, 200K window. Medians of "
            f"{args.runs} interleaved runs, {args.clock} time.",
            described,
            table(results),
        ]
    )
    document: dict[str, object] = {
        "command": command,
        "machine": machine,
        "clock": args.clock,
        "runs": args.runs,
        "size": args.size,
        "seconds": elapsed,
        "workloads": [result.as_json() for result in results],
    }
    return text, document


def profile(workload: Workload, size: int, runs: int, top: int = 30) -> str:
    """cProfile of ``runs`` compactions of the workload (ours, as ``e2e``), by own time and
    by cumulative time; decoding is not profiled."""
    data = json.dumps(workload.build(size)).encode("utf-8")
    us = e2e.Ours()
    profiler = cProfile.Profile()
    for _ in range(runs):
        transcript = us.decode(data)
        gc.collect()
        profiler.enable()
        us.compact(transcript)
        profiler.disable()
    out = io.StringIO()
    for order in ("tottime", "cumulative"):
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(top)
    return out.getvalue()


def _chosen(args: argparse.Namespace) -> list[Workload]:
    chosen = workloads(args.sessions)
    names = {name.strip() for name in (args.only or args.profile or "").split(",") if name}
    unknown = names - {w.name for w in chosen}
    if unknown:
        raise SystemExit(f"unknown workload(s): {', '.join(sorted(unknown))}")
    return [w for w in chosen if w.name in names] if names else chosen


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks.workloads``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__)
    parser.add_argument("--size", type=int, help="messages per workload (default 5000)")
    parser.add_argument("--runs", type=int, help="interleaved rounds (default 9)")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_SIZE:,} messages, {QUICK_RUNS} runs"
    )
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--no-hermes", action="store_true", help="leave Hermes out")
    parser.add_argument("--only", help="comma-separated workload names (default: all)")
    parser.add_argument("--sessions", type=Path, default=SESSIONS_DIR, help="real sessions")
    parser.add_argument("--json", type=Path, help="JSON file (default benchmarks/results/)")
    parser.add_argument("--profile", metavar="NAME", help="profile our compaction of NAME")
    args = parser.parse_args(argv)
    args.size = args.size or (QUICK_SIZE if args.quick else 5_000)
    args.runs = args.runs or (QUICK_RUNS if args.quick else 9)
    use_clock(args.clock)
    if args.profile:
        for workload in _chosen(args):
            print(profile(workload, args.size, args.runs))
        return 0
    hermes = None if args.no_hermes else hermes_side.load()
    given = sys.argv[1:] if argv is None else argv
    command = f"python -m benchmarks.workloads {shlex.join(given)}".strip()
    text, document = report(args, hermes, command)
    print(text)
    out = args.json or _RESULTS / ("workloads-quick.json" if args.quick else "workloads.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n")
    print(f"\nJSON results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
