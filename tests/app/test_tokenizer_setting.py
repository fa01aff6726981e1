"""``compact.tokenizer`` / ``--tokenizer``: the triggers and metrics of compact, replay, eval
and the live loop count with the tokenizer chosen; a fallback is logged once."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from structlog.testing import capture_logs

from forge_app.cli.compacting import compact_transcript
from forge_app.errors import InvalidAgentFile
from forge_app.evaluation import evaluate
from forge_app.files import _tokenizer
from forge_app.files._agents import parse_agents
from forge_app.files._tokenizer import CHARS, TokenizerLoader, load_tokenizer
from forge_app.files._transcripts import read_transcript
from forge_app.runtime._replay import Replay
from forge_domain import CHARS_METER, Agent, Compact, Context, context_tokens
from tests.app.cli_process import forge
from tests.sessions import SESSIONS

SESSION = SESSIONS / "openhands-llama4-ponyc-4595.json"
"""No provider usage; tiktoken counts it well above chars/4 (28,775 vs 22,374)."""
THRESHOLD = 25_000
TIKTOKEN = load_tokenizer("tiktoken")


def _agent(tokenizer: str = "chars") -> Agent:
    compact = Compact(token_threshold=THRESHOLD, retention_window=4, tokenizer=tokenizer)
    return Agent(id="a", compact=compact)


def _counts() -> tuple[int, int]:
    context = read_transcript(SESSION).context
    return context.token_count_approx(), context_tokens(context, TIKTOKEN.count).value


def test_the_session_counts_differently_and_plausibly_with_each_tokenizer():
    chars, tiktoken = _counts()
    actual = (chars < THRESHOLD <= tiktoken, 0.7 * chars <= tiktoken <= 1.5 * chars)
    assert actual == (True, True)


@pytest.mark.parametrize(
    ("tokenizer", "trigger", "counted_with"),
    [
        ("chars", "none", "chars"),
        ("tiktoken", "threshold", "tiktoken"),
        ("auto", "threshold", "tiktoken"),
    ],
)
def test_compact_trigger_fires_on_the_count_of_the_agents_tokenizer(
    tokenizer, trigger, counted_with
):
    agent = _agent(tokenizer)
    meter = TokenizerLoader(tokenizer).meter(model=agent.model)
    transcript = read_transcript(SESSION)
    compacted, metrics = compact_transcript(transcript, agent, source="s", meter=meter)
    chars, tiktoken = _counts()
    after = compacted.context
    expected_after = (
        after.token_count_approx()
        if counted_with == "chars"
        else context_tokens(after, TIKTOKEN.count).value
    )
    actual = (metrics.trigger, metrics.tokens_before, metrics.tokens_after)
    assert actual == (trigger, chars if counted_with == "chars" else tiktoken, expected_after)


def test_auto_counts_a_claude_agent_with_chars():
    meter = TokenizerLoader("auto").meter(model="claude-sonnet-4-5", fmt="anthropic")
    assert meter is CHARS_METER


def test_fallback_is_logged_once_per_loader(monkeypatch):
    monkeypatch.setattr(_tokenizer, "OFFLINE_ENCODINGS", ("no_such_encoding_offline",))
    loader = TokenizerLoader("tiktoken")
    with capture_logs() as logs:
        tokenizers = {loader.tokenizer(model=f"gpt-{n}") for n in range(5)}
        meters = [loader.meter(fmt="responses") for _ in range(3)]
    actual = (tokenizers, meters, [entry["event"] for entry in logs])
    assert actual == ({CHARS}, [CHARS_METER] * 3, ["tokenizer_fell_back"])


def _replay_tokens(tokenizer: str) -> tuple[int, int, int]:
    agent = _agent(tokenizer)
    meter = TokenizerLoader(tokenizer).meter()
    context = read_transcript(SESSION).context
    replay = Replay(context, agent, meter=meter)

    async def run() -> list:
        return [turn async for turn in replay.turns()]

    turns = anyio.run(run)
    first = next(
        (t.turn for t in turns if any(c.compacted_range is not None for c in t.compactions)), 0
    )
    final = replay.conversation.context
    reference = (
        final.token_count() if tokenizer == "chars" else context_tokens(final, TIKTOKEN.count)
    )
    return first, int(turns[-1].tokens), int(reference)


def test_live_loop_compacts_only_when_tiktoken_counts_over_the_threshold():
    chars_first, chars_last, chars_reference = _replay_tokens("chars")
    tik_first, tik_last, tik_reference = _replay_tokens("tiktoken")
    # chars/4 never reaches 25,000 on this session; tiktoken does, so the loop compacts
    actual = (chars_first, tik_first > 0, chars_last == chars_reference, tik_last == tik_reference)
    assert actual == (0, True, True, True)


def test_eval_peak_request_is_counted_with_the_meter():
    context = read_transcript(SESSION).context
    agent = Agent(id="a")  # threshold 70% of 200k: nothing compacts
    chars = anyio.run(lambda: evaluate(context, agent, window=200_000))
    tik = anyio.run(
        lambda: evaluate(context, agent, window=200_000, meter=TokenizerLoader("tiktoken").meter())
    )
    _, tiktoken = _counts()
    actual = (chars.peak_request < tik.peak_request <= tiktoken, chars.compactions, tik.compactions)
    assert actual == (True, 0, 0)


def _agent_file(tmp_path: Path, tokenizer: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"agents:\n  - id: a\n    compact:\n      token_threshold: {THRESHOLD}\n"
        f"      tokenizer: {tokenizer}\n"
    )
    return path


@pytest.mark.parametrize(
    ("setting", "option", "trigger"),
    [
        ("tiktoken", None, "threshold"),
        ("chars", None, "none"),
        ("chars", "tiktoken", "threshold"),
        ("tiktoken", "chars", "none"),
    ],
)
def test_cli_compact_uses_the_agent_setting_unless_tokenizer_is_given(
    tmp_path, setting, option, trigger
):
    agent = _agent_file(tmp_path, setting)
    metrics = tmp_path / "m.json"
    extra = [] if option is None else ["--tokenizer", option]
    run = forge(
        "compact",
        SESSION,
        "-a",
        agent,
        "-o",
        tmp_path / "o.json",
        "--json-metrics",
        metrics,
        *extra,
    )
    chars, tiktoken = _counts()
    counted = json.loads(metrics.read_text())
    actual = (run.returncode, counted["trigger"], counted["tokens_before"])
    assert actual == (0, trigger, tiktoken if trigger == "threshold" else chars)


def test_agent_file_rejects_an_unknown_tokenizer():
    with pytest.raises(InvalidAgentFile, match=r"a.yaml:4: agents\[0\].compact.tokenizer: input"):
        parse_agents("agents:\n  - id: a\n    compact:\n      tokenizer: sentencepiece\n", "a.yaml")


def test_context_extends_only_views_of_the_same_store():
    base = Context.from_openai([{"role": "user", "content": "hi"}])
    longer = base.append(*Context.from_openai([{"role": "assistant", "content": "yo"}]))
    other = Context(base)
    actual = (longer.extends(base), base.extends(longer), other.extends(base), base.extends(base))
    assert actual == (True, False, False, True)
