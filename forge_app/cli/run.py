"""``forge-compact run``: the live agent loop against an OpenAI-compatible endpoint."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forge_app.cli.console import counted, err, fail, out
from forge_app.cli.history import opened_store, store_file
from forge_app.cli.options import (
    AgentId,
    OtelOption,
    StoreOption,
    TokenizerName,
    resolve_agent,
    tokenizer_loader,
)
from forge_app.errors import EndpointNotConfigured
from forge_app.files._atomic import check_outputs
from forge_app.runtime._defaults import TURN_DEADLINE

if TYPE_CHECKING:  # the agent loop is imported when the command runs (start-up time)
    from forge_app.runtime._conversation import Conversation
    from forge_app.runtime._orchestrator import Orchestrator
    from forge_domain import Agent

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
MODEL_ENV = "OPENAI_MODEL"


def check_endpoint(agent: Agent, environ: Mapping[str, str]) -> None:
    """Raise :class:`EndpointNotConfigured` unless a provider and a model can be called.

    An endpoint is configured by ``base_url`` in the agent or ``OPENAI_BASE_URL``
    (a key is optional for local servers), or by an API key alone (OpenAI's own API).
    """
    key_env = agent.api_key_env or API_KEY_ENV
    if not (agent.base_url or environ.get(BASE_URL_ENV) or environ.get(key_env)):
        raise EndpointNotConfigured(
            "base_url",
            f"no endpoint configured: set {BASE_URL_ENV} (and {key_env}) or `base_url:` "
            "in the agent file",
        )
    if not (agent.model or environ.get(MODEL_ENV)):
        raise EndpointNotConfigured(
            "model", f"no model configured: set `model:` in the agent file or {MODEL_ENV}"
        )


def final_answer(conversation: Conversation) -> str:
    """The text of the last assistant message (empty when there is none)."""
    from forge_domain import Role  # imported when used: start-up time

    for message in reversed(conversation.context.messages):
        if message.has_role(Role.ASSISTANT):
            return message.text
    return ""


def run_command(
    agent_file: Annotated[
        Path,
        typer.Argument(
            metavar="AGENT",
            help="Agent file (YAML, or Markdown with front matter).",
            show_default=False,
        ),
    ],
    task: Annotated[
        str, typer.Argument(metavar="TASK", help="The user message.", show_default=False)
    ],
    agent_id: AgentId = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the final (compacted) transcript here."),
    ] = None,
    deadline: Annotated[
        float,
        typer.Option(
            "--turn-deadline",
            min=0.001,
            help="Seconds each turn's model call may take in total, retries included; "
            "then the run stops (exit 1).",
        ),
    ] = TURN_DEADLINE,
    store: StoreOption = None,
    tokenizer: TokenizerName = None,
    otel: OtelOption = False,
) -> None:
    """Run the agent loop on TASK against an OpenAI-compatible endpoint.

    Endpoint, key and model come from the agent file (`base_url`, `api_key_env`, `model`)
    or from OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL. The answer goes to stdout.
    Exits 1 when a compaction could not complete or the model's last reply holds no text (the
    answer, if any, and the transcript are still written).
    """
    check_outputs([output, store_file(store)], inputs=[agent_file])
    agent = resolve_agent(agent_file, agent_id)
    check_endpoint(agent, os.environ)
    import anyio  # imported when used: start-up time

    from forge_app.cli._otel import otlp_telemetry
    from forge_app.cli._run_hooks import CompactionFailures
    from forge_app.files._transcripts import Transcript, write_transcript
    from forge_app.runtime._dispatch import discover_plugins
    from forge_app.runtime._model import OpenAIChatModel
    from forge_app.runtime._orchestrator import Orchestrator
    from forge_app.runtime._retry import RetryPolicy

    with opened_store(store) as session_store, otlp_telemetry(otel, agent):
        orchestrator = Orchestrator(
            agent,
            OpenAIChatModel.for_agent(agent),
            plugins=discover_plugins(),
            retry=RetryPolicy(deadline=deadline),
            store=session_store,
            meter=tokenizer_loader(tokenizer, agent).meter(model=agent.model),
        )
        conversation = orchestrator.open(task)
        failures = CompactionFailures()
        conversation.hooks.register(failures, CompactionFailures.name)
        anyio.run(_run_and_close, orchestrator, conversation)
        if session_store is not None:
            err.print(f"stored as conversation {conversation.id} in {session_store.url}")
    answer = final_answer(conversation)
    if answer:
        out.print(answer, markup=False, highlight=False)
    context = conversation.context
    err.print(
        f"{counted(conversation.turns, 'turn')}, {counted(conversation.compactions, 'compaction')}"
        f"; final context {conversation.token_count()} tokens in {counted(len(context), 'message')}"
    )
    if output is not None:
        write_transcript(output, Transcript(context))
        err.print(f"transcript: {output}")
    if not answer:
        fail("no answer: the model's last reply had no text (content null or empty)")
        raise typer.Exit(1)
    if failures.count:
        fail(f"{failures.count} compaction(s) could not complete")
        raise typer.Exit(1)


async def _run_and_close(orchestrator: Orchestrator, conversation: Conversation) -> None:
    """Run the loop, then release the conversation's engine whatever ended the run."""
    try:
        await orchestrator.run(conversation)
    finally:
        await conversation.aclose()
