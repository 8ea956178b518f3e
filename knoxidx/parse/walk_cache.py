"""What the last walk found in each directory, trusted while the directory says nothing changed.

An update walks the whole tree to learn which files changed, and on the whole corpus (3,300
directories, 8,700 entries) that walk was ~70 % of re-indexing one edited file: listing every
directory, and asking the ignore rules and the language table about every entry. Git's
untracked cache answers the same question the same way: a directory's mtime moves whenever an
entry is added to it, removed from it or renamed in it, so while it stands still, so does the
listing. A file's own edits do not move it, and every file is still stat'ed on every walk.

A listing is reused only when all of these still hold, and the directory is listed again
otherwise:

- the directory is the same (device and inode) with the same mtime;
- the ignore rules in effect in it (its parents' and its own ``.gitignore``/``.knoxidxignore``,
  whose contents are read again, since an edit in place does not move the directory) are the
  ones it was listed under;
- it was not *racy*: a directory modified less than ``RACY_NS`` before the walk that listed it
  could change again within the same timestamp tick, so it is not recorded (git's "racy
  index" rule, with room for filesystems that keep whole seconds);
- it held no symlink (where a link leads can change without its directory changing) and
  nothing in it failed to stat.

What a listing records is what the walk decided from names alone: the subdirectories to
descend into and the source files with their language, after the skip lists and ignore rules.
Sizes, mtimes, the size limit and "is it a regular file" come from a fresh stat every time.

The cache lives beside the index (``.knoxidx/walk.cache``), is written atomically, and is
thrown away whole when it cannot be read or was written by another knoxidx (the caller's
``key``: the engine fingerprint, which covers the skip lists and the language table).
"""

from __future__ import annotations

import marshal
import os
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple

CACHE_NAME = "walk.cache"
RACY_NS = 3_000_000_000
FORMAT = "knoxidx-walk-1"


class Listing(NamedTuple):
    device: int
    inode: int
    mtime_ns: int
    rules: tuple  # ((prefix, digest), ...) of the ignore rules in effect inside
    ignore_files: tuple[str, ...]  # its own ignore files, read again on every walk
    subdirs: tuple[str, ...]
    files: tuple[tuple[str, str], ...]  # (name, language)
    configs: tuple[str, ...]


class WalkCache:
    def __init__(self, path: Path | None, key: str = "",
                 listings: dict[str, Listing] | None = None) -> None:
        self.path = path
        self.key = key
        self.old: dict[str, Listing] = listings or {}
        self.new: dict[str, Listing] = {}
        self.changed = False
        self.reused = 0  # directories this walk answered from the cache

    @classmethod
    def load(cls, path: Path, key: str) -> WalkCache:
        """The cache at ``path``; an empty one when it is missing, unreadable or foreign."""
        try:
            with open(path, "rb") as fh:
                # marshal.load(fh) reads object by object: 15x slower than loads of the bytes
                header, rows = marshal.loads(fh.read())
            if header != (FORMAT, key):
                return cls(path, key)
            return cls(path, key, {prefix: Listing(*row) for prefix, row in rows})
        except (OSError, EOFError, ValueError, TypeError):
            return cls(path, key)

    def lookup(self, prefix: str, st: os.stat_result, walk_start_ns: int) -> Listing | None:
        """The listing of directory ``prefix`` if its stat still matches (the caller checks
        its rules). A racy directory is never answered from the cache."""
        listing = self.old.get(prefix)
        if (listing is None or listing.mtime_ns != st.st_mtime_ns
                or listing.inode != st.st_ino or listing.device != st.st_dev
                or walk_start_ns - st.st_mtime_ns < RACY_NS):
            return None
        return listing

    def keep(self, prefix: str, listing: Listing) -> None:
        """A listing answered from the cache stays in it."""
        self.new[prefix] = listing
        self.reused += 1

    def record(self, prefix: str, listing: Listing, walk_start_ns: int) -> None:
        if walk_start_ns - listing.mtime_ns >= RACY_NS:
            self.new[prefix] = listing
            self.changed = True

    def save(self) -> None:
        """Write what this walk saw (directories it no longer reached are dropped), if it
        differs from what was loaded. Atomic: a reader sees the old file or the new one."""
        if self.path is None or not (self.changed or self.new.keys() != self.old.keys()):
            return
        rows = [(prefix, tuple(listing)) for prefix, listing in self.new.items()]
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(marshal.dumps(((FORMAT, self.key), rows)))
            os.replace(tmp, self.path)
        except OSError:  # a cache that cannot be written costs the next walk time, no more
            with suppress(OSError):
                tmp.unlink()
