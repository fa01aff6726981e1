"""What the README states about commands, flags, files, names and defaults is what the code does.

Each test reads the statement from the README itself, so a change to either side that makes
them disagree fails here.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer.main
import yaml

from forge_app.cli.app import app
from forge_app.compaction.llm._engine import SUMMARY_DEADLINE
from forge_app.files import default_agent, read_transcript
from forge_app.runtime import RetryPolicy, _hookspecs
from forge_app.runtime.plugins._compaction import RETRY_GROWTH, RETRY_TURNS
from forge_domain import Agent, Compact
from forge_domain.formats import find_violations

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLI = typer.main.get_command(app)
REPO_DIRS = ("forge_app/", "forge_domain/", "examples/", "benchmarks/", "plans/", "templates/")


def _synopses() -> dict[str, str]:
    """The command table's first column: ``{"compact": "forge-compact compact SESSION ..."}``."""
    rows = re.findall(r"^\| `(forge-compact (\w+)[^`]*)` \|", README, re.MULTILINE)
    return {name: synopsis.replace("\\|", "|") for synopsis, name in rows}


def _options(command):
    """Every option name of ``command`` (long and short) and the parameter it belongs to."""
    return {name: p for p in command.params if p.param_type_name == "option" for name in p.opts}


def _named(synopsis: str) -> list[str]:
    return re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", synopsis)


def test_readme_command_table_lists_every_command():
    assert sorted(_synopses()) == sorted(CLI.commands)


@pytest.mark.parametrize("name", sorted(set(CLI.commands) - {"history"}))
def test_readme_synopsis_names_every_option_of_the_command_and_no_other(name):
    command = CLI.commands[name]
    options = _options(command)
    named = _named(_synopses()[name])
    actual = (
        sorted(flag for flag in named if flag not in options),
        sorted({p.opts[0] for p in options.values()} - {options[f].opts[0] for f in named}),
    )
    assert actual == ([], ["--help"] if "--help" in options else [])


@pytest.mark.parametrize("name", sorted(set(CLI.commands) - {"history"}))
def test_readme_synopsis_values_are_the_defaults(name):
    """``[--windows 8000,16000,32000]`` shows the default, not an example."""
    options = _options(CLI.commands[name])
    shown = re.findall(r"\[(--[a-z-]+) (\d[\d.,]*)\]", _synopses()[name])
    actual = {flag: str(options[flag].default) for flag, _ in shown}
    assert actual == dict(shown)


def test_readme_history_synopsis_names_its_subcommands():
    history = CLI.commands["history"]
    listed = re.search(r"history ([\w|]+)", _synopses()["history"])
    named = [word.split()[0] for word in re.split(r"\|", _synopses()["history"][22:])]
    assert (listed is not None, sorted(named)) == (True, sorted(history.commands))


def test_readme_global_options_exist():
    paragraph = README.split("Global options go before the command:", 1)[1].split("\n\n", 1)[0]
    options = _options(CLI) | {"-vv": CLI.params[0]}
    named = set(re.findall(r"`(--?[a-z][a-z-]*)`", paragraph))
    assert (sorted(named - set(options)), len(named) >= 5) == ([], True)


def test_readme_help_names_the_formats_the_readme_names():
    help_text = " ".join(CLI.help.split()) if CLI.help else ""
    formats = ["OpenAI chat", "Anthropic Messages", "OpenAI Responses", "Claude Code", "Codex"]
    intro = " ".join(README.split("\n\n", 2)[1].split())
    assert [(f in help_text, f in intro) for f in formats] == [(True, True)] * len(formats)


def test_readme_paths_exist():
    texts = [README, (ROOT / "examples" / "forge.yaml").read_text(encoding="utf-8")]
    named = {
        path.rstrip("/.,)")
        for text in texts
        for path in re.findall(r"(?<![\w/.])((?:\./)?\.?[\w-]+/[\w./-]*)", text)
        if path.startswith(REPO_DIRS) or path.startswith(("./.ci/", ".ci/"))
    }
    assert (sorted(p for p in named if not (ROOT / p).exists()), len(named) > 10) == ([], True)


def test_readme_benchmark_commands_are_modules():
    modules = set(re.findall(r"python -m (benchmarks\.\w+)", README))
    missing = [m for m in modules if not (ROOT / (m.replace(".", "/") + ".py")).is_file()]
    assert (missing, len(modules)) == ([], 4)


def test_readme_names_of_the_api_exist():
    """Every ``forge_app.x`` / ``forge_domain.x.y`` the README names can be imported."""
    dotted = set(re.findall(r"`((?:forge_app|forge_domain)(?:\.\w+)+)", README))
    missing = []
    for name in sorted(dotted):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attribute in parts[cut:]:
                found = getattr(found, attribute, None)
            if found is None:
                missing.append(name)
            break
    assert (missing, len(dotted) > 5) == ([], True)


def test_readme_install_lines_name_extras_that_exist_and_install_from_the_checkout():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    named = re.findall(r"'\.\[([\w-]+)\]'", README)
    actual = (sorted(set(named) - set(extras)), re.findall(r"forge-compact\[", README))
    assert (actual, len(set(named)) >= 6) == (([], []), True)


def _table_defaults() -> dict[str, str]:
    section = README.split("## Configuration: the `compact:` block", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, re.MULTILINE))


def test_readme_compact_table_lists_every_setting():
    assert sorted(_table_defaults()) == sorted(Compact.model_fields)


def test_readme_compact_table_defaults_are_the_defaults():
    table = _table_defaults()
    fixture = Compact()
    literal = {
        name: shown.strip("`")
        for name, shown in table.items()
        if shown == "unset" or re.fullmatch(r"`[\w.]+`", shown)
    }
    spelled = {"unset": None, "true": True, "false": False}
    actual = {
        name: spelled.get(value, value if not re.fullmatch(r"[\d.]+", value) else float(value))
        for name, value in literal.items()
    }
    defaults = fixture.model_dump() | {  # the agent applies the percentage when none is set
        "token_threshold_percentage": Agent(id="a", context_length=1000).compaction_threshold()
        / 1000
    }
    expected = {name: defaults[name] for name in literal}
    assert (actual, len(literal) >= 10) == (expected, True)


def test_readme_describes_the_bundled_default_agent():
    agent = default_agent()
    sentence = re.search(
        r"has a ([\d,]+)-token window and compacts at ([\d,]+)\s+tokens, with "
        r"`eviction_window: ([\d.]+)` and `retention_window: (\d+)`",
        README,
    )
    assert sentence is not None
    actual = tuple(sentence.groups())
    expected = (
        f"{agent.context_length:,}",
        f"{agent.compaction_threshold():,}",
        str(agent.compact.eviction_window),
        str(agent.compact.retention_window),
    )
    assert actual == expected


def test_readme_describes_the_demo_agent():
    demo = yaml.safe_load((ROOT / "forge_app" / "demo" / "agent.yaml").read_text())["agents"][0]
    sentence = re.search(r"with a ([\d,]+)-token threshold and `retention_window: (\d+)`", README)
    assert sentence is not None
    compact = demo["compact"]
    expected = (f"{compact['token_threshold']:,}", str(compact["retention_window"]))
    assert sentence.groups() == expected


def test_readme_lists_every_hook():
    section = README.split("## Hook plugins", 1)[1].split("```", 1)[0]
    listed = re.findall(r"`(forge_on_\w+)`", section)
    specs = [name for name in vars(_hookspecs) if name.startswith("forge_on_")]
    assert sorted(listed) == sorted(specs)


def test_readme_states_the_deadlines_and_the_loop_guard():
    expected = [
        f"| `LLMEngine(deadline=...)` | {SUMMARY_DEADLINE:.0f} s |",
        f"`run --turn-deadline` | {RetryPolicy().deadline:.0f} s |",
        f"grows by {RETRY_GROWTH:.0%} of the threshold or {RETRY_TURNS} responses pass",
    ]
    assert [line in " ".join(README.split()) for line in expected] == [True] * 3


def test_readme_library_example_runs(tmp_path):
    (block,) = [
        b for b in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "Compactor(" in b
    ]
    shutil.copy(ROOT / "forge_app" / "demo" / "session.json", tmp_path / "session.json")
    run = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    compacted = read_transcript(tmp_path / "compacted.json").context
    original = json.loads((tmp_path / "session.json").read_text())
    actual = (run.returncode, find_violations(compacted), len(compacted) < len(original))
    assert actual == (0, [], True), run.stderr
