"""The input is never touched: an output that is an input is refused before anything runs.

Every command checks all of its outputs first (``check_outputs``): an output that
resolves to an input (same path, ``./``, ``..``, a symlink, a hard link, standard
output appended to it) or to the agent file, the same output given twice, or an output
in a missing directory ends the command with exit 2 and one line, and no file is
written, not even the outputs that were fine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forge_app.cli.demo import bundled_files
from forge_app.errors import OutputIsInput, OutputNotWritten
from forge_app.files._atomic import check_outputs, ensure_not_an_input
from tests.app.cli_process import forge
from tests.app.test_cli import _script

SESSION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the parser."},
    {"role": "assistant", "content": "Reading it.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": "def parse(): ...\n" * 200},
    {"role": "assistant", "content": "Fixed."},
    {"role": "user", "content": "Thanks."},
]  # fmt: skip
AGENT = "agents:\n  - id: a\n    compact:\n      retention_window: 2\n"


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``folder`` (links as what they point at): bytes and mtime."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(folder))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


def _setup(folder: Path) -> None:
    (folder / "t.json").write_text(json.dumps(SESSION))
    (folder / "a.yaml").write_text(AGENT)
    (folder / "in").mkdir()
    (folder / "in" / "b.json").write_text(json.dumps(SESSION))
    (folder / "sub").mkdir()
    (folder / "link.json").symlink_to("t.json")
    os.link(folder / "t.json", folder / "hard.json")


CASES = [
    ("compact-same", ["compact", "t.json", "--force", "-o", "t.json"], "never overwritten"),
    ("compact-dot", ["compact", "t.json", "--force", "-o", "./t.json"], "never overwritten"),
    ("compact-dotdot", ["compact", "t.json", "-o", "sub/../t.json"], "never overwritten"),
    ("compact-symlink", ["compact", "t.json", "--force", "-o", "link.json"], "never overwritten"),
    ("compact-hardlink", ["compact", "t.json", "--force", "-o", "hard.json"], "never overwritten"),
    ("compact-input-via-link", ["compact", "link.json", "-o", "t.json"], "never overwritten"),
    (
        "compact-metrics",
        ["compact", "t.json", "-o", "out.json", "--json-metrics", "t.json"],
        "never overwritten",
    ),
    (
        "compact-agent-file",
        ["compact", "t.json", "--agent", "a.yaml", "-o", "a.yaml"],
        "never overwritten",
    ),
    (
        "compact-metrics-missing-dir",
        ["compact", "t.json", "-o", "out.json", "--json-metrics", "nodir/m.json"],
        "does not exist",
    ),
    (
        "compact-same-output-twice",
        ["compact", "t.json", "-o", "out.json", "--json-metrics", "./out.json"],
        "two outputs",
    ),
    ("compact-into-a-directory", ["compact", "t.json", "-o", "sub"], "is a directory"),
    ("replay-same", ["replay", "t.json", "-o", "t.json"], "never overwritten"),
    ("replay-metrics", ["replay", "t.json", "--json-metrics", "hard.json"], "never overwritten"),
    (
        "replay-chart-missing-dir",
        ["replay", "t.json", "-o", "out.json", "--chart", "nodir/c.svg"],
        "does not exist",
    ),
    ("batch-into-inputs", ["batch", "in", "-o", "in"], "never overwritten"),
    ("batch-glob-into-inputs", ["batch", "in/*.json", "-o", "in/"], "never overwritten"),
    ("batch-under-a-file", ["batch", "in", "-o", "t.json/out"], "not a directory"),
    ("eval-json", ["eval", "t.json", "--windows", "8000", "--json", "t.json"], "never overwritten"),
    ("run-agent-file", ["run", "a.yaml", "task", "-o", "a.yaml"], "never overwritten"),
    ("report-over-input", ["report", "t.json", "-o", "./t.json"], "never overwritten"),
    ("report-over-agent", ["report", "t.json", "-a", "a.yaml", "-o", "a.yaml"], "overwritten"),
    (
        "report-store-on-input",
        ["report", "t.json", "-o", "p.html", "--store", "t.json"],
        "never overwritten",
    ),
    ("compact-store-on-input", ["compact", "t.json", "--store", "t.json"], "never overwritten"),
    (
        "compact-store-url-on-input",
        ["compact", "t.json", "--store", "sqlite:///hard.json"],
        "never overwritten",
    ),
    ("replay-store-on-input", ["replay", "t.json", "--store", "link.json"], "never overwritten"),
    ("run-store-on-agent", ["run", "a.yaml", "task", "--store", "a.yaml"], "never overwritten"),
    (
        "history-export-over-store",
        ["history", "export", "x", "--store", "t.json", "-o", "t.json"],
        "never overwritten",
    ),
    (
        "history-expand-over-store",
        ["history", "expand", "x", "c1", "--store", "t.json", "-o", "./t.json"],
        "never overwritten",
    ),
]


@pytest.mark.parametrize(("args", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_output_resolving_to_an_input_is_refused_and_nothing_is_written(tmp_path, args, message):
    _setup(tmp_path)
    before = _files(tmp_path)

    result = forge(*args, cwd=tmp_path)

    lines = result.stderr.strip().splitlines()
    actual = (result.returncode, len(lines), message in result.stderr, _files(tmp_path))
    assert actual == (2, 1, True, before), result.stderr


def test_standard_output_appended_to_the_input_is_refused(tmp_path):
    _setup(tmp_path)
    before = _files(tmp_path)
    with (tmp_path / "t.json").open("rb") as stdin, (tmp_path / "t.json").open("ab") as stdout:
        result = subprocess.run(
            [_script(), "compact", "-", "--force"],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=False,
            cwd=tmp_path,
            check=False,
            timeout=120,
        )

    actual = (result.returncode, b"never overwritten" in result.stderr, _files(tmp_path))
    assert actual == (2, True, before), result.stderr


def test_demo_refuses_to_write_over_its_bundled_session(tmp_path):
    session = next(path for path in bundled_files() if path.suffix == ".json")
    (tmp_path / "replayed.json").symlink_to(session)
    before = session.read_bytes()

    result = forge("demo", "-o", tmp_path)

    actual = (result.returncode, "never overwritten" in result.stderr, session.read_bytes())
    assert actual == (2, True, before), result.stderr
    assert not (tmp_path / "compacted.json").exists()


def test_outputs_that_are_not_inputs_are_written(tmp_path):
    _setup(tmp_path)
    result = forge(
        "compact", "t.json", "--force", "-o", "out.json", "--json-metrics", "m.json", cwd=tmp_path
    )
    actual = (result.returncode, (tmp_path / "out.json").is_file(), (tmp_path / "m.json").is_file())
    assert actual == (0, True, True), result.stderr


# -- the helper itself ------------------------------------------------------------------------


def test_check_outputs_accepts_devices_stdout_and_new_files(tmp_path):
    source = tmp_path / "t.json"
    source.write_text("[]")

    check_outputs(["-", os.devnull, tmp_path / "new.json", None], inputs=[source, None])


@pytest.mark.parametrize("form", ["same", "relative", "symlink", "hardlink", "symlinked-dir"])
def test_ensure_not_an_input_sees_through_every_alias(tmp_path, monkeypatch, form):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "data" / "t.json"
    source.parent.mkdir()
    source.write_text("[]")
    (tmp_path / "alias").symlink_to("data")
    os.link(source, tmp_path / "hard.json")
    (tmp_path / "link.json").symlink_to(source)
    output = {
        "same": str(source),
        "relative": "data/../data/./t.json",
        "symlink": "link.json",
        "hardlink": "hard.json",
        "symlinked-dir": "alias/t.json",
    }[form]

    with pytest.raises(OutputIsInput) as raised:
        ensure_not_an_input([output], inputs=["data/t.json"])

    assert (raised.value.path, raised.value.source) == (Path(output), Path("data/t.json"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_check_outputs_refuses_a_read_only_directory(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(OutputNotWritten, match="not writable"):
            check_outputs([folder / "out.json"])
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_batch_input_named_like_its_metrics_file_is_refused_before_any_write(tmp_path):
    _setup(tmp_path)
    (tmp_path / "in" / "metrics.jsonl").write_text(json.dumps(SESSION[1]) + "\n")
    before = _files(tmp_path)

    result = forge("batch", "in", "-o", "out", cwd=tmp_path)

    actual = (result.returncode, "both the per-file metrics and" in result.stderr, _files(tmp_path))
    assert actual == (2, True, before), result.stderr


def test_batch_counts_a_symlink_beside_its_target_once(tmp_path):
    _setup(tmp_path)
    (tmp_path / "in" / "alias.json").symlink_to("b.json")

    result = forge("batch", "in", "-o", "out", cwd=tmp_path)

    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert (result.returncode, written) == (0, ["b.json", "metrics.jsonl"]), result.stderr
