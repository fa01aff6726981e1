"""``forge-compact batch`` with one job and with every core, on the shared sessions repeated.

Copies every shared session enough times to make at least ``--files`` files (220 by default
from the 11 sessions), then runs the real command line, ``batch -j 1`` and ``batch`` (one
job per core), interleaved, and prints the median wall times, the speed-up and MB/s.

    python -m benchmarks.batch            # 3 runs each
    python -m benchmarks.batch --runs 5 --files 400
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MAIN = "from forge_app.cli import main; main()"
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sessions"


def _copies(source: Path, folder: Path, files: int) -> int:
    sessions = sorted(source.glob("*.json"))
    rounds = -(-files // len(sessions))
    size = 0
    for number in range(rounds):
        for session in sessions:
            target = folder / f"{session.stem}-{number}.json"
            shutil.copyfile(session, target)
            size += target.stat().st_size
    return size


def _batch(folder: Path, out: Path, jobs: list[str]) -> float:
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-c", _MAIN, "batch", str(folder), "-o", str(out), *jobs]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Time batch with one job and with every core; print a Markdown summary."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batch")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=Path, default=_SHARED)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        folder, out = Path(temp) / "in", Path(temp) / "out"
        folder.mkdir()
        size = _copies(args.sessions, folder, args.files)
        count = len(list(folder.glob("*.json")))
        one, every = [], []
        for _ in range(args.runs):
            one.append(_batch(folder, out, ["--jobs", "1"]))
            every.append(_batch(folder, out, []))
    cores = os.cpu_count() or 1
    one_s, every_s = statistics.median(one), statistics.median(every)
    print(f"batch of {count} files, {size / 1e6:.1f} MB, {args.runs} interleaved runs each")
    print(f"- 1 job: {one_s:.2f} s ({size / 1e6 / one_s:.1f} MB/s)")
    print(f"- {cores} jobs: {every_s:.2f} s ({size / 1e6 / every_s:.1f} MB/s)")
    print(f"- speed-up: {one_s / every_s:.2f}x (target 1.7x on 2 cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
