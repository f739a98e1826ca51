"""ADR-0127's prompt-cache profile."""
