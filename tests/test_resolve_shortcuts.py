"""The resolver's shortcuts change nothing it answers. The facts it loads are settled out of
the collector's sight while an update runs."""

from __future__ import annotations

import gc

from knoxidx.indexer import heap


def test_settle_freezes_only_inside_a_frozen_heap() -> None:
    assert gc.get_freeze_count() == 0
    outside = [object()]
    heap.settle()
    assert gc.get_freeze_count() == 0 and any(o is outside for o in gc.get_objects())
    with heap.frozen_heap():
        inside = [object()]
        assert any(o is inside for o in gc.get_objects())
        heap.settle()
        assert not any(o is inside for o in gc.get_objects())  # out of the collector's sight
    assert gc.get_freeze_count() == 0  # the block's exit returned it
    assert any(o is inside for o in gc.get_objects())
