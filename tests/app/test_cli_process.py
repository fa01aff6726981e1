"""The warm runner of the CLI tests gives what the installed script gives, run by run."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.app.cli_process import _differs_at_start, environment, forge
from tests.sessions import SESSIONS

SMALL = SESSIONS / "sweagent-gpt4o-testrepo.json"


def _outcome(result) -> tuple[int, str, str]:
    """Status, stdout and stderr, with the run's own timings (``0.1 s``, ``2.0 MB/s``) masked."""
    return (
        result.returncode,
        result.stdout,
        re.sub(r"\d+\.\d+ ?(?:MB/s|MB|s)\b", "#", result.stderr),
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["validate", "missing.json"],
        ["validate", "-"],
        ["batch", "in", "-o", "out"],
        ["history", "list", "--store", "sqlite:///store.db"],
    ],
    ids=["version", "bad-input", "stdin", "batch-in-cwd", "history"],
)
def test_warm_run_gives_the_fresh_script_s_status_stdout_and_stderr(tmp_path, args):
    if not SMALL.is_file():
        pytest.skip(f"real sessions not found at {SESSIONS}")
    stdin = "\n".join(json.dumps(m) for m in json.loads(SMALL.read_text())) + "\n"
    results = {}
    for kind in ("warm", "fresh"):
        folder = tmp_path / kind
        (folder / "in").mkdir(parents=True)
        (folder / "in" / "s.json").write_bytes(SMALL.read_bytes())
        result = forge(*args, cwd=folder, stdin=stdin, fresh=kind == "fresh")
        files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
        results[kind] = (*_outcome(result), files)
    assert results["warm"] == results["fresh"]
    assert results["warm"][0] in (0, 2), results["warm"]


def test_warm_run_sees_the_environment_and_directory_it_asks_for(tmp_path):
    store = tmp_path / "named.db"
    listed = forge("history", "list", env={"FORGE_COMPACT_STORE": f"sqlite:///{store}"})
    relative = forge("validate", "here.json", cwd=tmp_path)
    assert (listed.returncode, str(store) in listed.stderr) == (2, True), listed.stderr
    assert (relative.returncode, "here.json" in relative.stderr) == (2, True), relative.stderr


def test_a_variable_read_at_start_up_makes_the_run_fresh(tmp_path):
    """``COLUMNS`` sizes the CLI's consoles when they are built, at import: a warm run,
    forked from a server built under ``COLUMNS=200``, would print 81-column lines here."""
    base = environment()
    assert _differs_at_start(base, {**base, "FORGE_X": "1", "OPENAI_API_KEY": "k"}) is False
    assert _differs_at_start(base, {**base, "COLUMNS": "80"}) is True
    assert _differs_at_start(base, {**base, "PYTHONPATH": os.fspath(Path.cwd())}) is True
    if not SMALL.is_file():
        pytest.skip(f"real sessions not found at {SESSIONS}")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "s.json").write_bytes(SMALL.read_bytes())
    narrow = forge("batch", "in", "-o", "out", cwd=tmp_path, env={"COLUMNS": "60"})
    lines = (narrow.stdout + narrow.stderr).splitlines()
    assert (narrow.returncode, max(len(line) for line in lines)) == (0, 60), narrow.stderr
