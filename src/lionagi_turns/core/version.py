"""The package's version: the one source hatch reads (``pyproject.toml``) and every module
that names it imports."""

__version__ = "0.3.0"
