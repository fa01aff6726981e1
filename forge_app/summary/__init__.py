"""The summary layer: the frame template, its transformers, bounds and redaction.

Depends on ``forge_domain`` and ``forge_app.errors`` only.
"""

from forge_app.summary._budget import (
    COMMAND_LIMIT,
    TRUNCATION_MARKER,
    drop_oldest_narration,
    limit_texts,
    truncate_text,
)
from forge_app.summary._frame import (
    SUMMARY_MARKER,
    TEMPLATE_NAME,
    SummaryFrame,
    default_template_dir,
    is_summary_text,
)
from forge_app.summary._omission import OMISSION_NOTE
from forge_app.summary._read_frame import (
    EARLIER_SUMMARY_LIMIT,
    EARLIER_SUMMARY_NOTE,
    earlier_summary,
    read_frame,
)
from forge_app.summary._redaction import REDACTED, redact
from forge_app.summary.transformers import (
    DedupeRole,
    DropRole,
    KeepLastOperation,
    Pipe,
    RedactSecrets,
    StripWorkingDir,
    SummaryTransformer,
    Transformer,
    When,
    pipe,
    when,
)

__all__ = [
    "COMMAND_LIMIT",
    "EARLIER_SUMMARY_LIMIT",
    "EARLIER_SUMMARY_NOTE",
    "OMISSION_NOTE",
    "REDACTED",
    "SUMMARY_MARKER",
    "TEMPLATE_NAME",
    "TRUNCATION_MARKER",
    "DedupeRole",
    "DropRole",
    "KeepLastOperation",
    "Pipe",
    "RedactSecrets",
    "StripWorkingDir",
    "SummaryFrame",
    "SummaryTransformer",
    "Transformer",
    "When",
    "default_template_dir",
    "drop_oldest_narration",
    "earlier_summary",
    "is_summary_text",
    "limit_texts",
    "pipe",
    "read_frame",
    "redact",
    "truncate_text",
    "when",
]
