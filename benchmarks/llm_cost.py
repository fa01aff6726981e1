"""What a summarising compactor sends its model: the ``llm`` engine next to Hermes.

Every session is replayed turn by turn at one window (16,000 tokens by default)
and each summary request goes over real HTTP to a loopback OpenAI-compatible
server on 127.0.0.1 that answers with one fixed summary. The server counts the
calls and the prompt characters it received (the characters of every message
``content`` in the request), so both sides are measured by the same code.

- **ours**: ``forge_app.Replay`` (the real orchestrator, handler and engine) under
  the bundled default agent with ``compact.engine: llm`` and a summary model whose
  endpoint is the loopback server;
- **hermes**: Hermes Agent's ``ContextCompressor`` at the same window, driven the
  way its conversation loop drives it: before each recorded response, its rough
  request estimate, ``should_compress``, ``compress``; after it,
  ``update_from_response`` with the estimate of what was sent. Only its
  ``call_llm`` is replaced, by a function that posts the same messages to the
  loopback server. Hermes is optional (``hermes-agent==0.19.0``, see
  ``benchmarks/README.md``); without it the Hermes columns stay empty.

Run (results and how to read them: ``benchmarks/LLM_COST.md``)::

    python -m benchmarks.llm_cost                      # shared sessions, window 16,000
    python -m benchmarks.llm_cost --window 8000 --sessions DIR ...
    python -m benchmarks.llm_cost --no-hermes --out /tmp/llm_cost.md

With Hermes in its own virtualenv (it pins openai and pydantic)::

    python -m venv /tmp/hermes-venv
    /tmp/hermes-venv/bin/pip install hermes-agent==0.19.0 pluggy structlog typer
    PYTHONPATH=. /tmp/hermes-venv/bin/python -m benchmarks.llm_cost
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import anyio

from forge_app import Replay, configure_logging, default_agent, read_transcript
from forge_app.compaction import resolve_engine
from forge_domain import Agent, Compact, Context, ContextEngine

WINDOW = 16_000
_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "sessions"

SUMMARY = (
    "## Goal\nFix the failing tests without changing the public API.\n"
    "## Progress\nDone: 1. read the module [read]; 2. edited it [edit]. "
    "In progress: running the tests. Blocked: none.\n"
    "## Relevant files\n- src/module.py: the fix\n"
    "## Remaining work\nRun the whole suite.\n"
    "## Critical context\nThe failing test is tests/test_module.py::test_empty.\n"
)
"""The fixed answer of the loopback summariser (about 400 chars, 5 sections)."""

Json = dict[str, object]


def prompt_chars(body: Json) -> int:
    """Characters of every message's content in a chat-completions request."""
    total = 0
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(
                len(str(part.get("text", ""))) for part in content if isinstance(part, dict)
            )
    return total


class SummaryServer:
    """A loopback OpenAI-compatible server that answers every request with :data:`SUMMARY`."""

    def __init__(self) -> None:
        """Prepare the counters (start the server with ``with``)."""
        self.calls = 0
        self.chars = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> SummaryServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                with server._lock:
                    server.calls += 1
                    server.chars += prompt_chars(body)
                reply = {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion",
                    "created": 1_700_000_000,
                    "model": body.get("model", "bench-summary"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": SUMMARY},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_chars(body) // 4,
                        "completion_tokens": len(SUMMARY) // 4,
                        "total_tokens": (prompt_chars(body) + len(SUMMARY)) // 4,
                    },
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def take(self) -> tuple[int, int]:
        """Calls and prompt chars since the last ``take``."""
        with self._lock:
            counted = (self.calls, self.chars)
            self.calls = self.chars = 0
        return counted


def llm_agent() -> Agent:
    """The bundled default agent with ``compact.engine: llm`` and a summary model."""
    agent = default_agent()
    compact = agent.compact.model_copy(update={"engine": "llm", "model": "bench-summary"})
    return agent.model_copy(update={"compact": Compact.model_validate(compact.model_dump())})


async def replay_ours(context: Context, window: int, base_url: str) -> int:
    """Replay ``context`` under :func:`llm_agent`; the number of turns replayed."""

    def engine(agent: Agent) -> ContextEngine:
        return resolve_engine(agent, base_url=base_url, api_key="bench", max_retries=0)

    replay = Replay(context, llm_agent(), engine=engine, context_length=window)
    turns = 0
    async for turn in replay.turns():
        turns = turn.turn
    return turns


@dataclass(frozen=True)
class HermesDriver:
    """Hermes's compressor with ``call_llm`` posting to the loopback server."""

    version: str
    compressor_type: type
    estimate: Callable[..., int]

    def replay(self, messages: Sequence[Mapping[str, object]], window: int) -> None:
        """Feed ``messages`` in order; compress before a response when Hermes would."""
        compressor = self.compressor_type(
            model="bench-summary", config_context_length=window, quiet_mode=True
        )
        sent: list[Mapping[str, object]] = []
        for message in messages:
            if message.get("role") == "assistant":
                tokens = self.estimate(sent)
                if compressor.should_compress(tokens):
                    sent = compressor.compress(sent, current_tokens=tokens)
                compressor.update_from_response({"prompt_tokens": self.estimate(sent)})
            sent.append(message)


def load_hermes(base_url: str) -> HermesDriver | None:
    """Import Hermes with its summariser pointed at ``base_url``; None when not installed."""
    os.environ.setdefault("HERMES_HOME", tempfile.mkdtemp(prefix="hermes-llm-cost-"))
    try:
        version = importlib.metadata.version("hermes-agent")
        compressor = importlib.import_module("agent.context_compressor")
        metadata = importlib.import_module("agent.model_metadata")
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return None

    def call_llm(**kwargs: object) -> SimpleNamespace:
        body = json.dumps({"model": "bench-summary", "messages": kwargs["messages"]}).encode()
        request = urllib.request.Request(
            f"{base_url}/chat/completions", body, {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.loads(response.read())
        message = SimpleNamespace(content=reply["choices"][0]["message"]["content"])
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])

    compressor.call_llm = call_llm  # type: ignore[attr-defined]  # the one seam replaced
    return HermesDriver(
        version, compressor.ContextCompressor, metadata.estimate_request_tokens_rough
    )


@dataclass(frozen=True)
class Row:
    """One session's figures."""

    session: str
    messages: int
    turns: int
    ours: tuple[int, int]
    hermes: tuple[int, int] | None


def measure(paths: Sequence[Path], window: int, *, with_hermes: bool) -> tuple[list[Row], str]:
    """Replay every session on both sides; the rows and Hermes's version (or a note)."""
    rows: list[Row] = []
    with SummaryServer() as server:
        hermes = load_hermes(server.base_url) if with_hermes else None
        for path in paths:
            context = read_transcript(path).context
            turns = anyio.run(replay_ours, context, window, server.base_url)
            ours = server.take()
            theirs: tuple[int, int] | None = None
            if hermes is not None:
                hermes.replay(context.to_openai(), window)
                theirs = server.take()
            rows.append(Row(path.stem, len(context), turns, ours, theirs))
    version = f"hermes-agent {hermes.version}" if hermes is not None else "hermes: not installed"
    return rows, version


def _cells(pair: tuple[int, int] | None) -> list[str]:
    return ["-", "-"] if pair is None else [f"{pair[0]:,}", f"{pair[1]:,}"]


def report(rows: Sequence[Row], window: int, version: str, command: str) -> str:
    """The Markdown report: one row per session, totals and the ratio."""
    lines = [
        f"# Summariser input: the `llm` engine and Hermes at a {window:,}-token window",
        "",
        f"Command: `{command}`",
        "",
        f"Agent: the bundled default with `compact.engine: llm`; {version}.",
        "",
        "| session | messages | turns | ours: calls | ours: prompt chars "
        "| hermes: calls | hermes: prompt chars |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cells = [row.session, f"{row.messages:,}", f"{row.turns:,}"]
        lines.append("| " + " | ".join(cells + _cells(row.ours) + _cells(row.hermes)) + " |")
    ours = (sum(r.ours[0] for r in rows), sum(r.ours[1] for r in rows))
    measured = [r.hermes for r in rows if r.hermes is not None]
    hermes = (sum(h[0] for h in measured), sum(h[1] for h in measured)) if measured else None
    lines.append("| **total** | | | " + " | ".join(_cells(ours) + _cells(hermes)) + " |")
    if hermes is not None and hermes[1]:
        lines += ["", f"Prompt chars, ours / Hermes: {ours[1] / hermes[1]:.2f}."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, replay, print (or write) the report."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm_cost", description=__doc__)
    parser.add_argument("--sessions", nargs="+", type=Path, default=[_SHARED])
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument("--no-hermes", action="store_true", help="skip the Hermes side")
    parser.add_argument("--out", type=Path, help="write the Markdown report here")
    options = parser.parse_args(argv)
    configure_logging(level="error")
    paths = sorted(p for d in options.sessions for p in d.glob("*.json"))
    rows, version = measure(paths, options.window, with_hermes=not options.no_hermes)
    command = "python -m benchmarks.llm_cost " + " ".join(argv or sys.argv[1:])
    text = report(rows, options.window, version, command.strip())
    if options.out is None:
        sys.stdout.write(text)
    else:
        options.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
