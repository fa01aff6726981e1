"""The evaluation layer: replay sessions and measure validity, size, facts kept and cost.

Sits above the runtime (it drives replays) and below the CLI (``forge-compact eval``).
"""

from forge_app.evaluation._cost import PromptCost, prompt_cost
from forge_app.evaluation._evaluate import SessionEval, evaluate
from forge_app.evaluation._facts import Failure, SessionFacts, extract_facts
from forge_app.evaluation._retention import Retention, retention

__all__ = [
    "Failure",
    "PromptCost",
    "Retention",
    "SessionEval",
    "SessionFacts",
    "evaluate",
    "extract_facts",
    "prompt_cost",
    "retention",
]
