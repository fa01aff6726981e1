"""The observation seam: a trace gets what engines note while it is current, nothing otherwise."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from forge_domain import (
    Usage,
    current_trace,
    note_archived,
    note_event,
    note_tier,
    observe_summary_call,
    tracing,
)


class RecordedCall:
    def __init__(self, log: list[object]) -> None:
        self.log = log

    def succeeded(self, usage: Usage | None) -> None:
        self.log.append(("succeeded", usage))

    def failed(self, reason: str, usage: Usage | None = None) -> None:
        self.log.append(("failed", reason))


class RecordingTrace:
    def __init__(self) -> None:
        self.log: list[object] = []

    def decided(self, tier) -> None:
        self.log.append(("tier", tier))

    def event(self, name, attributes: Mapping[str, object]) -> None:
        self.log.append((name, dict(attributes)))

    def archived(self, refs: Sequence[str]) -> None:
        self.log.append(("archived", tuple(refs)))

    @contextmanager
    def summary_call(self, model: str, prompt: str) -> Iterator[RecordedCall]:
        self.log.append(("call", model, prompt))
        yield RecordedCall(self.log)


def note_everything() -> None:
    note_tier("summary")
    note_event("fallback", {"reason": "HTTP 503"})
    note_archived(["c1", "t2"])
    with observe_summary_call("cheap", "the prompt") as call:
        call.failed("HTTP 503")
        call.succeeded(None)


def test_trace_records_what_is_noted_while_it_is_current():
    trace = RecordingTrace()

    with tracing(trace):
        inside = current_trace()
        note_everything()
    note_everything()  # nobody observes: no-ops

    actual = (inside is trace, current_trace(), trace.log)
    expected = (
        True,
        None,
        [
            ("tier", "summary"),
            ("fallback", {"reason": "HTTP 503"}),
            ("archived", ("c1", "t2")),
            ("call", "cheap", "the prompt"),
            ("failed", "HTTP 503"),
            ("succeeded", None),
        ],
    )
    assert actual == expected
