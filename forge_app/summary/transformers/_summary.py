"""SummaryTransformer: the named pipe that tidies a summary before it is rendered."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from forge_app.summary.transformers._base import Pipe, Transformer, pipe
from forge_app.summary.transformers._dedupe_role import DedupeRole
from forge_app.summary.transformers._drop_role import DropRole
from forge_app.summary.transformers._keep_last_operation import KeepLastOperation
from forge_app.summary.transformers._redact_secrets import RedactSecrets, redacted_text
from forge_app.summary.transformers._strip_working_dir import StripWorkingDir
from forge_domain import Role
from forge_domain.summary import ContextSummary, TextItem


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
    spared: Collection[int] = frozenset()
    """The ids of text items the redaction leaves as they are (:meth:`sparing`)."""

    @property
    def pipeline(self) -> Pipe[ContextSummary]:
        """The steps, as one pipe."""
        steps = self._steps_before_redaction()
        if self.redact_secrets:
            steps.append(RedactSecrets(self.spared))
        return pipe(*steps)

    def _steps_before_redaction(self) -> list[Transformer[ContextSummary]]:
        steps: list[Transformer[ContextSummary]] = [
            DropRole(Role.SYSTEM),
            DedupeRole(Role.USER),
            KeepLastOperation(),
        ]
        if self.cwd:
            steps.append(StripWorkingDir(self.cwd))
        return steps

    def unredacted(self, summary: ContextSummary) -> ContextSummary:
        """The pipeline's steps but the redaction: :meth:`redacted` of this is the pipeline's
        result (for a caller that reads the texts before choosing what to spare)."""
        return pipe(*self._steps_before_redaction())(summary)

    def redacted(self, summary: ContextSummary) -> ContextSummary:
        """The pipeline's last step alone: the redaction (sparing :attr:`spared`), if on."""
        return RedactSecrets(self.spared)(summary) if self.redact_secrets else summary

    def sparing(self, items: Collection[TextItem]) -> SummaryTransformer:
        """This pipeline, leaving ``items`` (texts the caller drops before anything reads
        them) unredacted: a long chat's narration is mostly dropped by its budget, its asks
        by the ask bound."""
        return replace(self, spared=frozenset(map(id, items))) if items else self

    def assistant_text(self, text: str) -> str:
        """What the pipeline makes of an assistant's text: only the redaction changes it
        (a user's text too, when it stays: the other steps drop repeats, never rewrite)."""
        return redacted_text(text) if self.redact_secrets else text

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """Run the pipeline."""
        return self.pipeline(summary)
