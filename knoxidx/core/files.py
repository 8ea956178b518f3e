"""Reading a file of the repository's: only a regular one, and only so much of it.

Any name in a repository may be something other than a file. A FIFO named ``.gitignore``,
``tsconfig.json`` or ``knoxidx.toml`` made ``knoxidx index`` wait for ever: opening a FIFO for
reading blocks until a writer comes, and a blocked open uses no CPU, so no CPU bound stops it.
A source file replaced by one between discovery and reading did the same to a parse worker.
Here a file is opened without blocking, checked with ``fstat``, and read up to a limit.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

# An ignore file or build configuration larger than this is not one (the largest in the
# benchmark corpora is under 10 kB)
CONFIG_MAX_BYTES = 1 << 20
# A source file read again after indexing (to chunk it, to quote it, to hash it) is read whole,
# as before: only its kind is checked
NO_LIMIT = sys.maxsize - 1
_READ = 1 << 20


class NotRegularFileError(OSError):
    """The path is a FIFO, socket, device or directory: it is not read."""


class FileTooLargeError(OSError):
    """The file holds more than the caller's limit (it may have grown since it was listed)."""


def read_regular(path: str | os.PathLike[str], limit: int = CONFIG_MAX_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes when
    read. Raises OSError (:class:`NotRegularFileError`, :class:`FileTooLargeError`, or the
    error of the open or read) otherwise; a symlink is followed."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", os.fspath(path))
        parts: list[bytes] = []
        size = 0
        # the size it has now and one byte more (which tells that it grew), then what is left
        # up to one byte past the limit, a MiB at a time
        want = min(limit, st.st_size) + 1
        while want > 0:
            part = os.read(fd, want)
            if not part:
                break
            parts.append(part)
            size += len(part)
            want = min(limit + 1 - size, _READ)
    finally:
        os.close(fd)
    if size > limit:
        raise FileTooLargeError(errno.EFBIG, f"larger than {limit:,} bytes", os.fspath(path))
    return b"".join(parts)


def read_regular_text(path: str | os.PathLike[str], limit: int = CONFIG_MAX_BYTES) -> str:
    """:func:`read_regular` as text, read as ``open(path, encoding="utf-8", errors="replace")``
    reads it (newlines made ``\\n``), so that what is made of it does not change with the way
    it is read."""
    text = read_regular(path, limit).decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


# Version-control and index internals: never read for a client, whatever leads there.
PRIVATE_DIRS = frozenset({".git", ".hg", ".svn", ".knoxidx"})


def is_private(parts: list[str]) -> bool:
    """Whether a path of these parts lies in :data:`PRIVATE_DIRS`, in any case: a
    case-insensitive file system (macOS, Windows) opens ``.GIT/config`` as ``.git/config``."""
    return any(part.casefold() in PRIVATE_DIRS for part in parts)


class OutsideRootError(OSError):
    """The path leads out of the repository, or into its version-control or index internals
    (a file replaced by a symlink since it was indexed, or a path no discovery gives);
    ``internal`` tells the second from the first."""

    internal = False


def confined(root: str | os.PathLike[str], rel: str) -> str:
    """The real path of the repository file ``rel`` (as the index stores it), where it still
    lies under ``root`` and outside :data:`PRIVATE_DIRS`; else :class:`OutsideRootError`.
    Answers read files the index listed, maybe long ago: one turned since into a link to
    ``/proc/self/environ`` or a key (by a pull, a checkout) must not be quoted."""
    prefix = os.path.join(os.path.realpath(root), "")
    real = os.path.realpath(os.path.join(prefix, rel))
    if not real.startswith(prefix):
        raise OutsideRootError(errno.EACCES, "leads outside the repository", rel)
    if is_private(real[len(prefix):].split(os.sep)):
        error = OutsideRootError(errno.EACCES, "leads into version-control or index internals",
                                 rel)
        error.internal = True
        raise error
    return real
