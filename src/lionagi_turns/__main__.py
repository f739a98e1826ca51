"""``python -m lionagi_turns``: the ``lionagi-turns`` command (see ``lionagi_turns.cli``)."""

from .cli import main

if __name__ == "__main__":
    main()
