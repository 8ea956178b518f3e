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

from collections.abc import Sequence

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


def lines_inside(ranges: Sequence[Range], touched: Sequence[Hunk]) -> tuple[int, int]:
    """Lines added and removed inside the range set by its touched hunks: the added lines that
    fall in the ranges, and every removed line of those hunks (they all map into the range)."""
    added = sum(max(0, min(h[3], end) - max(h[2], start))
                for h in touched for start, end in ranges)
    removed = sum(h[1] - h[0] for h in touched)
    return added, removed
