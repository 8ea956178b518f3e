"""Fault-injection scenarios behind ``RELIABILITY.md``: each is a function that runs real
processes against a real index and returns what it saw. ``tests/reliability`` runs each in a
quick form; ``python -m bench.reliability`` runs the long forms and prints the table."""
