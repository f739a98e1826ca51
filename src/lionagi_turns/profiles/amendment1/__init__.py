"""ADR-0007 Amendment 1 as a compile profile: its modules. The public names are
re-exported by ``lionagi_turns.amendment1``."""
