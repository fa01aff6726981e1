"""How a compaction's cost grows with the history (issue 25's growth targets).

``python -m benchmarks.growth [--runs 3] [--cli-size 100000] [--no-cli]``

1. **Compaction at 50,000 messages against 5,000**: the generated sessions of
   ``benchmarks.generator`` (seed 1), decoded afresh (untimed) before each run, compacted
   with the e2e workload's forced strategy (``Compact(retention_window=20,
   eviction_window=1.0)``); runs of both sizes interleaved, CPU time, medians. Target:
   the ratio is at most 12.
2. **``forge-compact compact`` of a long chat transcript** (``benchmarks.replay_scale``'s
   chat-only session, ``--cli-size`` messages, about 48 MB at 100,000), run as a child
   process with the bundled default agent; its CPU time (user + system) and peak
   resident memory (``ru_maxrss``) against the file's size. Targets: 4 s and 3x.

Prints a Markdown table with PASS / MISS; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.generator import generate_session
from benchmarks.replay_scale import chat_session
from forge_app.compaction import Compactor
from forge_app.files._transcripts import Transcript, parse_transcript
from forge_domain import Compact

GROWTH_MAX = 12.0
CLI_MAX_SECONDS = 4.0
CLI_MAX_MEMORY = 3.0
COMPACT = Compact(retention_window=20, eviction_window=1.0)
_CLI = (sys.executable, "-c", "from forge_app.cli import main; main()")


def _compaction_seconds(data: bytes, compactor: Compactor) -> float:
    context = parse_transcript(data, "bench.json").context
    started = time.process_time()
    compactor.compact(context, compactor.forced_strategy())
    return time.process_time() - started


def growth(runs: int) -> tuple[float, float]:
    """Median CPU seconds of one compaction at 5,000 and at 50,000 messages."""
    compactor = Compactor(COMPACT, cwd="/repo")
    small = json.dumps(generate_session(5_000, seed=1)).encode()
    large = json.dumps(generate_session(50_000, seed=1)).encode()
    times: dict[int, list[float]] = {5_000: [], 50_000: []}
    _compaction_seconds(small, compactor)  # warm up (template compiled, caches filled)
    for _ in range(runs):
        times[5_000].append(_compaction_seconds(small, compactor))
        times[50_000].append(_compaction_seconds(large, compactor))
    return statistics.median(times[5_000]), statistics.median(times[50_000])


_CHILD_USAGE = (
    "import resource, subprocess, sys\n"
    "quiet = subprocess.DEVNULL\n"
    "subprocess.run(sys.argv[1:], check=True, stdout=quiet, stderr=quiet)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss)\n"
)
"""Runs a command and prints its CPU seconds and peak RSS (KiB). The command is started from
this small process, not from the benchmark's: the kernel carries a process's high-water RSS
across fork and exec into the child's ``ru_maxrss``, so a child of the benchmark (which holds
the generated sessions) was charged the benchmark's own peak (plans/008-performance.md,
round 7a)."""


def cli_compact(size: int) -> tuple[int, float, int]:
    """File bytes, CPU seconds and peak RSS bytes of ``forge-compact compact`` on a chat file."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "chat.json"
        source.write_text(Transcript(chat_session(size)).dumps())
        output = str(Path(folder) / "out.json")
        measured = subprocess.run(
            [sys.executable, "-c", _CHILD_USAGE, *_CLI, "compact", str(source), "-o", output],
            check=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
            capture_output=True,
            text=True,
        )
        cpu, peak = measured.stdout.split()
        return source.stat().st_size, float(cpu), int(peak) * 1024


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cli-size", type=int, default=100_000)
    parser.add_argument("--no-cli", action="store_true")
    args = parser.parse_args(argv)
    small, large = growth(args.runs)
    ratio = large / small
    print("| figure | value | target | verdict |\n|---|--:|--:|---|")
    print(f"| compaction, 5,000 messages (CPU, median of {args.runs}) | {small * 1e3:.0f} ms | | |")
    print(f"| compaction, 50,000 messages | {large * 1e3:.0f} ms | | |")
    verdict = "PASS" if ratio <= GROWTH_MAX else "MISS"
    print(f"| growth 50,000 / 5,000 | {ratio:.1f}x | <= {GROWTH_MAX:.0f}x | {verdict} |")
    if not args.no_cli:
        size, cpu, peak = cli_compact(args.cli_size)
        cpu_verdict = "PASS" if cpu <= CLI_MAX_SECONDS else "MISS"
        memory_verdict = "PASS" if peak <= CLI_MAX_MEMORY * size else "MISS"
        print(f"| `compact` of {args.cli_size:,} chat messages ({size / 1e6:.1f} MB): CPU "
              f"| {cpu:.1f} s | <= {CLI_MAX_SECONDS:.0f} s | {cpu_verdict} |")  # fmt: skip
        print(f"| same: peak memory (max RSS) | {peak / 1e6:.0f} MB ({peak / size:.1f}x) "
              f"| <= {CLI_MAX_MEMORY:.0f}x | {memory_verdict} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
