"""The evaluation layer: replay sessions and measure validity, size, facts kept and cost.

Sits above the runtime (it drives replays) and below the CLI (``forge-compact eval``).
"""

from forge_app.evaluation._cost import PromptCost, PromptCostSum, prompt_cost, uncompacted_requests
from forge_app.evaluation._evaluate import SessionEval, evaluate
from forge_app.evaluation._facts import Failure, SessionFacts, extract_facts
from forge_app.evaluation._retention import FactCheck, Retention, fact_checks, retention

__all__ = [
    "FactCheck",
    "Failure",
    "PromptCost",
    "PromptCostSum",
    "Retention",
    "SessionEval",
    "SessionFacts",
    "evaluate",
    "extract_facts",
    "fact_checks",
    "prompt_cost",
    "retention",
    "uncompacted_requests",
]
