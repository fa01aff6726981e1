"""Work a compaction does once instead of once per try: redaction memo, budget search bounds.

Neither may change an output: the memo returns what :func:`redact` returns, and the
budget search skips only spans that cannot fit whatever their summary.
"""

from __future__ import annotations

import random

import pytest

from forge_app.compaction import _compactor
from forge_app.compaction._compactor import Compactor
from forge_app.summary import REDACTED, RedactSecrets
from forge_app.summary.transformers import _redact_secrets, redaction_memo
from forge_domain import Compact, Context, Role
from forge_domain.summary import ContextSummary, SummaryBlock, TextItem

SECRET_TEXT = "export TOKEN=ghx1234567890"


def _summary(*texts: str) -> ContextSummary:
    items = tuple(TextItem(text=text) for text in texts)
    return ContextSummary(blocks=(SummaryBlock(role=Role.USER, contents=items),))


@pytest.fixture
def redact_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text ``RedactSecrets`` hands to ``redact``."""
    calls: list[str] = []
    real = _redact_secrets.redact

    def counting(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(_redact_secrets, "redact", counting)
    return calls


def test_within_a_memo_each_distinct_string_is_redacted_once(redact_calls):
    summary = _summary(SECRET_TEXT, "plain", SECRET_TEXT)

    with redaction_memo():
        first = RedactSecrets()(summary)
        second = RedactSecrets()(summary)

    assert sorted(redact_calls) == sorted([SECRET_TEXT, "plain"])
    expected = _summary(f"export TOKEN={REDACTED}", "plain", f"export TOKEN={REDACTED}")
    assert (first, second) == (expected, expected)


def test_a_nested_memo_shares_the_outer_one(redact_calls):
    with redaction_memo():
        RedactSecrets()(_summary(SECRET_TEXT))
        with redaction_memo():
            RedactSecrets()(_summary(SECRET_TEXT))
        RedactSecrets()(_summary(SECRET_TEXT))

    assert redact_calls == [SECRET_TEXT]


def test_without_a_memo_every_summary_redacts_afresh(redact_calls):
    with redaction_memo():
        RedactSecrets()(_summary(SECRET_TEXT))
    RedactSecrets()(_summary(SECRET_TEXT))
    RedactSecrets()(_summary(SECRET_TEXT))

    assert redact_calls == [SECRET_TEXT] * 3


def test_a_compaction_redacts_each_distinct_string_once(redact_calls, monkeypatch):
    summaries: list[int] = []
    real_summary = Compactor._summary

    def counted(self, span, text_limit, budget=None):  # type: ignore[no-untyped-def]
        summaries.append(len(span))
        return real_summary(self, span, text_limit, budget)

    monkeypatch.setattr(Compactor, "_summary", counted)
    words = ["token", "parser", "cache", "retry", "config", "loader"]
    rng = random.Random(3)
    raw: list[object] = [{"role": "system", "content": "s"}]
    for _ in range(60):
        raw.append({"role": "user", "content": " ".join(rng.choices(words, k=12)) + "?"})
        raw.append({"role": "assistant", "content": " ".join(rng.choices(words, k=40))})
    compactor = Compactor(Compact(retention_window=2, max_tokens=600, summary_max_tokens=300))

    outcome = compactor.compact(Context.from_openai(raw))

    assert outcome.result.compacted_range is not None
    assert len(summaries) > 1  # the budget was fitted by summarising several spans
    assert len(redact_calls) == len(set(redact_calls))


def _chat(messages: int, seed: int) -> Context:
    rng = random.Random(seed)
    words = [
        "the",
        "parser",
        "fails",
        "on",
        "nested",
        "lists",
        "so",
        "I",
        "changed",
        "tokenizer",
        "and",
        "tests",
    ]
    raw: list[object] = [{"role": "system", "content": "You help."}]
    while len(raw) < messages:
        raw.append({"role": "user", "content": " ".join(rng.choices(words, k=rng.randint(3, 30)))})
        raw.append(
            {"role": "assistant", "content": " ".join(rng.choices(words, k=rng.randint(5, 90)))}
        )
    return Context.from_openai(raw[:messages])


@pytest.mark.parametrize(("messages", "max_tokens"), [(80, 900), (200, 1_500), (300, 700)])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_budget_search_skips_only_spans_that_cannot_fit(
    monkeypatch: pytest.MonkeyPatch, messages: int, max_tokens: int, seed: int
):
    context = _chat(messages, seed)
    config = Compact(retention_window=4, eviction_window=0.3, max_tokens=max_tokens)
    splices: list[tuple[int, int]] = []
    real_splice = Compactor._splice

    def counted(self, context, span, text_limit):  # type: ignore[no-untyped-def]
        splices.append(span)
        return real_splice(self, context, span, text_limit)

    monkeypatch.setattr(Compactor, "_splice", counted)
    bounded = Compactor(config).compact(context)
    bounded_splices = len(splices)
    monkeypatch.setattr(_compactor, "_kept_tokens", lambda context, span: 0)  # no bound
    monkeypatch.setattr(_compactor, "_KeptTokens", lambda context: lambda span: 0)
    splices.clear()
    unbounded = Compactor(config).compact(context)

    assert bounded.result == unbounded.result
    assert list(bounded.context) == list(unbounded.context)
    assert bounded_splices < len(splices)  # the bound did skip summaries


class _Bisecting(Compactor):
    """The fit search before it was planned from sizes: one summary per bisection step."""

    def _largest_fitting(self, context, retained, max_tokens):  # type: ignore[no-untyped-def]
        best = None
        low, high = 0, retained - 1
        while low <= high:
            middle = (low + high) // 2
            span = self._span(context, middle)
            if span is not None and _compactor._kept_tokens(context, span) <= max_tokens:
                candidate = self._splice(context, span, _compactor.SUMMARY_TEXT_LIMIT)
                if candidate.token_count_approx() <= max_tokens:
                    best = (candidate, span)
                    low = middle + 1
                    continue
            high = middle - 1
        return best


@pytest.mark.parametrize(
    ("messages", "max_tokens"), [(80, 900), (200, 1_500), (300, 700), (600, 2_500), (1_200, 4_000)]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_planned_fit_finds_the_bisection_s_span_with_fewer_summaries(
    monkeypatch: pytest.MonkeyPatch, messages: int, max_tokens: int, seed: int
):
    context = _chat(messages, seed)
    config = Compact(retention_window=4, eviction_window=0.3, max_tokens=max_tokens)
    splices: list[tuple[int, int]] = []
    real_splice = Compactor._splice

    def counted(self, context, span, text_limit, budget=None):  # type: ignore[no-untyped-def]
        splices.append(span)
        return real_splice(self, context, span, text_limit, budget)

    monkeypatch.setattr(Compactor, "_splice", counted)
    planned = Compactor(config).compact(context)
    planned_splices = len(splices)
    splices.clear()
    bisected = _Bisecting(config).compact(context)

    assert (planned.result, list(planned.context)) == (bisected.result, list(bisected.context))
    assert planned_splices < len(splices)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fit_that_folds_an_earlier_summary_plans_from_its_size(
    monkeypatch: pytest.MonkeyPatch, seed: int
):
    """The tiered engine's fallback: its spans fold the summary tier's summary, whose size
    predicts theirs; the result is still the bisection's."""
    first = Compactor(Compact(retention_window=400, eviction_window=0.3)).compact(
        _chat(1_600, seed), Compactor(Compact(retention_window=400)).forced_strategy()
    )
    folded = first.context
    earlier = folded[first.result.compacted_range[0]]
    config = Compact(retention_window=4, eviction_window=0.3, max_tokens=6_000)
    splices: list[tuple[int, int]] = []
    real_splice = Compactor._splice

    def counted(self, context, span, text_limit, budget=None):  # type: ignore[no-untyped-def]
        splices.append(span)
        return real_splice(self, context, span, text_limit, budget)

    monkeypatch.setattr(Compactor, "_splice", counted)
    planned = Compactor(config).compact(folded)
    planned_splices = len(splices)
    splices.clear()
    bisected = _Bisecting(config).compact(folded)

    assert Compactor(config)._first_plan(folded) == earlier.approx_tokens
    assert (planned.result, list(planned.context)) == (bisected.result, list(bisected.context))
    assert planned_splices < len(splices)
