"""A deterministic generator of realistic coding-agent sessions in OpenAI chat format.

A session is a system prompt and a task, then user turns. Each turn is 2-12 tool
rounds (``read_file``, ``edit_file``, ``shell``, ``search``; one call, sometimes two
or three in parallel) whose outputs are 200-8,000 characters (log-uniform, mean
about 2,100), closed by a plain assistant reply and a user follow-up. The same
``(messages, seed)`` always gives the same list; the list has exactly ``messages``
entries and is provider-valid wherever it is cut (every call is answered by one
``tool`` message right after its assistant turn).
"""

from __future__ import annotations

import json
import math
import random
from typing import Final

Message = dict[str, object]

TOOL_NAMES: Final = ("read_file", "edit_file", "shell", "search")
_TOOL_WEIGHTS: Final = (40, 20, 25, 15)
_PARALLEL: Final = ((1, 2, 3), (75, 18, 7))
MIN_OUTPUT: Final = 200
MAX_OUTPUT: Final = 8_000

TOOLS: Final[list[dict[str, object]]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": "string"} for key in keys},
                "required": list(keys[:1]),
            },
        },
    }
    for name, description, keys in (
        ("read_file", "Read a file, optionally a line range.", ("path", "offset", "limit")),
        ("edit_file", "Replace one exact string in a file.", ("path", "old", "new")),
        ("shell", "Run a shell command in the repository.", ("command", "timeout")),
        ("search", "Search the repository with a regular expression.", ("pattern", "path")),
    )
]
"""The tool schemas a request would carry (used for Hermes's request estimate)."""

SYSTEM_PROMPT: Final = (
    "You are a careful software engineer working in a git repository through tools.\n"
    "Tools: read_file(path, offset, limit) reads a file; edit_file(path, old, new) replaces "
    "one exact string; shell(command) runs a command; search(pattern, path) greps.\n"
    "Rules: read before you edit; keep edits minimal; run the tests after each change; "
    "never commit secrets; explain what you changed when you are done.\n"
) * 4

_PACKAGES = ("core", "api", "storage", "cli", "auth", "render", "sched", "util", "net", "cache")
_MODULES = ("models", "views", "client", "parser", "config", "errors", "tasks", "routes", "io")
_IDENTS = (
    "value",
    "result",
    "items",
    "config",
    "session",
    "request",
    "handler",
    "payload",
    "index",
    "buffer",
    "timeout",
    "record",
    "cursor",
    "schema",
    "token",
)
_WORDS = (
    "the",
    "test",
    "fails",
    "because",
    "parser",
    "returns",
    "None",
    "when",
    "input",
    "is",
    "empty",
    "so",
    "we",
    "should",
    "handle",
    "that",
    "case",
    "before",
    "calling",
    "config",
    "loader",
    "and",
    "add",
    "a",
    "regression",
    "check",
    "for",
    "timeout",
    "path",
    "cache",
)
_TASKS = (
    "The CLI crashes with a KeyError when the config file has no [cache] section. Fix it and "
    "add a test.",
    "Requests that time out are retried forever. Cap retries at three with backoff and cover "
    "it with tests.",
    "Parsing a schema with nested arrays drops the inner type. Find the bug and fix it.",
    "Add a --json flag to the status command that prints machine-readable output.",
)
_FOLLOW_UPS = (
    "Thanks. Can you also make the error message mention the file name?",
    "Tests pass locally but CI on Python 3.11 fails, can you check?",
    "Please don't change the public API; keep the old function as a wrapper.",
    "Looks good. Now update the changelog and the docs for this.",
    "One more thing: the same problem exists in the storage layer, fix it there too.",
)


def _pool(rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    """Lines to cut tool outputs from: source code, test logs, search hits."""
    code: list[str] = []
    for block in range(300):
        fn = f"{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}_{block}"
        args = ", ".join(rng.sample(_IDENTS, rng.randint(1, 3)))
        code.append(f"def {fn}({args}):")
        code.append(f'    """Return the {rng.choice(_IDENTS)} for {rng.choice(_IDENTS)}."""')
        for _ in range(rng.randint(2, 8)):
            left, right = rng.choice(_IDENTS), rng.choice(_IDENTS)
            code.append(
                rng.choice(
                    (
                        f"    {left} = {right}.get({left!r}, None)",
                        f"    if {left} is None:",
                        f"        raise ValueError(f'missing {left}: {{{right}!r}}')",
                        f"    for {left} in {right}:",
                        f"        {right}.append({left})",
                        f"    return {left}",
                        f"    # {' '.join(rng.choices(_WORDS, k=rng.randint(4, 10)))}",
                    )
                )
            )
        code.append("")
    log: list[str] = []
    for number in range(1200):
        module = f"tests/test_{rng.choice(_MODULES)}.py"
        name = f"test_{rng.choice(_IDENTS)}_{rng.choice(_WORDS)}_{number}"
        status = rng.choices(("PASSED", "FAILED", "SKIPPED"), (88, 9, 3))[0]
        log.append(f"{module}::{name} {status} [{number % 100:3d}%]")
        if status == "FAILED":
            log.append(f"E   AssertionError: assert {rng.randint(0, 99)} == {rng.randint(0, 99)}")
            log.append(f"E    +  where {rng.choice(_IDENTS)} = <{rng.choice(_IDENTS)} object>")
    hits = [
        f"src/{rng.choice(_PACKAGES)}/{rng.choice(_MODULES)}.py:{rng.randint(1, 900)}:"
        f"{rng.choice(code).strip()}"
        for _ in range(1500)
    ]
    return code, log, hits


_CODE, _LOG, _HITS = _pool(random.Random(20240613))


def _cut(rng: random.Random, lines: list[str], size: int, *, numbered: bool) -> str:
    """About ``size`` characters of consecutive lines, never under MIN_OUTPUT."""
    start = rng.randrange(len(lines))
    out: list[str] = []
    length = 0
    index = start
    while length < size:
        line = lines[index % len(lines)]
        if numbered:
            line = f"{index % len(lines) + 1:6d}\t{line}"
        out.append(line)
        length += len(line) + 1
        index += 1
    return "\n".join(out)[:size]


def _output_size(rng: random.Random) -> int:
    return int(math.exp(rng.uniform(math.log(MIN_OUTPUT), math.log(MAX_OUTPUT))))


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def _path(rng: random.Random) -> str:
    return f"src/{rng.choice(_PACKAGES)}/{rng.choice(_MODULES)}.py"


def _call(rng: random.Random, call_id: str) -> tuple[Message, Message]:
    """One tool call and its result."""
    name = rng.choices(TOOL_NAMES, _TOOL_WEIGHTS)[0]
    size = _output_size(rng)
    path = _path(rng)
    arguments: dict[str, object]
    if name == "read_file":
        arguments = {"path": path, "offset": rng.randint(1, 400), "limit": 200}
        output = _cut(rng, _CODE, size, numbered=True)
    elif name == "edit_file":
        old = _cut(rng, _CODE, rng.randint(40, 300), numbered=False)
        new = _cut(rng, _CODE, rng.randint(40, 400), numbered=False)
        arguments = {"path": path, "old": old, "new": new}
        diff = "\n".join(f"-{line}" for line in old.splitlines())
        diff += "\n" + "\n".join(f"+{line}" for line in new.splitlines())
        output = f"Edited {path}: 1 replacement.\n--- a/{path}\n+++ b/{path}\n{diff}\n"
        output += _cut(rng, _CODE, max(0, size - len(output)), numbered=True)
    elif name == "shell":
        target = f"tests/test_{rng.choice(_MODULES)}.py"
        arguments = {"command": f"python -m pytest -x -q {target}", "timeout": "120"}
        output = _cut(rng, _LOG, size, numbered=False)
    else:
        arguments = {"pattern": f"def {rng.choice(_IDENTS)}_", "path": "src/"}
        output = _cut(rng, _HITS, size, numbered=False)
    if len(output) < MIN_OUTPUT:
        output = output + "\n" + _cut(rng, _LOG, MIN_OUTPUT, numbered=False)
    call: Message = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    result: Message = {"role": "tool", "tool_call_id": call_id, "content": output[:MAX_OUTPUT]}
    return call, result


def generate_session(messages: int, *, seed: int = 0) -> list[Message]:
    """Return a session of exactly ``messages`` OpenAI chat messages (at least 2).

    Raises:
        ValueError: when ``messages`` is under 2 (a session starts with a system
            prompt and a task).
    """
    if messages < 2:
        raise ValueError(f"a session needs at least 2 messages, got {messages}")
    rng = random.Random(seed)
    session: list[Message] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": rng.choice(_TASKS)},
    ]
    rounds_left = rng.randint(2, 12)
    calls = 0
    while len(session) < messages:
        remaining = messages - len(session)
        last = session[-1]
        if last["role"] == "assistant":
            session.append({"role": "user", "content": rng.choice(_FOLLOW_UPS)})
            rounds_left = rng.randint(2, 12)
        elif rounds_left == 0 or remaining == 1:
            reply = " ".join(_sentence(rng, 6, 18) for _ in range(rng.randint(2, 8)))
            session.append({"role": "assistant", "content": reply})
        else:
            width = min(rng.choices(*_PARALLEL)[0], remaining - 1)
            pairs = [_call(rng, f"call_{seed}_{calls + i:07d}") for i in range(width)]
            calls += width
            text = _sentence(rng, 5, 14) if rng.random() < 0.35 else None
            session.append(
                {"role": "assistant", "content": text, "tool_calls": [c for c, _ in pairs]}
            )
            session.extend(result for _, result in pairs)
            rounds_left -= 1
    return session


def json_size(session: list[Message]) -> int:
    """Size in bytes of the session written as compact JSON (UTF-8)."""
    return len(json.dumps(session, separators=(",", ":")).encode())
