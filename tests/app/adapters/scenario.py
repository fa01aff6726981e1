"""One coding session, scripted the same way for every framework adapter.

Each model turn asks for three tool calls at once (read a file, write it, run its
test), whose outputs are large enough that the context crosses the threshold
every two or three turns; then the model answers. ``check`` reads a request as
the provider would receive it (OpenAI chat messages) and lists what a provider
would reject.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

from forge_domain import Compact, Context
from forge_domain.formats import find_violations

TASK = "Fix the failing division tests: calc.divide must raise ZeroDivisionError when b == 0"
FOLLOW_UP = "Now summarise what you changed."
ANSWER = "All tests pass: divide raises ZeroDivisionError for b == 0."
TURNS = 8
SETTINGS = Compact(token_threshold=3_000, retention_window=4)
"""Compacts at 3,000 tokens, keeping the last 4 messages (one turn) word for word."""


def modified(turn: int) -> str:
    """The file turn ``turn`` writes."""
    return f"src/calc/part_{turn}.py"


MODIFIED = tuple(modified(turn) for turn in range(TURNS))


def calls(turn: int) -> list[tuple[str, str, dict[str, str]]]:
    """The parallel calls of turn ``turn``: ``(call id, tool name, arguments)``."""
    path = modified(turn)
    return [
        (f"call_{turn}_read", "read_file", {"path": path}),
        (f"call_{turn}_write", "write_file", {"path": path, "content": new_source(turn)}),
        (f"call_{turn}_test", "shell", {"command": f"pytest -q tests/test_part_{turn}.py"}),
    ]


def new_source(turn: int) -> str:
    """What turn ``turn`` writes: tool-call arguments are never pruned, so they pile up."""
    return "\n".join(f"def g_{turn}_{n}(a, b):\n    return a / b if b else 0" for n in range(20))


def read_file(path: str) -> str:
    """A large file body."""
    return "\n".join(f"{path}:{line}: def f_{line}(a, b): return a / b" for line in range(40))


def write_file(path: str, content: str) -> str:
    """The write's acknowledgement."""
    return f"wrote {len(content)} bytes to {path}"


def shell(command: str) -> str:
    """A long test log."""
    lines = [f"{command} :: test_case_{n} PASSED in 0.0{n % 10}s" for n in range(30)]
    return "\n".join(lines)


def check(messages: Sequence[object]) -> list[str]:
    """What a provider would reject in these chat messages (empty when valid)."""
    return [str(violation) for violation in find_violations(Context.from_openai(list(messages)))]


def survives(messages: Sequence[object]) -> list[str]:
    """The task and modified paths missing from the final request (empty when all are there)."""
    text = json.dumps(list(messages))
    return [fact for fact in (TASK, *MODIFIED) if fact not in text]


def shrinks(requests: Sequence[Sequence[object]]) -> tuple[int, int]:
    """How many requests were smaller than the one before them: in characters, in messages."""
    pairs = list(itertools.pairwise(requests))
    chars = sum(1 for a, b in pairs if len(json.dumps(list(b))) < len(json.dumps(list(a))))
    return chars, sum(1 for a, b in pairs if len(b) < len(a))
