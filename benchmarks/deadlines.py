"""How long a compaction waits for a summary model that trickles or hangs (issue 13).

httpx's ``timeout`` is per read: a server sending one byte every 0.2 s never trips it,
and a hung one costs (retries + 1) x timeout. The ``llm`` engine has a total deadline
around its summary call, retries included, after which it falls back to the frame.
This measures the wall time from ``compress()`` to the fallback against a loopback
server (``tests/app/fake_openai_server.py``) for a few deadlines, with the engine's
default per-read ``timeout`` and two retries, and prints (or writes) a Markdown table.

    python -m benchmarks.deadlines [--deadlines 1,2,5] [--runs 3] [--out benchmarks/DEADLINES.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import anyio

from forge_app.compaction.llm._engine import LLMEngine
from tests.app.engine_sessions import coding_agent, coding_session
from tests.app.fake_openai_server import FakeOpenAIServer, Reply

_SUMMARY = "## Goal\nMake the parser tests pass.\n## Progress\nEdited the parser.\n" * 4
_PROVIDERS = {
    "drips one byte every 0.2 s": lambda: Reply.dripping(_SUMMARY, every=0.2),
    "hangs": Reply.hanging,
}


async def _fallback_seconds(reply: Reply, deadline: float) -> tuple[float, str]:
    """Seconds until ``compress()`` returned, and the engine that wrote the summary."""
    with FakeOpenAIServer() as server:
        server.script(reply, reply, reply)
        async with server.client(timeout=120.0, max_retries=2) as client:
            engine = LLMEngine(coding_agent(), client=client, timeout=120.0, deadline=deadline)
            started = time.monotonic()
            outcome = await engine.compress(coding_session())
            return time.monotonic() - started, outcome.result.engine


def measure(deadlines: list[float], runs: int) -> list[str]:
    """Markdown rows: provider, deadline, median and max wall seconds, who summarised."""
    rows = []
    for name, make in _PROVIDERS.items():
        for deadline in deadlines:
            samples = [anyio.run(_fallback_seconds, make(), deadline) for _ in range(runs)]
            seconds = [s for s, _ in samples]
            engines = sorted({e for _, e in samples})
            rows.append(
                f"| {name} | {deadline:g} | {statistics.median(seconds):.2f} | "
                f"{max(seconds):.2f} | {', '.join(engines)} |"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.deadlines", description=__doc__)
    parser.add_argument("--deadlines", default="1,2,5", help="comma-separated seconds")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the Markdown here as well")
    args = parser.parse_args(argv)
    deadlines = [float(d) for d in args.deadlines.split(",")]
    lines = [
        "# Summary-call deadlines: time to fall back to the frame",
        "",
        f"`python -m benchmarks.deadlines --deadlines {args.deadlines} --runs {args.runs}`",
        "",
        f"Python {platform.python_version()}, {platform.system()} {platform.machine()}; "
        "loopback server, per-read timeout 120 s, 2 retries (without a total deadline the "
        "dripping body alone takes over a minute and a hung server 3 x 120 s).",
        "",
        "| provider | deadline (s) | median wall (s) | max wall (s) | summary by |",
        "|---|---:|---:|---:|---|",
        *measure(deadlines, args.runs),
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
