"""Reading a ``forge-compact report`` page back: its figures (``data-field``) by turn and card."""

from __future__ import annotations

from html.parser import HTMLParser


class _Figures(HTMLParser):
    """Collects the text of every element with ``data-field``, under its turn row or card."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.turns: dict[int, dict[str, object]] = {}
        self.cards: dict[int, dict[str, object]] = {}
        self.page: dict[str, object] = {}
        self._owner: dict[str, object] = self.page
        self._field: str | None = None
        self._text = ""

    def _close_field(self) -> None:
        if self._field is not None:
            self._owner[self._field] = int(self._text.strip().replace(",", ""))
            self._field = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._close_field()
        values = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-turn" in values:
            self._owner = self.turns.setdefault(int(values["data-turn"]), {})
        elif tag == "section" and "data-number" in values:
            start, end = values["data-range"].split("..")
            self._owner = self.cards.setdefault(
                int(values["data-number"]),
                {
                    "turn": int(values["data-turn"]),
                    "engine": values["data-engine"],
                    "compacted_range": [int(start), int(end)],
                },
            )
        elif tag in {"table", "h2"}:
            self._owner = self.page
        if "data-field" in values and tag != "b":
            self._field, self._text = values["data-field"], ""
            if "data-kind" in values:
                self._owner[f"{self._field}_kind"] = values["data-kind"]

    def handle_endtag(self, tag: str) -> None:
        self._close_field()

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._text += data


def page_figures(
    html: str,
) -> tuple[dict[int, dict[str, object]], dict[int, dict[str, object]], dict[str, object]]:
    """The figures of each turn row, of each compaction card, and of the page's header."""
    parser = _Figures()
    parser.feed(html)
    parser.close()
    return parser.turns, parser.cards, parser.page
