"""What the index last recorded of a file: the row an update compares a file on disk with to
decide whether to read it again. Both stores return it and the parse step reads it, so it lives
below both."""

from __future__ import annotations

from typing import NamedTuple


class FileState(NamedTuple):
    id: int
    size: int
    mtime_ns: int
    hash: str
    status: str
    iface: str  # the hash of what other files can see of this one (its exported names)
