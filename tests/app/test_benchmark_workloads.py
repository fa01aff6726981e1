"""benchmarks.workloads: every workload measured and reported; nothing here is timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.generator import MIXES, generate_session
from benchmarks.stats import Stats
from benchmarks.workloads import Measured, Workload, main, workloads


@pytest.fixture
def sessions_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions"
    directory.mkdir()
    for seed in (1, 2):
        (directory / f"s{seed}.json").write_text(json.dumps(generate_session(30, seed=seed)))
    return directory


def test_workloads_are_three_seeds_every_other_mix_and_the_concatenated_sessions(sessions_dir):
    actual = [w.name for w in workloads(sessions_dir)]
    expected = [
        "seed 1",
        "seed 2",
        "seed 3",
        *(f"{name} (seed 1)" for name in MIXES if name != "default"),
        "concatenated sessions",
        "concatenated sessions (one pass)",
    ]
    assert actual == expected


def test_every_workload_builds_the_size_asked(sessions_dir):
    sizes = {w.name: len(w.build(45)) for w in workloads(sessions_dir)}
    concatenated = sizes.pop("concatenated sessions")
    one_pass = sizes.pop("concatenated sessions (one pass)")
    assert (set(sizes.values()), 40 <= concatenated <= 45, one_pass) == ({45}, True, concatenated)


def test_the_one_pass_workload_stops_after_every_session_once(sessions_dir):
    # two 30-message sessions: the second one's system prompt is left out
    one_pass = next(w for w in workloads(sessions_dir) if w.name.endswith("(one pass)"))
    assert len(one_pass.build(1_000)) == 59


def test_quick_run_without_hermes_reports_every_workload(
    sessions_dir, tmp_path, capsys, monkeypatch
):
    # the full collection before each timed run keeps timings clean; here it only costs time
    monkeypatch.setattr("benchmarks.stats.gc.collect", lambda: 0)
    out = tmp_path / "w.json"
    args = ["--quick", "--no-hermes", "--size", "40", "--runs", "1"]

    code = main([*args, "--sessions", str(sessions_dir), "--json", str(out)])

    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    document = json.loads(out.read_text())
    names = [w.name for w in workloads(sessions_dir)]
    assert (
        code,
        [row.split(" | ")[0].removeprefix("| ") for row in rows[1:]],
        {row.rstrip(" |").split(" | ")[-2:] == ["n/a", "n/a"] for row in rows[1:]},
        [w["workload"] for w in document["workloads"]],
        {tuple(sorted(w["stats"])) for w in document["workloads"]},
        {tuple(w["targets"].values()) for w in document["workloads"]},
        (document["runs"], document["size"]),
    ) == (
        0,
        names,
        {True},
        names,
        {("ours compaction", "ours decode", "ours end to end")},
        {("n/a", "n/a")},
        (1, 40),
    )


def test_only_runs_the_workloads_named(sessions_dir, tmp_path, monkeypatch):
    monkeypatch.setattr("benchmarks.stats.gc.collect", lambda: 0)
    out = tmp_path / "w.json"
    args = ["--no-hermes", "--size", "30", "--runs", "1", "--sessions", str(sessions_dir)]

    main([*args, "--only", "seed 3,concatenated sessions", "--json", str(out)])

    actual = [w["workload"] for w in json.loads(out.read_text())["workloads"]]
    assert actual == ["seed 3", "concatenated sessions"]


def test_an_unknown_workload_name_is_refused(sessions_dir):
    with pytest.raises(SystemExit, match="unknown workload"):
        main(["--no-hermes", "--only", "seed 9", "--sessions", str(sessions_dir)])


def _stats(median: float) -> Stats:
    return Stats(median, median, median, 1)


@pytest.mark.parametrize(
    ("hermes_compaction", "hermes_end_to_end", "expected"),
    [
        (1.25, 0.375, {"compaction": "PASS", "end to end": "PASS"}),  # exactly 10x and 3x
        (1.24, 0.375, {"compaction": "MISS", "end to end": "PASS"}),
        (1.25, 0.37, {"compaction": "PASS", "end to end": "MISS"}),
    ],
)
def test_verdicts_compare_hermes_over_ours_with_each_target(
    hermes_compaction, hermes_end_to_end, expected
):
    stats = {
        "ours decode": _stats(0.05),
        "ours compaction": _stats(0.125),
        "ours end to end": _stats(0.125),
        "hermes decode": _stats(0.01),
        "hermes compaction": _stats(hermes_compaction),
        "hermes end to end": _stats(hermes_end_to_end),
    }
    measured = Measured(Workload("w", "", lambda n: []), 10, 100, stats)
    assert measured.verdicts() == expected
