"""How the ``knoxidx`` console script may end its process at once, once a command that
closed everything it opened has printed its report."""

from __future__ import annotations

import os
import sys

# Set by a command that has closed every file, connection and process it opened: the console
# script then ends its process at once, without Python's teardown, which frees every object one
# by one (after a first build of the benchmark corpus, ~40 ms on one core: the facts, tables
# and caches of the update). Never run(): a caller of it in its own process goes on after it.
_closed_everything = False


def may_leave_at_once() -> None:
    global _closed_everything
    _closed_everything = True


def closed_everything() -> bool:
    """Whether the command that ran said it left nothing open (:func:`may_leave_at_once`)."""
    return _closed_everything


def leave_at_once() -> None:
    """End the process now, its output flushed: what the interpreter's exit would do after
    a command that left nothing open (no atexit handler of ours, no child, no thread)."""
    import logging

    logging.shutdown()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (`| head`): as Python's own exit reports it
        os._exit(120)
    os._exit(0)

