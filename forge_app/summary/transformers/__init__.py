"""Transformers of a :class:`~forge_domain.ContextSummary`, and how to compose them."""

from forge_app.summary.transformers._base import Pipe, Transformer, When, pipe, when
from forge_app.summary.transformers._dedupe_role import DedupeRole
from forge_app.summary.transformers._drop_role import DropRole
from forge_app.summary.transformers._keep_last_operation import KeepLastOperation
from forge_app.summary.transformers._redact_secrets import RedactSecrets, redaction_memo
from forge_app.summary.transformers._strip_working_dir import StripWorkingDir
from forge_app.summary.transformers._summary import SummaryTransformer

__all__ = [
    "DedupeRole",
    "DropRole",
    "KeepLastOperation",
    "Pipe",
    "RedactSecrets",
    "StripWorkingDir",
    "SummaryTransformer",
    "Transformer",
    "When",
    "pipe",
    "redaction_memo",
    "when",
]
