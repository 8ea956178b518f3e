"""Carrying line ranges across one diff, case by case (0-based, end excluded; a hunk is
parent start, parent end, target start, target end)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from knoxidx.history.gitlog import unquote
from knoxidx.history.ranges import Hunk, IndexedDiff, Range, lines_inside, normalised


def carried(ranges, hunks):
    touched, parent = IndexedDiff.of(hunks).carry(ranges)
    return bool(touched), parent


def test_lines_inserted_above_shift_the_range_without_touching_it() -> None:
    assert carried([(10, 20)], [(2, 2, 2, 5)]) == (False, [(7, 17)])


def test_lines_deleted_above_shift_it_down() -> None:
    assert carried([(10, 20)], [(2, 6, 2, 2)]) == (False, [(14, 24)])


def test_a_deletion_inside_splits_the_range_and_joins_the_deleted_lines() -> None:
    # lines 15.. of the child were 18.. in the parent; the deleted 15-17 belong to the range
    assert carried([(10, 20)], [(15, 18, 15, 15)]) == (True, [(10, 23)])


def test_a_deletion_at_the_range_edge_does_not_touch_it() -> None:
    assert carried([(10, 20)], [(20, 25, 20, 20)]) == (False, [(10, 20)])
    assert carried([(10, 20)], [(10, 12, 10, 10)]) == (False, [(12, 22)])


def test_a_replaced_line_inside_keeps_the_range_and_counts_its_lines() -> None:
    ranges, hunks = [(10, 20)], [(12, 13, 12, 15)]
    touched, parent = IndexedDiff.of(hunks).carry(ranges)
    assert parent == [(10, 18)]
    assert lines_inside(ranges, touched) == (3, 1)


def test_lines_all_added_leave_nothing_to_follow() -> None:
    assert carried([(10, 20)], [(10, 10, 10, 20)]) == (True, [])


def test_a_hunk_across_the_edge_brings_its_whole_old_side() -> None:
    assert carried([(10, 20)], [(5, 12, 5, 15)]) == (True, [(5, 17)])


def test_normalised_merges_adjacent_and_drops_empty() -> None:
    assert normalised([(5, 7), (1, 3), (3, 4), (9, 9)]) == [(1, 4), (5, 7)]


def test_quoted_paths() -> None:
    assert unquote('"na\\303\\257ve \\"x\\"\\tname.py"') == 'naïve "x"\tname.py'
    assert unquote("plain.py") == "plain.py"


# The plain reference the indexed diff is checked against: every hunk against every range.
def _overlaps(a: Range, b: Range) -> bool:
    return not (a[1] <= b[0] or b[1] <= a[0])


def _minus(ranges: list[Range], holes: list[Range]) -> list[Range]:
    out: list[Range] = []
    for start, end in ranges:
        pieces = [(start, end)]
        for h_start, h_end in holes:
            pieces = [p for piece in pieces for p in _cut(piece, h_start, h_end)]
        out.extend(pieces)
    return out


def _cut(piece: Range, h_start: int, h_end: int) -> list[Range]:
    start, end = piece
    if h_start == h_end:  # a deletion inside the range splits it: the halves shift apart
        return [(start, h_start), (h_start, end)] if start < h_start < end else [piece]
    if h_end <= start or end <= h_start:
        return [piece]
    return [r for r in ((start, h_start), (h_end, end)) if r[1] > r[0]]


def touched_hunks(ranges: Sequence[Range], hunks: Sequence[Hunk]) -> list[Hunk]:
    """The hunks whose target side overlaps ``ranges``."""
    return [h for h in hunks if any(_overlaps((h[2], h[3]), r) for r in ranges)]


def map_to_parent(ranges: list[Range], hunks: Sequence[Hunk],
                  touched: Sequence[Hunk]) -> list[Range]:
    """``ranges`` in the parent's numbering: untouched lines shifted by the hunks above them,
    plus the whole parent side of every touched hunk. ``hunks`` are sorted by position."""
    kept = _minus(ranges, [(h[2], h[3]) for h in touched])
    shifted: list[Range] = []
    offset, next_hunk = 0, 0
    for start, end in kept:
        while next_hunk < len(hunks) and start >= hunks[next_hunk][2]:
            parent_start, parent_end, target_start, target_end = hunks[next_hunk]
            offset += (parent_end - parent_start) - (target_end - target_start)
            next_hunk += 1
        shifted.append((start + offset, end + offset))
    return normalised(shifted + [(h[0], h[1]) for h in touched])


def _random_diff(rng: random.Random) -> list[tuple[int, int, int, int]]:
    """Hunks as git writes them: in order, apart, each replacing some lines by others."""
    hunks, parent, target = [], 0, 0
    for _ in range(rng.randint(0, 8)):
        parent += (gap := rng.randint(1, 6))
        target += gap
        old, new = rng.choice([(0, 1), (1, 0)]) if rng.random() < 0.3 else \
            (rng.randint(0, 4), rng.randint(0, 4))
        if old == new == 0:
            continue
        hunks.append((parent, parent + old, target, target + new))
        parent, target = parent + old, target + new
    return hunks


def test_the_indexed_diff_carries_ranges_as_the_plain_functions_do() -> None:
    rng = random.Random(53)
    for _ in range(5000):
        hunks = _random_diff(rng)
        ranges = normalised([(s, s + rng.randint(1, 8))
                             for s in (rng.randint(0, 40) for _ in range(rng.choice((1, 1, 3))))])
        diff = IndexedDiff.of(hunks)
        touched = diff.touched(ranges)
        assert touched == touched_hunks(ranges, hunks), (ranges, hunks)
        assert diff.to_parent(ranges, touched) == map_to_parent(ranges, hunks, touched), \
            (ranges, hunks)
        assert diff.carry(ranges) == (touched, map_to_parent(ranges, hunks, touched))
