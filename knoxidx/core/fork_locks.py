"""Lock files no forked child keeps. An ``flock`` belongs to the open file, which a forked
child shares: a child that outlived its parent (a worker stuck on a dead parent's lock) kept
the parent's lock held for as long as it ran. A holder registers each locked descriptor here;
every forked child closes its copies at once, which leaves the parent's lock as it is."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import suppress

# locked descriptor -> what its holder does when a forked child closes it (forget it)
_HELD: dict[int, Callable[[], None]] = {}
_GUARD = threading.Lock()


def close_in_forked_children(fd: int, forget: Callable[[], None]) -> None:
    """Have every process forked from now on close ``fd`` and call ``forget``."""
    with _GUARD:
        _HELD[fd] = forget


def released(fd: int) -> None:
    """``fd`` is unlocked and about to be closed: forked children have nothing to close."""
    with _GUARD:
        _HELD.pop(fd, None)


def _close_in_child() -> None:
    for fd, forget in list(_HELD.items()):
        with suppress(OSError):
            os.close(fd)
        forget()
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)
