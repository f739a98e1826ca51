"""End-to-end tests: lionagi's real call surfaces against a 127.0.0.1 HTTP server and a fake
``claude`` executable, with ``lionagi_turns.installed()`` routing them through the compiler."""
