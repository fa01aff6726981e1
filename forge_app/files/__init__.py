"""The files layer: agent definitions (YAML, Markdown) and transcript files, written atomically.

Depends on ``forge_domain`` and ``forge_app.errors`` only. A name is imported from its
module the first time it is read (``forge_domain/_lazy.py``): the command line's options
read ``FileFormat`` without the agent loader and the transcript reader.
"""

from typing import TYPE_CHECKING

from forge_domain._lazy import LazyExports

if TYPE_CHECKING:  # the names load on first use: see forge_domain/_lazy.py
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

_EXPORTS = LazyExports(
    __name__,
    {
        "._agents": [
            "AgentFile",
            "DeprecatedAgentSyntax",
            "default_agent",
            "load_agent",
            "load_agents",
            "parse_agent_markdown",
            "parse_agents",
        ],
        "._atomic": [
            "check_outputs",
            "check_writable",
            "ensure_not_an_input",
            "write_bytes_atomic",
            "write_text_atomic",
        ],
        "._containers": [
            "CONTAINERS",
            "Container",
            "ContainerEventsNotWritable",
            "ContainerLog",
            "detect_container",
            "read_container",
        ],
        "._tokenizer": ["Tokenizer", "TokenizerChoice", "TokenizerLoader", "load_tokenizer"],
        "._file_format": ["FileFormat"],
        "._transcripts": [
            "Transcript",
            "layout_for",
            "parse_transcript",
            "read_transcript",
            "write_transcript",
        ],
    },
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


def __getattr__(name: str) -> object:
    """Import an exported name from its module the first time it is read (PEP 562)."""
    return _EXPORTS.load(globals(), name)
