"""The compiler: contracts, passes and the pipeline (no fast path, no profiles)."""
