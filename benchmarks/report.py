"""Collects the figures of one run, renders Markdown tables and checks the targets."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from benchmarks.stats import Stats, fmt_stats, fmt_time

Row = dict[str, object]

TRIGGER_MAX_MEDIAN = 20e-6
TRIGGER_MAX_GROWTH = 1.5
COMPACTION_MIN_SPEEDUP = 10.0
COMPACTION_TARGET_SIZE = 5_000
COMPACTION_MAX_SLOPE = 1.15
PEAK_MAX_RATIO = 3.0


def _stats(row: Row, key: str) -> Stats | None:
    value = row.get(key)
    return value if isinstance(value, Stats) else None


def _cell(row: Row, key: str) -> str:
    stats = _stats(row, key)
    return fmt_stats(stats) if stats else "—"


def _shape(row: Row, key: str) -> str:
    value = row.get(key)
    if not isinstance(value, tuple):
        return "—"
    messages, tokens = value
    return f"{messages:,} / {tokens:,}"


def _ratio(numerator: Stats | None, denominator: Stats | None, digits: int = 2) -> str:
    if numerator is None or denominator is None or denominator.median == 0:
        return "—"
    return f"{numerator.median / denominator.median:.{digits}f}"


def _mem(row: Row, key: str) -> str:
    peak = row.get(key)
    size = row.get("json_bytes")
    if not isinstance(peak, int) or not isinstance(size, int) or size == 0:
        return "—"
    return f"{peak / 2**20:.1f} MB ({peak / size:.2f}x)"


def _jsonable(value: object) -> object:
    if isinstance(value, Stats):
        return value.as_json()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


@dataclass
class Report:
    """Every figure of one run."""

    machine: dict[str, object]
    command: str
    elapsed: float = 0.0
    sections: dict[str, object] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)
    targets: list[tuple[str, bool | None, str]] = field(default_factory=list)

    # -- figures -------------------------------------------------------------------------

    def trigger(self, rows: dict[int, Row], config: str) -> None:
        """Figure 1."""
        self.sections["trigger"] = {"config": config, "sizes": rows}
        lines = [
            "### 1. Trigger check after each new response (per call)",
            "",
            f"Config: {config}. Ours: `context.token_count()` + `compact.should_compact(...)`"
            " on the session just grown by one message. Hermes: `estimate_request_tokens_rough`"
            " (messages + tool schemas) + `should_compress`, its pre-turn check.",
            "",
            "| messages | ours check, median [p10-p90] | ours append | Hermes estimate,"
            " median [spread] | Hermes / ours |",
            "|---:|---|---|---|---:|",
        ]
        for size, row in rows.items():
            check, theirs = _stats(row, "check"), _stats(row, "hermes_estimate")
            lines.append(
                f"| {size:,} | {_cell(row, 'check')} | {fmt_time(_stats(row, 'append').median)}"  # type: ignore[union-attr]
                f" | {_cell(row, 'hermes_estimate')} | {_ratio(theirs, check, 0)} |"
            )
        self.tables.append("\n".join(lines))
        sizes = sorted(rows)
        ref = 10_000 if 10_000 in rows else sizes[-1]
        small, large = _stats(rows[sizes[0]], "check"), _stats(rows[ref], "check")
        if small and large:
            growth = large.median / small.median
            self.targets.append(
                (
                    f"trigger check at {ref:,} ≤ {TRIGGER_MAX_GROWTH}x its cost at {sizes[0]:,}",
                    growth <= TRIGGER_MAX_GROWTH,
                    f"{growth:.2f}x",
                )
            )
            self.targets.append(
                (
                    f"trigger check median at {ref:,} ≤ 20 µs",
                    large.median <= TRIGGER_MAX_MEDIAN,
                    fmt_time(large.median),
                )
            )

    def compaction(self, rows: dict[int, Row]) -> None:
        """Figures 2-4."""
        self.sections["compaction"] = rows
        lines = [
            "### 2. One deterministic compaction vs Hermes `compress()` (stubbed summariser)",
            "",
            "Ours: `Compactor(default compact).compact(context)`, automatic strategy and the"
            " `/compact` strategy; input a `Context` decoded afresh (untimed) for each run, so"
            " no parsed arguments are cached from an earlier run. Hermes: a fresh"
            " `ContextCompressor` (200K window) per run, `compress(messages)`.",
            "",
            "| messages | JSON | ours (auto), median [min-max] | ours (/compact) |"
            " Hermes compress() | ours / Hermes |",
            "|---:|---:|---|---|---|---:|",
        ]
        for size, row in rows.items():
            json_mb = int(row["json_bytes"]) / 2**20  # type: ignore[call-overload]
            lines.append(
                f"| {size:,} | {json_mb:.1f} MB | {_cell(row, 'ours')} |"
                f" {_cell(row, 'ours_forced')} | {_cell(row, 'hermes')} |"
                f" {_ratio(_stats(row, 'ours'), _stats(row, 'hermes'), 3)} |"
            )
        lines += [
            "",
            "Messages / tokens (chars/4 of content, same measure for both sides) after one"
            " compaction, and peak traced memory of that compaction (x the transcript's JSON"
            " size):",
            "",
            "| messages | before | ours (auto) | ours (/compact) | Hermes | ours peak |"
            " Hermes peak |",
            "|---:|---|---|---|---|---|---|",
        ]
        for size, row in rows.items():
            lines.append(
                f"| {size:,} | {_shape(row, 'in')} | {_shape(row, 'ours_out')} |"
                f" {_shape(row, 'ours_forced_out')} | {_shape(row, 'hermes_out')} |"
                f" {_mem(row, 'ours_peak_bytes')} | {_mem(row, 'hermes_peak_bytes')} |"
            )
        lines += [
            "",
            "### 3. `Context.from_openai` and `to_openai`",
            "",
            "| messages | JSON | from_openai, median [min-max] | to_openai | per message (both) |",
            "|---:|---:|---|---|---:|",
        ]
        for size, row in rows.items():
            parse, write = _stats(row, "from_openai"), _stats(row, "to_openai")
            json_mb = int(row["json_bytes"]) / 2**20  # type: ignore[call-overload]
            per = fmt_time((parse.median + write.median) / size) if parse and write else "—"
            lines.append(
                f"| {size:,} | {json_mb:.1f} MB | {_cell(row, 'from_openai')} |"
                f" {_cell(row, 'to_openai')} | {per} |"
            )
        self.tables.append("\n".join(lines))
        self._compaction_targets(rows)

    def _compaction_targets(self, rows: dict[int, Row]) -> None:
        target = rows.get(COMPACTION_TARGET_SIZE)
        if target is not None:
            mine, theirs = _stats(target, "ours"), _stats(target, "hermes")
            if mine and theirs:
                speedup = theirs.median / mine.median
                self.targets.append(
                    (
                        f"compaction of {COMPACTION_TARGET_SIZE:,} messages ≥ 10x faster than"
                        " Hermes",
                        speedup >= COMPACTION_MIN_SPEEDUP,
                        f"{speedup:.1f}x ({fmt_time(mine.median)} vs {fmt_time(theirs.median)})",
                    )
                )
        timed = {size: _stats(row, "ours") for size, row in rows.items() if size >= 1_000}
        measured = {size: s for size, s in timed.items() if s is not None}
        if len(measured) >= 2:
            low, high = min(measured), max(measured)
            slope = math.log(measured[high].median / measured[low].median) / math.log(high / low)
            self.targets.append(
                (
                    f"compaction cost at most linear ({low:,}→{high:,}: log-log slope ≤"
                    f" {COMPACTION_MAX_SLOPE})",
                    slope <= COMPACTION_MAX_SLOPE,
                    f"slope {slope:.2f}",
                )
            )
        self._peak_memory_target(
            "peak memory of a compaction ≤ 3x the transcript's JSON size",
            {f"at {size:,} messages": row for size, row in rows.items()},
        )
        if not measured:
            self.targets.append(
                ("compaction targets", None, "forge_app.compaction._compactor not available")
            )

    def real(self, rows: dict[str, Row], config: str) -> None:
        """Figure 5 plus timings on the real sessions."""
        self.sections["real_sessions"] = {"config": config, "files": rows}
        lines = [
            "### 4. Real sessions (`/work/shared/data/sessions/`)",
            "",
            f"Config: {config}. Messages / tokens before and after one automatic compaction"
            " (ours) and one `compress()` (Hermes, 200K window); `fires` = our trigger check"
            " at that config says compact now.",
            "",
            "| session | before | fires | ours after | token reduction | Hermes after |"
            " from+to_openai | ours compact | Hermes compress | ours / Hermes | ours peak |",
            "|---|---|:-:|---|---:|---|---|---|---|---:|---|",
        ]
        for name, row in rows.items():
            before, after = row.get("in"), row.get("ours_out")
            reduction = "—"
            if isinstance(before, tuple) and isinstance(after, tuple) and before[1]:
                tokens = (1 - after[1] / before[1]) * 100
                reduction = f"{tokens:.0f}% (msgs {(1 - after[0] / before[0]) * 100:.0f}%)"
            lines.append(
                f"| {name.removesuffix('.json')} | {_shape(row, 'in')} |"
                f" {'yes' if row.get('fires') else 'no'} | {_shape(row, 'ours_out')} |"
                f" {reduction} | {_shape(row, 'hermes_out')} |"
                f" {fmt_time(_stats(row, 'codec').median)} |"  # type: ignore[union-attr]
                f" {_cell(row, 'ours')} | {_cell(row, 'hermes')} |"
                f" {_ratio(_stats(row, 'ours'), _stats(row, 'hermes'), 3)} |"
                f" {_mem(row, 'ours_peak_bytes')} |"
            )
        codec = [_stats(row, "codec") for row in rows.values()]
        mine = [_stats(row, "ours") for row in rows.values()]
        theirs = [_stats(row, "hermes") for row in rows.values()]
        if rows and all(codec) and all(mine):
            total = sum(s.median for s in [*codec, *mine] if s)
            line = (
                f"\nOffline, all {len(rows)} sessions one after another (read + compact + write,"
                f" medians summed): {fmt_time(total)}, i.e. {len(rows) / total:,.0f} transcripts/s"
            )
            if all(theirs):
                hermes_total = sum(s.median for s in theirs if s)
                line += f"; Hermes compress() alone: {fmt_time(hermes_total)}"
            lines.append(line + ".")
        self.tables.append("\n".join(lines))
        self._peak_memory_target(
            "peak memory of a compaction ≤ 3x the JSON size (real sessions)",
            {f"({name.removesuffix('.json')})": row for name, row in rows.items()},
        )

    def _peak_memory_target(self, title: str, rows: dict[str, Row]) -> None:
        """Add the peak-memory target for ``rows`` (keyed by how the worst one is named)."""
        ratios = [
            (where, int(row["ours_peak_bytes"]) / int(row["json_bytes"]))  # type: ignore[call-overload]
            for where, row in rows.items()
            if isinstance(row.get("ours_peak_bytes"), int)
        ]
        if ratios:
            where, worst = max(ratios, key=lambda item: item[1])
            self.targets.append((title, worst <= PEAK_MAX_RATIO, f"worst {worst:.2f}x {where}"))

    # -- output --------------------------------------------------------------------------

    def markdown(self) -> str:
        """Machine, tables and target verdicts."""
        machine = ", ".join(f"{k}: {v}" for k, v in self.machine.items())
        verdicts = ["### Targets", "", "| target | result | measured |", "|---|:-:|---|"]
        for name, ok, measured in self.targets:
            mark = "n/a" if ok is None else ("PASS" if ok else "MISS")
            verdicts.append(f"| {name} | {mark} | {measured} |")
        parts = [f"Machine: {machine}", f"Command: `{self.command}`", *self.tables]
        return "\n\n".join([*parts, "\n".join(verdicts)])

    def as_json(self) -> dict[str, object]:
        """All figures, JSON-ready."""
        return {
            "machine": self.machine,
            "command": self.command,
            "elapsed_seconds": self.elapsed,
            "units": {"timings": "seconds", "*_bytes": "bytes", "in/*_out": "[messages, tokens]"},
            "targets": [{"target": t, "met": ok, "measured": m} for t, ok, m in self.targets],
            **{k: _jsonable(v) for k, v in self.sections.items()},
        }
