"""The structured summary of a span, and what a summary carries over from it.

* :class:`ContextSummary` and its blocks and items, built from messages with the tool
  catalog of :mod:`forge_domain.tools` (``_summary.py``);
* the tool kinds a summary item holds, re-exported from :mod:`forge_domain.tools` as
  ``_summary.py`` declares them;
* the last reasoning and the accumulated usage a summary carries over from the span
  it replaces (``_carry_over.py``).

The modules are private; import from this package.
"""

from forge_domain.summary._carry_over import accumulated_usage, carry_reasoning
from forge_domain.summary._summary import (
    ContextSummary,
    FetchTool,
    FileReadTool,
    FileRemoveTool,
    FileTool,
    FileUpdateTool,
    FollowupTool,
    GenericTool,
    McpTool,
    PlanTool,
    SearchTool,
    SemanticQuery,
    SemSearchTool,
    ShellTool,
    SkillTool,
    SummaryBlock,
    SummaryItem,
    SummaryTool,
    TaskTool,
    TextItem,
    TodoReadTool,
    TodoWriteTool,
    ToolCallItem,
    ToolKind,
    UndoTool,
)

__all__ = [
    "ContextSummary",
    "FetchTool",
    "FileReadTool",
    "FileRemoveTool",
    "FileTool",
    "FileUpdateTool",
    "FollowupTool",
    "GenericTool",
    "McpTool",
    "PlanTool",
    "SearchTool",
    "SemSearchTool",
    "SemanticQuery",
    "ShellTool",
    "SkillTool",
    "SummaryBlock",
    "SummaryItem",
    "SummaryTool",
    "TaskTool",
    "TextItem",
    "TodoReadTool",
    "TodoWriteTool",
    "ToolCallItem",
    "ToolKind",
    "UndoTool",
    "accumulated_usage",
    "carry_reasoning",
]
