"""``replay --otel`` exports over OTLP/HTTP: the real exporter, a real request, decoded here."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

SESSION = Path("/work/shared/data/sessions/msa-deepseek-django-13964.json")


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1: keeps each request's path, content type and body."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str, bytes]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                received.append((self.path, self.headers["Content-Type"], body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def bodies(self, path: str) -> list[bytes]:
        return [body for p, kind, body in self.received if p == path and "protobuf" in kind]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    running.thread.start()
    yield running
    running.server.shutdown()
    running.server.server_close()


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind)


def test_otel_replay_exports_spans_and_metrics_over_otlp_http(receiver, tmp_path):
    metrics_file = tmp_path / "turns.jsonl"
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    env.pop("OTEL_SERVICE_NAME", None)
    command = [
        str(Path(sys.executable).with_name("forge-compact")),
        "replay",
        str(SESSION),
        "--otel",
    ]
    done = subprocess.run(
        [*command, "--json-metrics", str(metrics_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    turns = [json.loads(line) for line in metrics_file.read_text().splitlines()]
    results = [c for turn in turns for c in turn["compactions"]]
    traces = [ExportTraceServiceRequest.FromString(b) for b in receiver.bodies("/v1/traces")]
    spans = [
        (resource.resource, span)
        for request in traces
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    compactions = [
        {a.key: _value(a.value) for a in span.attributes}
        for _, span in spans
        if span.name == "forge_compact.compaction"
    ]
    services = {
        _value(a.value)
        for resource, _ in spans
        for a in resource.attributes
        if a.key == "service.name"
    }
    exported = [ExportMetricsServiceRequest.FromString(b) for b in receiver.bodies("/v1/metrics")]
    counted = sum(
        point.as_int
        for request in exported
        for resource in request.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "forge_compact.compactions"
        for point in metric.sum.data_points
    )

    actual = (
        done.returncode,
        services,
        [
            (
                c["forge_compact.engine"],
                c["forge_compact.tokens.before"],
                c["forge_compact.tokens.after"],
            )
            for c in compactions
        ],
        counted,
    )
    expected = (
        0,
        {"forge-compact"},
        [(r["engine"], r["original_tokens"], r["compacted_tokens"]) for r in results],
        len(results),
    )
    assert (len(results) > 0, actual) == (True, expected)
