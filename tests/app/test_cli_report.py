"""``forge-compact report``: the page's figures against ``replay --json-metrics``, and the
page rendered in a real headless Chromium (no console error, no request but the file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from forge_app.cli._report_data import collect
from forge_app.evaluation import evaluate
from forge_app.files._agents import load_agent
from forge_app.files._transcripts import read_transcript
from forge_app.store import open_store
from tests.app.cli_process import forge
from tests.app.headless import missing_reason, render
from tests.app.report_page import page_figures
from tests.app.secret_fakes import SECRET_FAKES
from tests.app.test_cli import needs_sessions
from tests.sessions import SESSIONS

REPO = Path(__file__).resolve().parents[2]
DEMO_SESSION = REPO / "forge_app" / "demo" / "session.json"
DEMO_AGENT = REPO / "forge_app" / "demo" / "agent.yaml"
SHARED = (
    "sweagent-marshmallow-1867-fc",
    "msa-deepseek-django-15400",
    "openhands-llama4-ponyc-4588",
)
"""Three shared sessions the demo agent compacts several times each (2, 14 and 7 times)."""
needs_chromium = pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))
PAGE_LIMIT = 5 * 1024 * 1024

EXPRESSIONS = {
    "timeline": "document.querySelectorAll('svg#timeline').length",
    "turn points": "document.querySelectorAll('svg#timeline .turn-point').length",
    "marks": "[...document.querySelectorAll('svg#timeline .compaction-mark')]"
    ".map(m => Number(m.dataset.compaction))",
    "cards": "[...document.querySelectorAll('section.compaction')]"
    ".map(c => Number(c.dataset.number))",
    "card heights": "[...document.querySelectorAll('section.compaction')]"
    ".every(c => c.getBoundingClientRect().height > 40)",
    "timeline width": "Math.round(document.querySelector('svg#timeline')"
    ".getBoundingClientRect().width)",
    "turn tips": "[...document.querySelectorAll('svg#timeline .turn-point > title')]"
    ".map(t => t.textContent)",
    "mark tips": "[...document.querySelectorAll('svg#timeline .compaction-mark > title')]"
    ".map(t => t.textContent)",
    "scripts": "document.scripts.length",
    "images": "document.images.length",
}


def _report(session: Path, out: Path, *args: str | Path) -> str:
    result = forge("report", session, "-o", out, "--agent", DEMO_AGENT, *args)
    assert result.returncode == 0, result.stderr
    return out.read_text(encoding="utf-8")


def _metrics(session: Path, out: Path) -> list[dict[str, object]]:
    result = forge("replay", session, "--agent", DEMO_AGENT, "--json-metrics", out)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _expected(metrics: list[dict[str, object]]) -> tuple[dict[int, object], dict[int, object]]:
    """What the page must show per turn and per compaction card, from the metrics."""
    turns: dict[int, object] = {}
    cards: dict[int, object] = {}
    for row in metrics:
        tokens, request = row["tokens"], row["request_tokens"]
        assert isinstance(tokens, dict)
        assert isinstance(request, dict)
        turns[int(str(row["turn"]))] = {
            "messages": row["messages"],
            "tokens": tokens["value"],
            "tokens_kind": tokens["kind"],
            "request_tokens": request["value"],
            "request_tokens_kind": request["kind"],
            "recorded_messages": row["recorded_messages"],
            "recorded_tokens": row["recorded_tokens"],
        }
        compactions = row["compactions"]
        assert isinstance(compactions, list)
        for result in compactions:
            if result["compacted_range"] is not None:
                cards[len(cards) + 1] = {
                    "turn": row["turn"],
                    "engine": result["engine"],
                    "compacted_range": result["compacted_range"],
                    **{
                        key: result[key]
                        for key in (
                            "original_tokens",
                            "compacted_tokens",
                            "original_messages",
                            "compacted_messages",
                        )
                    },
                }
    return turns, cards


@needs_sessions
@pytest.mark.parametrize("name", SHARED)
def test_report_figures_equal_the_json_metrics_of_the_same_replay(tmp_path, name):
    session = SESSIONS / f"{name}.json"
    turns, cards, _ = page_figures(_report(session, tmp_path / "page.html"))
    expected = _expected(_metrics(session, tmp_path / "metrics.jsonl"))
    assert (turns, cards) == expected
    assert cards  # the demo agent compacts every one of them


@needs_chromium
@needs_sessions
def test_report_renders_offline_in_headless_chromium(tmp_path):
    session = SESSIONS / f"{SHARED[1]}.json"
    page = tmp_path / "report.html"
    turns, cards, _ = page_figures(_report(session, page))
    shot = tmp_path / "report.png"
    rendered = render(page, EXPRESSIONS, shot)
    turn_tips, mark_tips = rendered.values.pop("turn tips"), rendered.values.pop("mark tips")
    assert isinstance(turn_tips, list)
    assert isinstance(mark_tips, list)
    assert [tip.split(" tokens")[0] for tip in turn_tips] == [
        f"turn {n}: {row['tokens']:,}" for n, row in turns.items()
    ]
    assert [tip.split(";")[0] for tip in mark_tips] == [
        f"compaction {n} at turn {card['turn']}: engine {card['engine']}, tier "
        + ("prune" if card["engine"] == "prune" else "summary")
        for n, card in cards.items()
    ]
    actual = {
        "errors": rendered.errors,
        "requests": rendered.requests,
        **rendered.values,
        "screenshot": shot.read_bytes()[:8],
    }
    expected = {
        "errors": [],
        "requests": [page.resolve().as_uri()],
        "timeline": 1,
        "turn points": len(turns),
        "marks": list(cards),
        "cards": list(cards),
        "card heights": True,
        "timeline width": actual["timeline width"],
        "scripts": 0,
        "images": 0,
        "screenshot": b"\x89PNG\r\n\x1a\n",
    }
    assert actual == expected
    assert int(str(actual["timeline width"])) > 800
    assert (len(turns), len(cards) > 1) == (74, True)


def _hostile_demo(path: Path) -> list[str]:
    """The demo session with secrets and markup in the task and in an early tool output
    (both end up in the summarised span); the secrets."""
    messages = json.loads(DEMO_SESSION.read_text(encoding="utf-8"))
    listed = messages["messages"] if isinstance(messages, dict) else messages
    secrets = [secret for _, _, secret in SECRET_FAKES[:6]]
    lines = "\n".join(text for _, text, _ in SECRET_FAKES[:6])
    injection = "<script>alert(1)</script><img src=https://example.com/x.png>"
    task = next(i for i, m in enumerate(listed) if m["role"] == "user")
    listed[task]["content"] = f"{injection} {listed[task]['content']}\n{lines}"
    tool = next(i for i, m in enumerate(listed) if m["role"] in {"tool", "user"} and i > task + 1)
    listed[tool]["content"] = f"{lines}\n{injection}\n{listed[tool]['content']}"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return secrets


def test_report_redacts_secrets_and_escapes_markup(tmp_path):
    session = tmp_path / "hostile.json"
    secrets = _hostile_demo(session)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    html = _report(session, tmp_path / "page.html", "--store", store)
    actual = {
        "secrets shown": [secret for secret in secrets if secret in html],
        "markup shown": ["<script" in html, "<img" in html, "example.com" in html],
        "escaped": "&lt;script&gt;alert(1)&lt;/script&gt;" in html,
        "redacted": "[REDACTED]" in html,
        "archives shown": html.count('<details class="archive"'),
    }
    with open_store(store) as opened:
        (conversation,) = opened.conversations()
        archives = len(opened.archives(conversation.id))
    assert actual == {
        "secrets shown": [],
        "markup shown": [False, False, True],  # the URL as text, never as an image
        "escaped": True,
        "redacted": True,
        "archives shown": archives,
    }
    assert archives > 0


@needs_chromium
def test_report_of_a_5000_message_session_stays_small_and_renders(tmp_path):
    from benchmarks.generator import generate_session

    session = tmp_path / "big.json"
    session.write_text(json.dumps(generate_session(5000, seed=1)), encoding="utf-8")
    page = tmp_path / "report.html"
    result = forge("report", session, "-o", page)
    assert result.returncode == 0, result.stderr
    size = page.stat().st_size
    _, cards, _ = page_figures(page.read_text(encoding="utf-8"))
    expressions = {
        **EXPRESSIONS,
        "open sections": "document.querySelectorAll('details[open]').length",
        "closed sections": "document.querySelectorAll('details:not([open])').length",
    }
    rendered = render(page, expressions, tmp_path / "report.png", height=900)
    values = rendered.values
    assert (rendered.errors, rendered.requests, values["cards"], values["open sections"]) == (
        [],
        [page.resolve().as_uri()],
        list(cards),
        0,
    )
    assert int(str(values["closed sections"])) >= 2 * len(cards) + 1  # the turns, two spans a card
    assert size <= PAGE_LIMIT, size
    assert len(cards) > 100


@needs_chromium
@pytest.mark.parametrize(
    ("messages", "turns"),
    [
        ([{"role": "user", "content": "<b>hi</b>"}], 0),
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 1),
    ],
    ids=["no-turn", "one-turn"],
)
def test_report_of_a_session_without_compaction_renders(tmp_path, messages, turns):
    session = tmp_path / "short.json"
    session.write_text(json.dumps(messages), encoding="utf-8")
    page = tmp_path / "report.html"
    html = _report(session, page)
    rendered = render(page, EXPRESSIONS, tmp_path / "report.png")
    actual = {
        "errors": rendered.errors,
        "requests": rendered.requests,
        "timeline": rendered.values["timeline"],
        "turn points": rendered.values["turn points"],
        "cards": rendered.values["cards"],
        "said so": "No compaction ran" in html,
    }
    assert actual == {
        "errors": [],
        "requests": [page.resolve().as_uri()],
        "timeline": 1,
        "turn points": turns,
        "cards": [],
        "said so": True,
    }


def test_demo_writes_the_report(tmp_path):
    result = forge("demo", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    _, cards, page = page_figures((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert (len(cards) > 0, page["threshold"]) == (True, 4500)


def test_report_command_imports_its_page_modules_only_when_it_runs():
    """``forge-compact --help`` loads the command's module only: what gathers, draws and
    renders the page is imported when the command runs."""
    code = (
        "import sys, forge_app.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('forge_app.cli._report', "
        "'forge_app.cli._html'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_report_bad_input_is_one_line_and_exit_2(tmp_path):
    session = tmp_path / "broken.json"
    session.write_text("{not json", encoding="utf-8")
    result = forge("report", session, "-o", tmp_path / "page.html", fresh=True)
    assert (result.returncode, len(result.stderr.strip().splitlines())) == (2, 1)
    assert not (tmp_path / "page.html").exists()


@needs_sessions
@pytest.mark.anyio
@pytest.mark.parametrize("name", SHARED)
async def test_report_facts_and_cost_equal_eval_of_the_same_replay(name):
    """The page's facts (kept per kind) and cost are ``eval``'s, at the agent's window."""
    transcript = read_transcript(SESSIONS / f"{name}.json")
    agent = load_agent(DEMO_AGENT)
    data = await collect(transcript, agent, session=name)
    scored = await evaluate(transcript.context, agent, window=data.window, session=name)
    kinds = ("task", "asks", "modified_paths", "failures", "last_error")
    actual = {
        **{
            kind: (
                sum(f.kept for f in data.facts if f.kind == kind),
                sum(1 for f in data.facts if f.kind == kind),
            )
            for kind in kinds
        },
        "billed": data.cost.billed,
        "billed_uncompacted": data.cost_uncompacted.billed,
        "compactions": len(data.compactions),
    }
    expected = {
        **{kind: getattr(scored, kind) for kind in kinds},
        "billed": scored.billed,
        "billed_uncompacted": scored.billed_uncompacted,
        "compactions": scored.compactions,
    }
    assert actual == expected


@needs_sessions
@pytest.mark.parametrize("name", SHARED)
def test_report_cards_account_for_every_message_removed(name):
    """A card's summarised messages, less the summaries it added, are the messages the
    compaction removed; pruning changes outputs in place and removes none."""
    transcript = read_transcript(SESSIONS / f"{name}.json")
    data = anyio.run(lambda: collect(transcript, load_agent(DEMO_AGENT), session=name))
    actual = [
        (
            view.tier,
            len(view.summarised) - len(view.summaries),
            view.result.original_messages - view.result.compacted_messages,
            bool(view.summaries) or view.tier == "prune",
            all(span.role == "tool" for span in view.pruned),
        )
        for view in data.compactions
    ]
    expected = [(tier, removed, removed, True, True) for tier, removed, *_ in actual]
    assert actual == expected
