"""The command line pauses the cyclic collector around one transcript's compaction.

That is safe only while a compaction leaves no reference cycles behind (nothing would free
them until the collector runs again), so that property is tested here too: if it breaks,
``compact`` and ``batch`` would grow with every cycle a compaction makes.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import forge_app.files._transcripts as transcripts
from benchmarks.generator import MIXES, generate_session
from forge_app.cli._collector import collector_paused
from forge_app.cli.app import app
from forge_app.cli.compacting import compact_transcript
from forge_app.files._agents import default_agent
from forge_app.files._transcripts import parse_transcript
from tests.app.test_cli import SESSION_FILES


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("raises", [True, False])
def test_collector_paused_gives_the_collector_back_as_it_found_it(enabled, raises):
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(RuntimeError) if raises else _nothing(), collector_paused():
            assert not gc.isenabled()
            if raises:
                raise RuntimeError("the command failed")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _generated(mix: str) -> bytes:
    return json.dumps(generate_session(3_000, seed=2, mix=MIXES[mix])).encode()


_WORKLOADS = [(f"generated-{mix}", mix) for mix in sorted(MIXES)] + [
    (path.stem, path) for path in SESSION_FILES
]


@pytest.mark.parametrize("mode", ["forced", "automatic"])
@pytest.mark.parametrize(("name", "source"), _WORKLOADS, ids=[n for n, _ in _WORKLOADS])
def test_a_compaction_leaves_no_reference_cycles(name, source, mode):
    data = source.read_bytes() if isinstance(source, Path) else _generated(source)
    agent = default_agent()
    warm = parse_transcript(json.dumps(generate_session(300, seed=1)).encode())
    compact_transcript(warm, agent, source="warm-up", mode="forced")  # lazy imports, caches
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        transcript = parse_transcript(data)
        compacted, _ = compact_transcript(transcript, agent, source=name, mode=mode)
        del transcript, compacted
        assert gc.collect() == 0, f"{name}: the compaction left objects only a cycle holds"
    finally:
        if was:
            gc.enable()


def test_compact_reads_compacts_and_writes_with_the_collector_paused(tmp_path, monkeypatch):
    source = tmp_path / "session.json"
    source.write_bytes(json.dumps(generate_session(200, seed=3)).encode())
    seen: list[bool] = []
    read, write = transcripts.read_transcript, transcripts.write_transcript

    def reading(*args, **kwargs):
        seen.append(gc.isenabled())
        return read(*args, **kwargs)

    def writing(*args, **kwargs):
        seen.append(gc.isenabled())
        return write(*args, **kwargs)

    monkeypatch.setattr(transcripts, "read_transcript", reading)
    monkeypatch.setattr(transcripts, "write_transcript", writing)
    was = gc.isenabled()
    gc.enable()
    try:
        result = CliRunner().invoke(
            app, ["compact", str(source), "--force", "-o", str(tmp_path / "out.json")]
        )
        assert result.exit_code == 0, result.output
        assert seen == [False, False]
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
