"""Errors raised by the pure domain.

Every error the domain raises derives from one root, so a caller can catch the
whole family or one leaf it knows how to handle::

    ForgeDomainError
    ├── InvalidMessage        a message in a transcript is malformed (index + field)
    ├── InvalidTranscript     a transcript breaks provider rules (all violations)
    ├── InvalidConfig         a Compact / Agent value is out of range
    │   └── InvalidToolSpec   a tool-catalog entry is malformed (tool name + problem)
    ├── InvalidPattern        a test pattern string uses an unknown letter
    └── InvalidArguments      tool-call arguments are not valid JSON
"""

from __future__ import annotations

from collections.abc import Sequence


class ForgeDomainError(Exception):
    """Root of every error raised by ``forge_domain``."""


class InvalidMessage(ForgeDomainError, ValueError):
    """A message of a transcript is malformed.

    ``index`` is the position of the message in the list and ``field`` the dotted
    path of the offending field inside it (``tool_calls[0].function.arguments``);
    ``container`` names the list (``messages``, or ``input`` for Responses items).
    """

    def __init__(
        self, index: int, field: str, problem: str, *, container: str = "messages"
    ) -> None:
        self.index = index
        self.field = field
        self.problem = problem
        self.container = container
        location = f"{container}[{index}]" + (f".{field}" if field else "")
        super().__init__(f"{location}: {problem}")


class InvalidTranscript(ForgeDomainError, ValueError):
    """A transcript breaks the rules a provider enforces.

    ``violations`` holds one human-readable line per problem, each naming the
    message index at fault.
    """

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        shown = "; ".join(self.violations[:5])
        more = len(self.violations) - 5
        suffix = f" (and {more} more)" if more > 0 else ""
        super().__init__(f"invalid transcript: {shown}{suffix}")


class InvalidConfig(ForgeDomainError, ValueError):
    """A configuration value is out of its allowed range."""


class InvalidToolSpec(InvalidConfig):
    """An entry of a tool catalog is malformed; ``tool`` names the entry at fault."""

    def __init__(self, tool: str, problem: str) -> None:
        self.tool = tool
        self.problem = problem
        super().__init__(f"tool catalog entry {tool!r}: {problem}")


class InvalidPattern(ForgeDomainError, ValueError):
    """A message-pattern string contains a letter the pattern alphabet lacks."""

    def __init__(self, pattern: str, position: int) -> None:
        self.pattern = pattern
        self.position = position
        super().__init__(
            f"unknown letter {pattern[position]!r} at position {position} of pattern {pattern!r}"
        )


class InvalidArguments(ForgeDomainError, ValueError):
    """Tool-call arguments are not a JSON document."""

    def __init__(self, tool_name: str, arguments: str) -> None:
        self.tool_name = tool_name
        self.arguments = arguments
        excerpt = arguments if len(arguments) <= 80 else arguments[:77] + "..."
        super().__init__(f"arguments of tool call {tool_name!r} are not valid JSON: {excerpt!r}")
