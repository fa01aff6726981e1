"""``--otel`` on ``run`` and ``replay``: compactions traced and exported over OTLP/HTTP.

The exporters read the standard variables (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME`` …). Everything here is imported
when the option (or the agent's ``telemetry.enabled``) asks for it, never at start-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from forge_app.errors import TelemetryUnavailable
from forge_app.runtime import disable_telemetry, enable_telemetry
from forge_domain import Agent

EXPORTER = "opentelemetry-exporter-otlp-proto-http"
"""The package ``--otel`` exports with (besides the ``otel`` extra)."""
SERVICE_NAME = "forge-compact"
"""``service.name`` unless ``OTEL_SERVICE_NAME`` says otherwise."""


@contextmanager
def otlp_telemetry(requested: bool, agent: Agent) -> Iterator[None]:
    """Inside the block, compactions are traced and exported over OTLP/HTTP when
    ``requested`` (``--otel``) or the agent enables telemetry; everything is flushed at the end.

    Raises:
        TelemetryUnavailable: the ``otel`` extra or the OTLP exporter is not installed.
    """
    if not (requested or agent.telemetry.enabled):
        yield
        return
    install = f"pip install 'forge-compact[otel]' {EXPORTER}"
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import OTELResourceDetector, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ModuleNotFoundError as exc:
        raise TelemetryUnavailable(exc.name or "opentelemetry", install) from exc
    resource = Resource({"service.name": SERVICE_NAME}).merge(OTELResourceDetector().detect())
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    enable_telemetry(
        tracer_provider, meter_provider, include_prompts=agent.telemetry.include_prompts
    )
    try:
        yield
    finally:
        disable_telemetry()
        tracer_provider.shutdown()
        meter_provider.shutdown()
