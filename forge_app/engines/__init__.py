"""Context engines: the deterministic ``frame`` engine, the ``llm`` engine and their tiers."""
