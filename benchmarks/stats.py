"""Repeated timing in one process: a median and its spread."""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

T = TypeVar("T")

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
"""``cpu``: this process's CPU time (robust on a shared machine); ``wall``: elapsed time."""
_clock: list[Callable[[], float]] = [time.process_time]


def use_clock(name: str) -> None:
    """Time runs with the clock called ``name`` (a key of CLOCKS)."""
    _clock[0] = CLOCKS[name]


def clock() -> float:
    """The current reading of the chosen clock, in seconds."""
    return _clock[0]()


@dataclass(frozen=True)
class Stats:
    """Summary of repeated samples, in seconds (or bytes for memory)."""

    median: float
    low: float
    """The 10th percentile with 20 samples or more, else the minimum."""
    high: float
    """The 90th percentile with 20 samples or more, else the maximum."""
    samples: int

    @classmethod
    def of(cls, samples: list[float]) -> Stats:
        """Summarise a non-empty list of samples."""
        ordered = sorted(samples)
        if len(ordered) >= 20:
            deciles = statistics.quantiles(ordered, n=10)
            low, high = deciles[0], deciles[-1]
        else:
            low, high = ordered[0], ordered[-1]
        return cls(statistics.median(ordered), low, high, len(ordered))

    @property
    def spread_label(self) -> str:
        """How ``low``/``high`` were taken."""
        return "p10-p90" if self.samples >= 20 else "min-max"

    def as_json(self) -> dict[str, float | int | str]:
        """The figures for the JSON report."""
        return {**asdict(self), "spread": self.spread_label}


def time_runs(work: Callable[[T], object], runs: int, setup: Callable[[], T]) -> Stats:
    """Time ``work(setup())`` ``runs`` times; setup and a full collection are not timed."""
    return time_interleaved([(work, setup)], runs)[0]


def time_interleaved(
    jobs: Sequence[tuple[Callable[[Any], object], Callable[[], Any]]], runs: int
) -> list[Stats]:
    """Time several ``(work, setup)`` jobs ``runs`` times each, one run of each in turn.

    Jobs compared as a ratio (ours / Hermes) then see the same spells of machine load:
    on a shared machine, measuring one side's runs, then the other's, lets a busy
    minute land on one side only.
    """
    samples: list[list[float]] = [[] for _ in jobs]
    for _ in range(runs):
        for taken, (work, setup) in zip(samples, jobs, strict=True):
            arg = setup()
            gc.collect()
            start = clock()
            work(arg)
            taken.append(clock() - start)
    return [Stats.of(taken) for taken in samples]


def time_calls(work: Callable[[T], object], arg: T, runs: int) -> Stats:
    """Time ``work(arg)`` ``runs`` times (a full collection before each, not timed)."""
    return time_runs(work, runs, lambda: arg)


def peak_memory(work: Callable[[], T]) -> tuple[int, T]:
    """Peak bytes allocated (tracemalloc) while ``work`` runs, above what existed before."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        value = work()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before, value


def fmt_time(seconds: float) -> str:
    """A duration with a readable unit."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_stats(stats: Stats) -> str:
    """``median [low-high]`` with units."""
    return f"{fmt_time(stats.median)} [{fmt_time(stats.low)}-{fmt_time(stats.high)}]"
