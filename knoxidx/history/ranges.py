"""Line ranges carried back across one diff, the way ``git log -L`` carries them.

A range is ``(start, end)``: 0-based, ``end`` excluded. A hunk is ``(parent_start,
parent_end, target_start, target_end)`` in that numbering (an insertion has an empty parent
side, a deletion an empty target side). Going from a commit to its parent, a hunk *touches* a
range set when its target side overlaps one of the ranges (an empty target side only strictly
inside a range); the lines a touched hunk replaced all belong to the range in the parent, and
the untouched lines shift by the hunks above them. Following git's line-log this way, rather
than "blame at HEAD", is what keeps a definition's lines right when code above it moves.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from operator import sub

Range = tuple[int, int]
Hunk = tuple[int, int, int, int]


def normalised(ranges: Sequence[Range]) -> list[Range]:
    """Sorted, without empty ranges, overlapping or adjacent ranges merged (git's union)."""
    merged: list[Range] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def lines_inside(ranges: Sequence[Range], touched: Sequence[Hunk]) -> tuple[int, int]:
    """Lines added and removed inside the range set by its touched hunks: the added lines that
    fall in the ranges, and every removed line of those hunks (they all map into the range)."""
    added = sum(max(0, min(h[3], end) - max(h[2], start))
                for h in touched for start, end in ranges)
    removed = sum(h[1] - h[0] for h in touched)
    return added, removed


class IndexedDiff:
    """One diff's hunks, with what carrying many definitions' ranges across it asks each time
    (a file's every definition, through every commit of a file's history): the hunks' target
    starts and ends to find the touched ones by bisection, and the shift above each hunk. The
    hunks a range touches are found by bisection, not by a scan of every hunk for every
    range."""

    __slots__ = ("_hunks", "count", "parent_starts", "parent_ends", "starts", "ends", "shifts")

    def __init__(self, numbers: Sequence[int]) -> None:
        """``numbers``: the hunks flat, four numbers each (as the history stores them): the
        columns are sliced out whole, the hunks made one by one only where a range is
        touched (most diffs touch none of a file's definitions)."""
        self._hunks: list[Hunk] | None = None
        self.count = len(numbers) // 4
        self.parent_starts, self.parent_ends = numbers[0::4], numbers[1::4]
        self.starts = numbers[2::4]
        self.ends = numbers[3::4]  # sorted too: git's hunks never overlap
        self.shifts = [0, *accumulate(map(sub, map(sub, self.parent_ends, self.parent_starts),
                                          map(sub, self.ends, self.starts)))]

    @classmethod
    def of(cls, hunks: Sequence[Hunk]) -> IndexedDiff:
        return cls([n for hunk in hunks for n in hunk])

    @property
    def hunks(self) -> list[Hunk]:
        if self._hunks is None:
            self._hunks = list(zip(self.parent_starts, self.parent_ends, self.starts,
                                   self.ends, strict=True))
        return self._hunks

    def carry(self, ranges: list[Range]) -> tuple[list[Hunk], list[Range]]:
        """The hunks touching ``ranges`` and the ranges in the parent: :meth:`touched` and
        :meth:`to_parent`, with the common case (one range, untouched: it shifts) first."""
        if len(ranges) == 1:
            start, end = ranges[0]
            at = bisect_right(self.ends, start)
            if at == self.count or self.starts[at] >= end:
                shift = self.shifts[bisect_right(self.starts, start)]
                return [], [(start + shift, end + shift)] if shift else ranges
        touched = self.touched(ranges)
        return touched, self.to_parent(ranges, touched)

    def touched(self, ranges: Sequence[Range]) -> list[Hunk]:
        """The hunks touching normalised ``ranges``: a hunk touches ``(start, end)``
        when its target end is past ``start`` and its target start before ``end`` (an empty
        target side only strictly inside, by the same two comparisons)."""
        found: list[Hunk] = []
        hunks, next_free = self.hunks, 0
        for start, end in ranges:
            at = max(bisect_right(self.ends, start), next_free)
            while at < self.count and self.starts[at] < end:
                found.append(hunks[at])
                at += 1
            next_free = at  # a hunk across two ranges is listed once
        return found

    def to_parent(self, ranges: list[Range], touched: Sequence[Hunk]) -> list[Range]:
        """Normalised ``ranges`` in the parent's numbering: the lines no touched hunk replaced
        shift by the hunks at or above them, and each touched hunk brings its parent side."""
        kept: list[Range] = []
        for start, end in ranges:
            cursor = start
            for _, _, hole_start, hole_end in touched:
                if hole_start == hole_end:  # a deletion splits the range only strictly inside
                    if cursor < hole_start < end:
                        kept.append((cursor, hole_start))
                        cursor = hole_start
                elif hole_start < end and hole_end > cursor:
                    if hole_start > cursor:
                        kept.append((cursor, hole_start))
                    cursor = hole_end
            if cursor < end:
                kept.append((cursor, end))
        parent: list[Range] = [(h[0], h[1]) for h in touched]
        for start, end in kept:
            shift = self.shifts[bisect_right(self.starts, start)]
            parent.append((start + shift, end + shift))
        return normalised(parent)
