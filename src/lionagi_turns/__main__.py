"""``python -m lionagi_turns``: the ``lionagi-turns`` command (see ``lionagi_turns.cli``)."""

from lionagi_turns.cli import main

if __name__ == "__main__":
    main()
