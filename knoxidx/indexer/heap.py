"""Keeping Python's cyclic garbage collector off the heap an update works over."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_open_blocks = 0  # frozen_heap blocks this process is inside (a forked child inherits them)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Every object that exists now is out of the collector's sight for the block
    (``gc.freeze``): it neither re-walks them nor, in a forked child, touches (and so copies)
    their pages. ``gc.unfreeze`` returns everything frozen at once, so only the outermost
    freeze returns it: a watcher's, or an update's around a resolver fan-out's."""
    global _open_blocks
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    _open_blocks += 1
    try:
        yield
    finally:
        _open_blocks -= 1
        if outermost:
            gc.unfreeze()


def settle() -> None:
    """Inside a :func:`frozen_heap` block, put what was allocated since out of the
    collector's sight as well (the block's outermost exit returns it, with the rest).

    For long-lived, acyclic data made in bulk in the middle of the block: the facts a
    resolver loads are a million small records (named tuples, which the collector never
    untracks) that it would re-walk in every young collection to find nothing, about an
    eighth of resolution's time. Outside a block it does nothing: no freeze would undo it.
    (It counts the blocks itself: ``gc.get_freeze_count`` walks every frozen object.)
    """
    if _open_blocks:
        gc.freeze()
