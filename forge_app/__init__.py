"""forge_app: compactor, transformers, hooks, orchestrator and CLI."""

__all__: list[str] = []
