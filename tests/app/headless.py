"""A real headless Chromium driven over the Chrome DevTools Protocol, for tests that render pages.

The browser is Debian's ``/usr/bin/chromium`` (never downloaded), started with a fresh
profile and the flags that keep it off the network, and driven over
``--remote-debugging-pipe`` (file descriptors 3 and 4, NUL-separated JSON): no port,
no socket, no client library. :func:`render` opens one file, waits for it to load, and
returns what it logged, every request it made, the values of a few expressions and
a full-page screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
TIMEOUT = 60.0
"""Seconds any answer of the browser may take."""

JsonValue = object
Message = dict[str, JsonValue]


def missing_reason() -> str | None:
    """Why no page can be rendered here (None when Chromium is installed)."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)"
    return None


class _Pipe:
    """One CDP connection over the two pipes; events are kept, answers matched by id."""

    def __init__(self, process: subprocess.Popen[bytes], reader: int, writer: int) -> None:
        self._process, self._reader, self._writer = process, reader, writer
        self._answers: queue.Queue[Message] = queue.Queue()
        self.events: list[Message] = []
        self._next = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._reader, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message: Message = json.loads(raw)
                if "id" in message:
                    self._answers.put(message)
                else:
                    self.events.append(message)

    def call(self, method: str, session: str | None = None, **params: JsonValue) -> Message:
        """Send ``method`` and wait for its answer; raise on a protocol error."""
        self._next += 1
        command: Message = {"id": self._next, "method": method, "params": params}
        if session is not None:
            command["sessionId"] = session
        os.write(self._writer, json.dumps(command).encode() + b"\0")
        while True:
            answer = self._answers.get(timeout=TIMEOUT)
            if answer["id"] == self._next:
                break
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result = answer.get("result", {})
        assert isinstance(result, dict)
        return result

    def wait_for(self, method: str, seen: int = 0) -> Message:
        """The first event ``method`` after the first ``seen`` events, waiting for it."""
        waited = 0.0
        while waited < TIMEOUT:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            threading.Event().wait(0.05)
            waited += 0.05
        raise TimeoutError(f"no {method} event in {TIMEOUT:.0f}s")


@contextlib.contextmanager
def _browser() -> Iterator[_Pipe]:
    profile = tempfile.mkdtemp(prefix="forge-chromium-")
    reads, to_browser = os.pipe()
    from_browser, writes = os.pipe()
    # fd 3 is what the browser reads, fd 4 what it writes: bash moves the pipe's ends
    # there from numbers above 9 (so neither is 3 or 4 before it is moved)
    browser_in, browser_out = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (reads, writes))
    os.close(reads)
    os.close(writes)
    command = ["/bin/bash", "-c", f'exec "$@" 3<&{browser_in} 4>&{browser_out}', "bash"]
    process = subprocess.Popen(
        [*command, str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        pass_fds=(browser_in, browser_out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(browser_in)
    os.close(browser_out)
    try:
        yield _Pipe(process, from_browser, to_browser)
    finally:
        with contextlib.suppress(OSError):
            os.write(to_browser, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(to_browser)
        os.close(from_browser)
        shutil.rmtree(profile, ignore_errors=True)


@dataclass
class Rendered:
    """What a page did when it was opened."""

    url: str
    requests: list[str] = field(default_factory=list)
    """The URL of every request the page made (the page itself included)."""
    errors: list[str] = field(default_factory=list)
    """Console errors, uncaught exceptions and error log entries."""
    values: dict[str, JsonValue] = field(default_factory=dict)
    """The value of each expression asked for."""


def _errors(events: list[Message]) -> list[str]:
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params")
        assert isinstance(params, dict)
        if method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
            found.append(json.dumps(params.get("args")))
        elif method == "Runtime.exceptionThrown":
            found.append(json.dumps(params.get("exceptionDetails")))
        elif method == "Log.entryAdded":
            entry = params.get("entry")
            if isinstance(entry, dict) and entry.get("level") == "error":
                found.append(f"{entry.get('source')}: {entry.get('text')} ({entry.get('url')})")
    return found


def render(
    page: Path,
    expressions: dict[str, str],
    screenshot: Path | None = None,
    *,
    width: int = 1200,
    height: int | None = None,
) -> Rendered:
    """Open ``page`` in a fresh headless Chromium and report what happened.

    ``expressions`` (name: JavaScript) are evaluated once the page has loaded; their
    values must be JSON. With ``screenshot``, a PNG of the whole page (of its top
    ``height`` pixels when given) is written there.
    """
    url = page.resolve().as_uri()
    with _browser() as cdp:
        target = cdp.call("Target.createTarget", url="about:blank")["targetId"]
        session = cdp.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        assert isinstance(session, str)
        for domain in ("Runtime", "Log", "Network", "Page"):
            cdp.call(f"{domain}.enable", session)
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height or 900,
            deviceScaleFactor=1,
            mobile=False,
        )
        seen = len(cdp.events)
        cdp.call("Page.navigate", session, url=url)
        cdp.wait_for("Page.loadEventFired", seen)
        rendered = Rendered(url)
        for name, expression in expressions.items():
            answer = cdp.call(
                "Runtime.evaluate", session, expression=expression, returnByValue=True
            )
            result = answer["result"]
            assert isinstance(result, dict), answer
            rendered.values[name] = result.get("value")
        if screenshot is not None:
            shot = cdp.call(
                "Page.captureScreenshot",
                session,
                format="png",
                captureBeyondViewport=height is None,
            )
            data = shot["data"]
            assert isinstance(data, str)
            screenshot.write_bytes(base64.b64decode(data))
        events = list(cdp.events)
    for event in events:
        params = event.get("params")
        if event.get("method") == "Network.requestWillBeSent" and isinstance(params, dict):
            request = params.get("request")
            assert isinstance(request, dict)
            rendered.requests.append(str(request.get("url")))
    rendered.errors = _errors(events)
    return rendered
