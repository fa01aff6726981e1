"""CPU time of the command line's start-up: ``--help`` and a ``compact`` that fires no trigger.

    python -m benchmarks.startup [--runs 15]

Each case runs in a fresh interpreter; the figure is the child's user + system CPU time
(``resource.getrusage``), which a loaded machine inflates less than wall time. Besides
the two commands it times what no command can avoid (the interpreter, ``forge_domain``,
typer and rich), so the part of the start-up the command line controls can be read off.
Results: ``benchmarks/STARTUP.md``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "forge_app" / "demo" / "session.json"
_CLI = "from forge_app.cli import main; main()"


def cases(output: Path) -> dict[str, list[str]]:
    """What is timed: a label and the interpreter's arguments."""
    return {
        "python -c pass": ["-c", "pass"],
        "import forge_domain": ["-c", "import forge_domain"],
        "import typer, rich.console": ["-c", "import typer, rich.console"],
        "forge-compact --help": ["-c", _CLI, "--help"],
        "forge-compact compact (no trigger)": [
            "-c",
            _CLI,
            "compact",
            str(SESSION),
            "-o",
            str(output),
        ],
    }


def cpu_seconds(arguments: list[str]) -> float:
    """User + system CPU time of one run of the interpreter with ``arguments``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, *arguments], check=True, capture_output=True, cwd=ROOT, timeout=120
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        timed = cases(Path(folder) / "out.json")
        samples: dict[str, list[float]] = {label: [] for label in timed}
        for _ in range(runs):  # interleaved, so a burst of load hits every case alike
            for label, arguments in timed.items():
                samples[label].append(cpu_seconds(arguments))
    print(f"| case | min CPU s | median CPU s |  ({runs} runs each)")
    print("|---|---|---|")
    for label, values in samples.items():
        print(f"| {label} | {min(values):.3f} | {statistics.median(values):.3f} |")


if __name__ == "__main__":
    main()
