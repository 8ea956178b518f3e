"""A definition's commits, traced back from its lines at HEAD through the stored diffs of its
file (and of the files it was renamed from), newest first: the commits ``git log -L
<start>,<end>:<path> --first-parent`` lists, read from the index instead of from git."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from knoxidx.history.ranges import IndexedDiff, Range, lines_inside
from knoxidx.history.store import HistoryRows, unpack_numbers

Key = TypeVar("Key")


@dataclass(slots=True)
class Touch:
    seq: int
    added: int
    removed: int
    path: str  # the file's path in that commit


@dataclass(slots=True)
class Trace:
    touches: list[Touch] = field(default_factory=list)  # newest first
    ranges: list[Range] = field(default_factory=list)  # still being followed


def trace_file(tables: HistoryRows, path: str, ranges: Mapping[Key, list[Range]],
               since_seq: int = 0) -> dict[Key, Trace]:
    """For each definition of ``path`` (git's path: the repository prefix included), by key,
    its line ranges in the last commit read (see :mod:`.worktree`): the commits from
    ``since_seq`` on that touched them. Renames are followed as git detected them; a file
    added in a commit ends every trace there."""
    traces = {key: Trace(ranges=list(r)) for key, r in ranges.items()}
    following = [trace for trace in traces.values() if trace.ranges]
    current: str = path
    before: int | None = None
    while following:
        renamed_to: tuple[str, int] | None = None
        for seq, old_path, blob in tables.changes_of(current, before, since_seq):
            diff = IndexedDiff(unpack_numbers(blob))
            for trace in following:
                touched, parent_ranges = diff.carry(trace.ranges)
                if touched:
                    added, removed = lines_inside(trace.ranges, touched)
                    trace.touches.append(Touch(seq, added, removed, current))
                trace.ranges = [] if old_path is None else parent_ranges
            following = [trace for trace in following if trace.ranges]
            if not following:
                return traces
            if old_path is not None and old_path != current:
                renamed_to = (old_path, seq)
                break
        if renamed_to is None:
            break
        current, before = renamed_to
    return traces
