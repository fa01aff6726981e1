"""``replay`` against one ``compact`` on long chat-only sessions: replay must stay linear.

A replay runs the whole event pipeline once per recorded turn (and compacts whenever
the agent's threshold is reached), so it may cost a few compactions, but not one per
turn: the target is a replay of a 16,000-message chat session within 3x the time of
compacting the same file once. Both go through the command line's own functions
(``compact_transcript`` for ``compact``, ``replay_turns`` for ``replay``) with the
bundled default agent, on generated sessions of user and assistant messages only
(the shape that made replay quadratic: every turn is one question and one answer).

    python -m benchmarks.replay_scale                  # 2k, 4k, 8k and 16k messages
    python -m benchmarks.replay_scale --sizes 16000 --runs 3
    python -m benchmarks.replay_scale --markdown benchmarks/REPLAY_SCALE.md

Prints one row per size (median wall times over ``--runs``) and exits 1 when the
ratio at the largest size is over 3.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import anyio

from forge_app.cli.compacting import compact_transcript
from forge_app.cli.replay import replay_turns
from forge_app.files import Transcript, default_agent
from forge_app.runtime import configure_logging
from forge_domain import Context

TARGET_RATIO = 3.0
"""The most a replay may cost, in compactions of the same session."""
_WORDS = ("the", "parser", "fails", "on", "nested", "lists", "so", "I", "changed", "tokenizer",
          "and", "tests", "now", "pass", "please", "check", "config", "loader", "error",
          "handling", "retry", "logic", "cache", "invalidation", "docs")  # fmt: skip
"""The vocabulary of the generated messages."""


def chat_session(messages: int, *, seed: int = 0) -> Context:
    """A system prompt, then alternating user and assistant messages (``messages`` in all).

    Users write 5-60 words, the assistant 20-200: about 700 characters per exchange.
    """
    rng = random.Random(seed)

    def sentence(low: int, high: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high))).capitalize()

    raw: list[object] = [{"role": "system", "content": "You are a helpful assistant."}]
    while len(raw) < messages:
        raw.append({"role": "user", "content": sentence(5, 60) + "?"})
        raw.append({"role": "assistant", "content": sentence(20, 200) + "."})
    return Context.from_openai(raw[:messages])


def _compact_seconds(transcript: Transcript) -> float:
    started = time.perf_counter()
    compact_transcript(transcript, default_agent(), source="generated")
    return time.perf_counter() - started


def _replay_seconds(transcript: Transcript) -> tuple[float, int]:
    started = time.perf_counter()
    turns, _ = anyio.run(replay_turns, transcript, default_agent())
    seconds = time.perf_counter() - started
    return seconds, sum(1 for turn in turns for c in turn.compactions if c.compacted_range)


def measure(size: int, runs: int) -> tuple[float, float, int]:
    """Median seconds of one ``compact`` and of one ``replay``, and the replay's compactions."""
    transcript = Transcript(chat_session(size))
    compacts, replays, compactions = [], [], 0
    for _ in range(runs):
        compacts.append(_compact_seconds(transcript))
        seconds, compactions = _replay_seconds(transcript)
        replays.append(seconds)
    return statistics.median(compacts), statistics.median(replays), compactions


def main(argv: list[str] | None = None) -> int:
    """Measure, print (and optionally write) the table; 1 when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000,4000,8000,16000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    configure_logging("console", level="warning")  # as the command line runs by default
    sizes = [int(size) for size in args.sizes.split(",")]
    rows = [
        "| messages | compact (s) | replay (s) | replay / compact | compactions in the replay |",
        "|---:|---:|---:|---:|---:|",
    ]
    ratio = 0.0
    for size in sizes:
        compact, replay, compactions = measure(size, args.runs)
        ratio = replay / compact
        rows.append(f"| {size:,} | {compact:.2f} | {replay:.2f} | {ratio:.2f} | {compactions} |")
        print(rows[-1], flush=True)
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    summary = (
        f"Target: replay within {TARGET_RATIO:g}x one compact at {sizes[-1]:,} messages: "
        f"{verdict} ({ratio:.2f}x). Median of {args.runs} run(s); Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, shared machine."
    )
    print(summary)
    if args.markdown is not None:
        command = "python -m benchmarks.replay_scale " + " ".join(argv or sys.argv[1:])
        text = "\n".join(
            [
                "# replay against one compact, chat-only sessions",
                "",
                f"`{command.strip()}`",
                "",
                *rows,
                "",
                summary,
                "",
            ]
        )
        args.markdown.write_text(text)
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
