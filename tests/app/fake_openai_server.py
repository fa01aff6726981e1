"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

The real ``openai`` client talks to it over real HTTP, so tests exercise the
same code path as production without touching the network::

    with FakeOpenAIServer() as server:
        server.script(Reply.calls(("call_1", "read", '{"path": "a"}')), Reply.text("done"))
        client = server.client()            # AsyncOpenAI(base_url=server.base_url, ...)
        ...
        server.requests                     # every JSON body received, in order

Replies come from the script (first in, first out) and, once it is empty, from
``responder(body) -> Reply`` (default: an HTTP 418 saying nothing was scripted).
A responder makes concurrent conversations easy: route on something in the
body (e.g. the first user message). Usage is computed from the request
(chars/4 of the messages' JSON) unless a reply fixes it, so context growth and
compaction show up in the reported ``total_tokens`` as with a real provider.

Two replies model a provider that does not answer: :meth:`Reply.dripping` sends its
body one byte at a time (each read succeeds, so a per-read timeout never fires) and
:meth:`Reply.hanging` never answers at all; both stop when the server stops.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

import openai

Json = dict[str, object]


def approx_prompt_tokens(body: Json) -> int:
    """chars/4 (rounded up) of the request's ``messages`` as JSON: a stand-in for a tokenizer."""
    return math.ceil(len(json.dumps(body.get("messages", []))) / 4)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion, or an HTTP error."""

    content: str | None = None
    """Assistant text."""
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    """``(id, name, arguments)`` of each tool call."""
    prompt_tokens: int | None = None
    """Reported prompt tokens (None: computed from the request)."""
    completion_tokens: int | None = None
    """Reported completion tokens (None: computed from the reply)."""
    with_usage: bool = True
    """False omits ``usage`` from the completion."""
    status: int = 200
    """HTTP status; anything but 200 sends an OpenAI-style error body."""
    error_code: str | None = None
    """``error.code`` of an error reply (``context_length_exceeded`` …)."""
    error_message: str = ""
    """``error.message`` of an error reply."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (``retry-after-ms`` …)."""
    body: bytes | None = None
    """A raw body sent as is with ``status`` (a truncated completion, a proxy's HTML page …)."""
    content_type: str = "application/json"
    """The ``content-type`` of the response."""
    drip: float = 0.0
    """Seconds between two bytes of the body (0: the body is sent at once)."""
    hang: bool = False
    """Read the request and never answer (until the server stops)."""

    @classmethod
    def text(
        cls,
        content: str,
        *,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """A final answer."""
        return cls(
            content=content,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            delay=delay,
        )

    @classmethod
    def calls(
        cls,
        *calls: tuple[str, str, str],
        content: str | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """An answer with tool calls ``(id, name, arguments)``."""
        return cls(
            content=content,
            tool_calls=calls,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            delay=delay,
        )

    @classmethod
    def error(cls, status: int, message: str = "scripted error", code: str | None = None) -> Reply:
        """An HTTP error with an OpenAI-style body."""
        return cls(status=status, error_message=message, error_code=code)

    @classmethod
    def raw(cls, body: bytes, content_type: str = "application/json") -> Reply:
        """A 200 answer with ``body`` verbatim, whatever it holds."""
        return cls(body=body, content_type=content_type)

    @classmethod
    def dripping(cls, content: str, every: float = 0.2) -> Reply:
        """A final answer whose body arrives one byte every ``every`` seconds."""
        return cls(content=content, drip=every)

    @classmethod
    def hanging(cls) -> Reply:
        """No answer at all: the connection stays open until the server stops."""
        return cls(hang=True)

    @classmethod
    def context_length_exceeded(cls) -> Reply:
        """OpenAI's 400 for a request over the model's window."""
        return cls.error(
            400,
            "This model's maximum context length is 32000 tokens. "
            "However, your messages resulted in 40000 tokens.",
            code="context_length_exceeded",
        )

    def completion(self, body: Json, number: int) -> Json:
        """The chat.completion object for ``body``."""
        message: Json = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}
                for id_, name, args in self.tool_calls
            ]
        written = len(self.content or "") + sum(len(n) + len(a) for _, n, a in self.tool_calls)
        prompt = (
            self.prompt_tokens if self.prompt_tokens is not None else approx_prompt_tokens(body)
        )
        completion = (
            self.completion_tokens if self.completion_tokens is not None else math.ceil(written / 4)
        )
        out: Json = {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if self.tool_calls else "stop",
                }
            ],
        }
        if self.with_usage:
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out

    def error_body(self) -> Json:
        """The error object of a non-200 reply."""
        return {
            "error": {
                "message": self.error_message,
                "type": "invalid_request_error" if self.status < 500 else "server_error",
                "param": None,
                "code": self.error_code,
            }
        }


Responder = Callable[[Json], Reply]
"""Answers a request body when the script is empty."""


def _unscripted(body: Json) -> Reply:
    return Reply.error(418, "no reply scripted for this request")


class FakeOpenAIServer:
    """A threaded HTTP server answering ``POST /v1/chat/completions``."""

    def __init__(self, responder: Responder = _unscripted) -> None:
        """Prepare the server (start it with :meth:`start` or ``with``)."""
        self.responder = responder
        self.requests: list[Json] = []
        """Every request body received, in arrival order."""
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> Self:
        """Listen on an ephemeral port of 127.0.0.1 in a background thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply, number = server._next(self.path, body)
                if reply.hang:
                    server._stopping.wait()
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                payload = (
                    reply.completion(body, number) if reply.status == 200 else reply.error_body()
                )
                data = json.dumps(payload).encode() if reply.body is None else reply.body
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    if not reply.drip:
                        self.wfile.write(data)
                        return
                    for at in range(len(data)):
                        self.wfile.write(data[at : at + 1])
                        self.wfile.flush()
                        if server._stopping.wait(reply.drip):
                            return
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: object) -> None:
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reset(self) -> None:
        """Forget the requests received and the replies not yet given (a server shared by
        several tests: a reply a cancelled call never asked for must not answer the next)."""
        with self._lock:
            self.requests.clear()
            self._script.clear()

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered first in, first out."""
        with self._lock:
            self._script.extend(replies)

    def client(self, *, timeout: float = 30.0, max_retries: int = 0) -> openai.AsyncOpenAI:
        """An ``AsyncOpenAI`` pointed at this server (no retries unless asked)."""
        return openai.AsyncOpenAI(
            base_url=self.base_url, api_key="test-key", timeout=timeout, max_retries=max_retries
        )

    def _next(self, path: str, body: Json) -> tuple[Reply, int]:
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            scripted = self._script.popleft() if self._script else None
        if not path.endswith("/chat/completions"):
            return Reply.error(404, f"unknown path {path}"), number
        return (scripted if scripted is not None else self.responder(body)), number
