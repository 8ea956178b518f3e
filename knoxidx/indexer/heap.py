"""Keeping Python's cyclic garbage collector off the heap an update works over."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Every object that exists now is out of the collector's sight for the block
    (``gc.freeze``): it neither re-walks them nor, in a forked child, touches (and so copies)
    their pages. ``gc.unfreeze`` returns everything frozen at once, so only the outermost
    freeze returns it: a watcher's, or an update's around a resolver fan-out's."""
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if outermost:
            gc.unfreeze()
