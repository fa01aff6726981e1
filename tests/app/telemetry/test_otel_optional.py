"""Telemetry is optional: nothing imports OpenTelemetry until it is enabled, and enabling it
without the packages says what to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SESSION = "/work/shared/data/sessions/sweagent-gpt4o-testrepo.json"


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_otel_is_never_imported_unless_enabled():
    done = python(
        f"""
        import contextlib, io, sys
        import anyio
        import forge_app, forge_app.adapters, forge_app.runtime
        from forge_app.cli import main
        from forge_app.files import default_agent, read_transcript
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
        async def replay():
            session = forge_app.Replay(read_transcript({SESSION!r}).context, default_agent())
            return [turn async for turn in session.turns()]
        anyio.run(replay)
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
        """
    )
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "[]")


def test_otel_enabled_without_opentelemetry_names_the_extra():
    done = python(
        """
        import sys
        sys.modules["opentelemetry"] = None  # not installed
        import forge_app
        try:
            forge_app.enable_telemetry()
        except forge_app.ForgeAppError as exc:
            print(type(exc).__name__, exc)
        """
    )
    assert done.stdout.strip() == (
        "TelemetryUnavailable telemetry needs OpenTelemetry (opentelemetry is missing): "
        "pip install 'forge-compact[otel]'"
    )


def test_otel_cli_option_without_the_exporter_exits_2_with_one_line():
    done = python(
        f"""
        import sys
        sys.modules["opentelemetry.exporter"] = None  # the otel extra alone, no OTLP exporter
        from forge_app.cli import main
        main(["replay", {SESSION!r}, "--otel"])
        """
    )
    lines = done.stderr.strip().splitlines()
    assert (
        done.returncode,
        len(lines),
        lines[-1].endswith(
            "pip install 'forge-compact[otel]' opentelemetry-exporter-otlp-proto-http"
        ),
    ) == (2, 1, True)


def test_otel_agent_setting_traces_on_the_global_provider(tmp_path):
    agent_file = tmp_path / "agent.yaml"
    agent_file.write_text(
        "agents:\n"
        "  - id: traced\n"
        "    model: gpt-4o-mini\n"
        "    context_length: 32000\n"
        "    telemetry:\n"
        "      enabled: true\n"
    )
    session = "/work/shared/data/sessions/msa-deepseek-django-15400.json"
    done = python(
        f"""
        import anyio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import forge_app
        from forge_app.files import read_transcript
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)  # as Logfire or an OTLP setup does
        agent = forge_app.load_agent({str(agent_file)!r})
        async def replay():
            session = forge_app.Replay(read_transcript({session!r}).context, agent)
            turns = [turn async for turn in session.turns()]
            return sum(len(turn.compactions) for turn in turns)
        compactions = anyio.run(replay)
        names = [s.name for s in exporter.get_finished_spans()]
        print(compactions, names.count("forge_compact.compaction"))
        """
    )
    counts = done.stdout.split()[-2:]
    assert (counts[0] != "0", counts[0] == counts[1]) == (True, True)
