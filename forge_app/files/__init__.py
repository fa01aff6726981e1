"""The files layer: agent definitions (YAML, Markdown) and transcript files, written atomically.

Depends on ``forge_domain`` and ``forge_app.errors`` only.
"""

from forge_app.files._agents import (
    AgentFile,
    DeprecatedAgentSyntax,
    default_agent,
    load_agent,
    load_agents,
    parse_agent_markdown,
    parse_agents,
)
from forge_app.files._atomic import (
    check_outputs,
    check_writable,
    ensure_not_an_input,
    write_bytes_atomic,
    write_text_atomic,
)
from forge_app.files._containers import (
    CONTAINERS,
    Container,
    ContainerEventsNotWritable,
    ContainerLog,
    detect_container,
    read_container,
)
from forge_app.files._tokenizer import (
    Tokenizer,
    TokenizerChoice,
    TokenizerLoader,
    load_tokenizer,
)
from forge_app.files._transcripts import (
    FileFormat,
    Transcript,
    layout_for,
    parse_transcript,
    read_transcript,
    write_transcript,
)

__all__ = [
    "CONTAINERS",
    "AgentFile",
    "Container",
    "ContainerEventsNotWritable",
    "ContainerLog",
    "DeprecatedAgentSyntax",
    "FileFormat",
    "Tokenizer",
    "TokenizerChoice",
    "TokenizerLoader",
    "Transcript",
    "check_outputs",
    "check_writable",
    "default_agent",
    "detect_container",
    "ensure_not_an_input",
    "layout_for",
    "load_agent",
    "load_agents",
    "load_tokenizer",
    "parse_agent_markdown",
    "parse_agents",
    "parse_transcript",
    "read_container",
    "read_transcript",
    "write_bytes_atomic",
    "write_text_atomic",
    "write_transcript",
]
