"""Smoke runs of the benchmarks in benchmarks/ (each script runs and prints its figures)."""
