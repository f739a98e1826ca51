"""Characterization tooling: lionagi 0.36's own payloads, live, and the registry of intended
differences. Tooling only: the runtime (compiler, integration) never imports this package."""
