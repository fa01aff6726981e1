"""The per-turn trigger check with each tokenizer: O(1) in the session's length.

``python -m benchmarks.tokenizer [--size 5000] [--turns 200] [--seed 1]
[--out benchmarks/TOKENIZER.md]``

For each meter (chars/4, and tiktoken's bundled ``cl100k_base`` when it loads), a
generated session of 100 and of ``--size`` messages is counted once (the first count:
every message tokenized), then grows by one message per turn for ``--turns`` turns; each
turn's check is an append, the meter's count and ``Compact.should_compact``, as the
CompactionHandler does on every response. The median per-turn check at ``--size`` should
stay within a small factor of the one at 100 messages (no re-tokenizing, no re-summing).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks.generator import generate_session
from benchmarks.run import machine
from forge_app.files import load_tokenizer
from forge_domain import CHARS_METER, Compact, Context, TokenMeter

BASE_SIZE = 100
MAX_GROWTH = 3.0


def _meters() -> list[TokenMeter]:
    tiktoken = load_tokenizer("tiktoken")
    meters = [CHARS_METER]
    if tiktoken.count is not None:
        meters.append(tiktoken.meter())
    return meters


def _measure(meter: TokenMeter, size: int, turns: int, seed: int) -> tuple[float, float]:
    """Seconds of the first count, and the median seconds of one turn's check."""
    raw = generate_session(size + turns, seed=seed)
    context = Context.from_openai(raw[:size])
    extra = Context.from_openai(raw[size:]).messages
    meter = meter.fresh()
    compact = Compact(token_threshold=10**9)
    started = time.perf_counter()
    meter.count(context)
    first = time.perf_counter() - started
    checks = []
    for message in extra:
        started = time.perf_counter()
        context = context.append(message)
        compact.should_compact(context, meter.count(context))
        checks.append(time.perf_counter() - started)
    return first, statistics.median(checks)


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def main() -> None:
    """Measure, print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/TOKENIZER.md"))
    args = parser.parse_args()
    rows = []
    verdicts = []
    for meter in _meters():
        small = _measure(meter, BASE_SIZE, args.turns, args.seed)
        large = _measure(meter, args.size, args.turns, args.seed)
        growth = large[1] / small[1]
        ok = growth <= MAX_GROWTH
        verdicts.append(ok)
        rows.append(
            f"| {meter.name} | {_time(small[0])} | {_time(large[0])} | {_time(small[1])} | "
            f"{_time(large[1])} | {growth:.2f}x | {'PASS' if ok else 'MISS'} |"
        )
    info = machine(None)
    text = "\n".join(
        [
            "# The per-turn trigger check with each tokenizer",
            "",
            f"`python -m benchmarks.tokenizer --size {args.size} --turns {args.turns} "
            f"--seed {args.seed}` (`benchmarks/tokenizer.py`)",
            "",
            f"Target: the median per-turn check (append, count, `should_compact`) at "
            f"{args.size:,} messages is at most {MAX_GROWTH:g}x the one at {BASE_SIZE}.",
            "",
            f"| meter | first count, {BASE_SIZE} msgs | first count, {args.size:,} msgs | "
            f"per turn, {BASE_SIZE} | per turn, {args.size:,} | growth | target |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            f"Machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}, "
            f"{info['platform']} (shared with other jobs while measured).",
            "",
        ]
    )
    print(text)
    args.out.write_text(text, encoding="utf-8")
    if not all(verdicts):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
