"""``definitions.enclosing``: the innermost span around each position, as a merge pass."""

from __future__ import annotations

import random

from knoxidx.parse.definitions import enclosing


def _innermost(spans: list[tuple[int, int, int]], pos: int) -> int:
    """The definition: of the spans containing ``pos``, the one starting last (for equal
    spans, the later listed)."""
    inside = [s for s in spans if s[0] <= pos < s[1]]
    return max(inside, key=lambda s: (s[0], -s[1], spans.index(s)))[2] if inside else -1


def _nested_spans(rng: random.Random, start: int, end: int, depth: int,
                  out: list[tuple[int, int, int]]) -> None:
    """Spans nested or side by side inside [start, end), as definitions are."""
    at = start
    while at < end and rng.random() < 0.7:
        a = rng.randint(at, end - 1)
        b = rng.randint(a, end)
        out.append((a, b, len(out)))
        if depth and b > a:
            _nested_spans(rng, a, b, depth - 1, out)
        at = b


def test_each_position_gets_the_innermost_span_around_it() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        spans: list[tuple[int, int, int]] = []
        _nested_spans(rng, 0, 60, 3, spans)
        spans.sort(key=lambda s: (s[0], -s[1]))
        positions = sorted(rng.randint(0, 70) for _ in range(rng.randint(0, 20)))
        assert enclosing(spans, positions) == [_innermost(spans, p) for p in positions]


def test_no_spans_and_no_positions() -> None:
    assert enclosing([], [0, 5]) == [-1, -1]
    assert enclosing([(0, 10, 0)], []) == []
    # a position at a span's end is outside it; an empty span holds nothing
    assert enclosing([(0, 10, 0), (4, 4, 1)], [4, 9, 10]) == [0, 0, -1]
