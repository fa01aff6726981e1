"""A deterministic generator of realistic coding-agent sessions in OpenAI chat format.

A session is a system prompt and a task, then user turns. Each turn is 2-12 tool
rounds (``read_file``, ``edit_file``, ``shell``, ``search``; one call, sometimes two
or three in parallel) whose outputs are 200-8,000 characters (log-uniform, mean
about 2,100), closed by a plain assistant reply and a user follow-up. The same
``(messages, seed, mix)`` always gives the same list; the list has exactly ``messages``
entries and is provider-valid wherever it is cut (every call is answered by one
``tool`` message right after its assistant turn).

A :class:`Mix` changes the proportions (:data:`MIXES`: longer outputs, larger edit
arguments, more or fewer repeated operations, failing commands, wider parallel calls);
the default mix is the generator as it always was, byte for byte for every seed.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Final

Message = dict[str, object]

TOOL_NAMES: Final = ("read_file", "edit_file", "shell", "search")
MIN_OUTPUT: Final = 200
MAX_OUTPUT: Final = 8_000


@dataclass(frozen=True)
class Mix:
    """The proportions of a generated session. The defaults are the default mix.

    A mix whose ``repeat_share``, ``failure_share`` are 0 and ``distinct_arguments`` false
    draws the same random numbers as the generator before mixes existed, so it only
    changes what its other fields change.
    """

    name: str = "default"
    description: str = "the generator's own proportions"
    output_chars: tuple[int, int] = (MIN_OUTPUT, MAX_OUTPUT)
    """Shortest and longest tool output (sizes log-uniform between them)."""
    edit_old_chars: tuple[int, int] = (40, 300)
    """Size range of an ``edit_file`` call's ``old`` argument (uniform)."""
    edit_new_chars: tuple[int, int] = (40, 400)
    """Size range of an ``edit_file`` call's ``new`` argument (uniform)."""
    tool_weights: tuple[int, int, int, int] = (40, 20, 25, 15)
    """Relative frequency of ``read_file``, ``edit_file``, ``shell``, ``search``."""
    parallel: tuple[tuple[int, ...], tuple[int, ...]] = ((1, 2, 3), (75, 18, 7))
    """Calls per assistant turn, and their relative frequency."""
    repeat_share: float = 0.0
    """Share of calls that repeat an earlier call (same tool, arguments and output)."""
    distinct_arguments: bool = False
    """Every call's arguments unique (its own path, test file or pattern): no repeats."""
    failure_share: float = 0.0
    """Share of ``shell`` calls that fail (a traceback and a non-zero exit code)."""


DEFAULT_MIX: Final = Mix()
MIXES: Final[dict[str, Mix]] = {
    mix.name: mix
    for mix in (
        DEFAULT_MIX,
        Mix(
            name="long-outputs",
            description="tool outputs of 1,000-20,000 characters (default 200-8,000)",
            output_chars=(1_000, 20_000),
        ),
        Mix(
            name="large-edits",
            description="edit_file old/new arguments of 1,000-6,000 characters "
            "(default 40-300 / 40-400)",
            edit_old_chars=(1_000, 6_000),
            edit_new_chars=(1_000, 6_000),
        ),
        Mix(
            name="repeated",
            description="half the calls repeat an earlier call: same tool, arguments, output",
            repeat_share=0.5,
        ),
        Mix(
            name="distinct",
            description="every call's arguments unique (own path, test file, pattern)",
            distinct_arguments=True,
        ),
        Mix(
            name="failing",
            description="30% of shell commands fail (traceback, exit code 1)",
            failure_share=0.3,
        ),
        Mix(
            name="parallel",
            description="1-5 calls per assistant turn, 2.4 on average (default 1-3, 1.3)",
            parallel=((1, 2, 3, 4, 5), (30, 30, 20, 10, 10)),
        ),
    )
}
"""The named mixes, the default first."""

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


def _output_size(rng: random.Random, mix: Mix) -> int:
    low, high = mix.output_chars
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def _path(rng: random.Random, unique: str) -> str:
    return f"src/{rng.choice(_PACKAGES)}/{rng.choice(_MODULES)}{unique}.py"


def _failure(rng: random.Random) -> str:
    """The end of a failed command's output: a traceback and a non-zero exit code."""
    module, ident = rng.choice(_MODULES), rng.choice(_IDENTS)
    return (
        "\nTraceback (most recent call last):\n"
        f'  File "src/{rng.choice(_PACKAGES)}/{module}.py", line {rng.randint(1, 900)}, '
        f"in {ident}_{rng.choice(_IDENTS)}\n"
        f"    {ident} = {rng.choice(_IDENTS)}.get({ident!r}, None)\n"
        f"{rng.choice(('ValueError', 'KeyError', 'TypeError'))}: missing {ident}\n"
        "[Command finished with exit code 1]"
    )


@dataclass(frozen=True)
class _Done:
    """A call already made: what a repeat of it sends and gets back."""

    name: str
    arguments: str
    output: str


def _operation(rng: random.Random, mix: Mix, serial: int) -> _Done:
    """A new tool call (name and JSON arguments) and its output."""
    name = rng.choices(TOOL_NAMES, mix.tool_weights)[0]
    size = _output_size(rng, mix)
    unique = f"_{serial}" if mix.distinct_arguments else ""
    path = _path(rng, unique)
    arguments: dict[str, object]
    if name == "read_file":
        arguments = {"path": path, "offset": rng.randint(1, 400), "limit": 200}
        output = _cut(rng, _CODE, size, numbered=True)
    elif name == "edit_file":
        old = _cut(rng, _CODE, rng.randint(*mix.edit_old_chars), numbered=False)
        new = _cut(rng, _CODE, rng.randint(*mix.edit_new_chars), numbered=False)
        arguments = {"path": path, "old": old, "new": new}
        diff = "\n".join(f"-{line}" for line in old.splitlines())
        diff += "\n" + "\n".join(f"+{line}" for line in new.splitlines())
        output = f"Edited {path}: 1 replacement.\n--- a/{path}\n+++ b/{path}\n{diff}\n"
        output += _cut(rng, _CODE, max(0, size - len(output)), numbered=True)
    elif name == "shell":
        target = f"tests/test_{rng.choice(_MODULES)}{unique}.py"
        arguments = {"command": f"python -m pytest -x -q {target}", "timeout": "120"}
        output = _cut(rng, _LOG, size, numbered=False)
        if mix.failure_share and rng.random() < mix.failure_share:
            failure = _failure(rng)
            output = output[: max(0, mix.output_chars[1] - len(failure))] + failure
    else:
        arguments = {"pattern": f"def {rng.choice(_IDENTS)}_{unique}", "path": "src/"}
        output = _cut(rng, _HITS, size, numbered=False)
    low, high = mix.output_chars
    if len(output) < low:
        output = output + "\n" + _cut(rng, _LOG, low, numbered=False)
    return _Done(name, json.dumps(arguments), output[:high])


def _call(
    rng: random.Random, call_id: str, mix: Mix, serial: int, done: list[_Done]
) -> tuple[Message, Message]:
    """One tool call and its result: a new operation, or (``mix.repeat_share``) an earlier one."""
    if mix.repeat_share and done and rng.random() < mix.repeat_share:
        operation = rng.choice(done)
    else:
        operation = _operation(rng, mix, serial)
        done.append(operation)
    call: Message = {
        "id": call_id,
        "type": "function",
        "function": {"name": operation.name, "arguments": operation.arguments},
    }
    result: Message = {"role": "tool", "tool_call_id": call_id, "content": operation.output}
    return call, result


def generate_session(messages: int, *, seed: int = 0, mix: Mix = DEFAULT_MIX) -> list[Message]:
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
    done: list[_Done] = []
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
            width = min(rng.choices(*mix.parallel)[0], remaining - 1)
            pairs = [
                _call(rng, f"call_{seed}_{calls + i:07d}", mix, calls + i, done)
                for i in range(width)
            ]
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
