"""Compile profiles, one package each."""
