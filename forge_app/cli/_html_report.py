"""The report page: :class:`~forge_app.cli._report_data.ReportData` as one self-contained HTML file.

The page is the Jinja template ``templates/forge-report.html`` (shipped in the wheel
as ``forge_app/_templates``) rendered with autoescaping on: every text from the
session is escaped (and was redacted when it was gathered). It holds no script and
no reference to anything outside it (its Content-Security-Policy forbids loading
any); the timeline is inline SVG. Long parts (every turn, every span, summaries,
archived originals) are closed ``<details>`` sections, so a long session's page
opens fast and stays readable.

Every figure is written with its field name (``data-field``), the name it has in
``replay --json-metrics`` (the turn's fields, the compaction's ``CompactionResult``
fields), so the page can be checked against the metrics of the same replay.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

import jinja2
from markupsafe import Markup

from forge_app.cli._report_data import ReportData
from forge_app.cli._report_svg import timeline_svg
from forge_app.runtime import TurnRecord
from forge_app.summary import default_template_dir
from forge_domain import TokenCount

__all__ = ["TEMPLATE", "render_report"]

TEMPLATE = "forge-report.html"
"""The page's template, beside the frame's."""


@dataclass(frozen=True, slots=True)
class _TurnRow:
    turn: int
    messages: int
    tokens: TokenCount
    request_tokens: TokenCount
    recorded_messages: int
    recorded_tokens: int
    cards: tuple[int, ...]
    """The numbers of the compactions that ran in the turn."""


def _rows(data: ReportData) -> list[_TurnRow]:
    numbers: dict[int, list[int]] = {}
    for view in data.compactions:
        numbers.setdefault(view.turn, []).append(view.number)
    return [_row(turn, tuple(numbers.get(turn.turn, ()))) for turn in data.turns]


def _row(turn: TurnRecord, cards: tuple[int, ...]) -> _TurnRow:
    return _TurnRow(
        turn.turn,
        turn.messages,
        turn.tokens,
        turn.request_tokens,
        turn.recorded_messages,
        turn.recorded_tokens,
        cards,
    )


def _version() -> str:
    try:
        return importlib.metadata.version("forge-compact")
    except importlib.metadata.PackageNotFoundError:
        return ""


def render_report(data: ReportData) -> str:
    """The page for ``data``."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(default_template_dir(TEMPLATE)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    svg = timeline_svg(data.turns, data.compactions, window=data.window, threshold=data.threshold)
    uncompacted = data.cost_uncompacted.billed
    return environment.get_template(TEMPLATE).render(
        session=data.session,
        agent=data.agent,
        engine=data.engine,
        window=data.window,
        threshold=data.threshold,
        stored_as=data.stored_as,
        svg=Markup(svg),  # built from numbers and escaped texts (forge_app/cli/_report_svg.py)
        turns=_rows(data),
        compactions=data.compactions,
        facts=data.facts,
        kept=sum(fact.kept for fact in data.facts),
        cost=data.cost,
        cost_uncompacted=data.cost_uncompacted,
        discount=data.discount,
        ratio=f"{data.cost.billed / uncompacted:.2f}" if uncompacted else "-",
        version=_version(),
    )
