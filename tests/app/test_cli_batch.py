"""``batch``: what cannot be read is a failed file, the footer counts what changed, and the
table reads at 80 columns."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from forge_app.cli.batch import find_transcripts
from forge_app.cli.compacting import CompactionMetrics
from forge_app.cli.report import batch_table
from tests.app.cli_process import forge
from tests.sessions import SESSIONS

SMALL = SESSIONS / "sweagent-gpt4o-testrepo.json"


@pytest.mark.skipif(not SMALL.exists(), reason="shared sessions not present")
def test_cli_batch_unreadable_names_are_failed_files(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "good.json").write_text(SMALL.read_text())
    (inputs / "x.json").mkdir()
    (inputs / "loop.json").symlink_to(inputs / "loop2.json")
    (inputs / "loop2.json").symlink_to(inputs / "loop.json")
    (inputs / "dangling.json").symlink_to(inputs / "gone.json")
    os.mkfifo(inputs / "pipe.jsonl")
    (inputs / "notes.txt").write_text("not a transcript")
    result = forge("batch", inputs, "-o", tmp_path / "out")
    records = [
        json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    ]
    failed = sorted(Path(r["input"]).name for r in records if "error" in r)
    actual = (result.returncode, failed, "1 unchanged, 5 failed" in result.stderr)
    expected = (1, ["dangling.json", "loop.json", "loop2.json", "pipe.jsonl", "x.json"], True)
    assert actual == expected, result.stderr


def test_find_transcripts_keeps_every_transcript_name(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("[]")
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    (tmp_path / "sub").mkdir()
    actual = [p.name for p in find_transcripts(str(tmp_path))]
    globbed = [p.name for p in find_transcripts(str(tmp_path / "*"))]
    assert (actual, globbed) == (["a.json", "dangling.jsonl", "dir.json"],) * 2


def _row(name: str, before: int, after: int, trigger: str) -> CompactionMetrics:
    return CompactionMetrics(
        input=f"/data/sessions/{name}",
        output=f"/out/{name}",
        agent="default",
        trigger=trigger,  # type: ignore[arg-type]
        token_threshold=22_400,
        tokens_before=before,
        tokens_after=after,
        messages_before=300,
        messages_after=300 if before == after else 40,
        token_reduction_percent=round((before - after) / before * 100, 2),
        message_reduction_percent=0.0 if before == after else 86.67,
        compacted_range=None if before == after else (2, 259),
        summarised_range=None if before == after else (2, 259),
        budget_status="not_set",
        engine="frame",
        seconds=0.5,
    )


def test_batch_table_counts_unchanged_files_apart_and_reads_at_80_columns() -> None:
    rows = [
        _row(
            "msa-deepseek-reasoner-sqlfluff-1763-with-a-long-name.json", 94_123, 21_456, "threshold"
        ),
        _row("openhands-llama4-ponyc-4595.json", 12_345, 12_345, "none"),
        _row("sweagent-marshmallow-1867-fc.json", 7_392, 7_392, "threshold"),
    ]
    buffer = io.StringIO()
    Console(file=buffer, width=80, no_color=True).print(
        batch_table(rows, [], Path("/out"), width=80)
    )
    lines = buffer.getvalue().splitlines()
    numbers = ["94,123", "21,456", "12,345", "7,392", "300 → 40", "3..260"]  # from 1
    actual = (
        max(len(line) for line in lines) <= 80,
        [n for n in numbers if not any(n in line for line in lines)],
        len([line for line in lines if "%" in line]),  # one line per row, and the total
        lines[-1].strip(),
    )
    assert actual == (True, [], 4, "1 compacted, 2 unchanged, 0 failed"), "\n".join(lines)
