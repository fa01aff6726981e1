"""Telemetry on, into the SDK's in-memory exporter and metric reader, for one test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from forge_app.runtime import disable_telemetry, enable_telemetry


@dataclass
class Telemetry:
    """What the test reads: finished spans and metrics."""

    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """Finished spans (named ``name``), in the order they ended."""
        found = self.exporter.get_finished_spans()
        return [s for s in found if name is None or s.name == name]

    def metrics(self) -> dict[str, list[tuple[dict[str, object], float]]]:
        """Each metric's points as (attributes, value: a sum, or a histogram's count)."""
        data = self.reader.get_metrics_data()
        out: dict[str, list[tuple[dict[str, object], float]]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = [
                        (dict(p.attributes or {}), getattr(p, "value", None) or p.count)
                        for p in metric.data.data_points
                    ]
        return out


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    enable_telemetry(tracer_provider, MeterProvider(metric_readers=[reader]))
    yield Telemetry(tracer_provider, exporter, reader)
    disable_telemetry()
