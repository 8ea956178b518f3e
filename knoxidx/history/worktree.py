"""Definitions' lines at the commit the history was read to, from their lines in the indexed
files: the same where a file is as committed; carried across the uncommitted edits (a diff of
the committed blob against the file, made here: git's own diff of the work tree could run the
repository's clean filters) where it is not; none for a file not committed at all."""

from __future__ import annotations

import difflib
import hashlib
import subprocess
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from knoxidx.core.files import NO_LIMIT, confined, read_regular
from knoxidx.history.gitlog import GitUnavailableError, git_command, git_env, run_git
from knoxidx.history.ranges import Hunk, IndexedDiff, Range

Key = TypeVar("Key")


def line_range(start: int, end: int) -> list[Range]:
    """Lines ``start``..``end`` (1-based, inclusive) as a range set."""
    return [(start - 1, end)] if end >= start >= 1 else []


def blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@lru_cache(maxsize=4)
def committed_blobs(root: Path, commit: str) -> dict[str, str]:
    """Every blob of ``commit``'s tree by path: one ``git ls-tree`` per commit for a server's
    whole life (a node answer asks it for the files of its page, many times a second)."""
    found: dict[str, str] = {}
    for entry in run_git(root, "ls-tree", "-r", "-z", "--full-tree", commit).split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            found[path] = parts[2]
    return found


def blob_bytes(root: Path, blob: str) -> bytes:
    done = subprocess.run(git_command(root, "cat-file", "blob", blob), env=git_env(),
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    if done.returncode != 0:
        raise GitUnavailableError(f"cannot read blob {blob}")
    return done.stdout


def uncommitted_hunks(committed: bytes, current: bytes) -> list[Hunk]:
    """The committed text's lines against the current ones, as hunks (parent: committed)."""
    matcher = difflib.SequenceMatcher(None, committed.splitlines(), current.splitlines(),
                                      autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def ranges_at_commit(root: Path, commit: str, prefix: str,
                     files: Mapping[str, Mapping[Key, list[Range]]],
                     ) -> dict[str, dict[Key, list[Range]]]:
    """``files`` (graph path -> definition -> ranges in the file as it is on disk) with each
    definition's ranges in ``commit``; a file ``commit`` lacks gets empty ranges."""
    blobs = committed_blobs(root, commit)
    out: dict[str, dict[Key, list[Range]]] = {}
    for path, ranges in files.items():
        blob = blobs.get(prefix + path)
        if blob is None:
            out[path] = {key: [] for key in ranges}
            continue
        try:
            current = read_regular(confined(root, path), NO_LIMIT)
        except OSError:
            out[path] = dict(ranges)
            continue
        if blob_id(current) == blob:
            out[path] = dict(ranges)
            continue
        hunks = uncommitted_hunks(blob_bytes(root, blob), current)
        diff = IndexedDiff.of(hunks)
        out[path] = {key: diff.carry(r)[1] for key, r in ranges.items()}
    return out
