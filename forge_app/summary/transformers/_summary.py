"""SummaryTransformer: the named pipe that tidies a summary before it is rendered."""

from __future__ import annotations

from dataclasses import dataclass

from forge_app.summary.transformers._base import Pipe, Transformer, pipe
from forge_app.summary.transformers._dedupe_role import DedupeRole
from forge_app.summary.transformers._drop_role import DropRole
from forge_app.summary.transformers._keep_last_operation import KeepLastOperation
from forge_app.summary.transformers._strip_working_dir import StripWorkingDir
from forge_domain.messages import Role
from forge_domain.summary import ContextSummary


@dataclass(frozen=True)
class SummaryTransformer:
    """Drop system blocks, fold user runs, keep last operations, strip the working directory.

    ``DropRole(system)`` → ``DedupeRole(user)`` → ``KeepLastOperation()`` →
    ``StripWorkingDir(cwd)``: forge's four steps in forge's order, each with the
    improvements its module describes; without a ``cwd`` the last step is skipped.
    """

    cwd: str | None = None
    """The working directory stripped from file paths; None keeps paths as they are."""

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
        return pipe(*steps)

    def __call__(self, summary: ContextSummary, /) -> ContextSummary:
        """Run the pipeline."""
        return self.pipeline(summary)
