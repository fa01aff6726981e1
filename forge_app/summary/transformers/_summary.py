"""SummaryTransformer: the named pipe that tidies a summary before it is rendered."""

from __future__ import annotations

from dataclasses import dataclass

from forge_app.summary.transformers._base import Pipe, Transformer, pipe
from forge_app.summary.transformers._dedupe_role import DedupeRole
from forge_app.summary.transformers._drop_role import DropRole
from forge_app.summary.transformers._keep_last_operation import KeepLastOperation
from forge_app.summary.transformers._redact_secrets import RedactSecrets
from forge_app.summary.transformers._strip_working_dir import StripWorkingDir
from forge_domain import Role
from forge_domain.summary import ContextSummary


@dataclass(frozen=True)
class SummaryTransformer:
    """Drop system blocks, fold user runs, keep last operations, strip the cwd, redact secrets.

    ``DropRole(system)`` → ``DedupeRole(user)`` → ``KeepLastOperation()`` →
    ``StripWorkingDir(cwd)`` → ``RedactSecrets()``: forge's four steps in forge's order,
    each with the improvements its module describes, then the secrets are hidden (before
    any text is cut, so no half of a secret survives a cut). Without a ``cwd`` the
    fourth step is skipped; with ``redact_secrets=False`` (``Compact.redact_secrets``) the
    last one.
    """

    cwd: str | None = None
    """The working directory stripped from file paths; None keeps paths as they are."""
    redact_secrets: bool = True
    """Whether recognised secrets are replaced with ``[REDACTED]``."""

    @property
    def pipeline(self) -> Pipe[ContextSummary]:
        """The steps, as one pipe."""
        steps: list[Transformer[ContextSummary]] = [
            DropRole(Role.SYSTEM),
            DedupeRole(Role.USER),
            KeepLastOperation(),
        ]
        if self.cwd:
            steps.append(StripWorkingDir(self.cwd))
        if self.redact_secrets:
            steps.append(RedactSecrets())
        return pipe(*steps)

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """Run the pipeline."""
        return self.pipeline(summary)
