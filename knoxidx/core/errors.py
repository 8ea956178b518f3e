"""The errors knoxidx raises on purpose; the CLI maps each to a one-line message and exit code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# The fix every damaged index names.
REBUILD_FIX = "rebuild it with `knoxidx index --rebuild`"


class KnoxidxError(Exception):
    """Base class: a problem the user can act on. ``exit_code`` is what the CLI returns."""

    exit_code = 1


class IndexNotFoundError(KnoxidxError):
    exit_code = 2


class IndexGoneError(IndexNotFoundError):
    """The index file a watcher held was deleted or replaced by something else."""


class SymbolNotFoundError(KnoxidxError):
    exit_code = 3


class AmbiguousSymbolError(KnoxidxError):
    exit_code = 4

    def __init__(self, message: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.candidates = candidates


class IndexLockedError(KnoxidxError):
    """Another process holds the single-writer lock on this index."""

    exit_code = 5


class CorruptIndexError(KnoxidxError):
    exit_code = 6


@contextmanager
def decoding_stored(what: str) -> Iterator[None]:
    """Where stored data is decoded (a facts blob, a JSON column, a number kept as text): what
    does not decode is a damaged index, reported with the fix, not a traceback. Only around
    the decoding itself, so that a bug elsewhere is not mistaken for damage."""
    try:
        yield
    except (ValueError, TypeError, EOFError, IndexError, KeyError) as exc:
        raise CorruptIndexError(
            f"the index is damaged: {what} does not decode ({type(exc).__name__}: {exc}); "
            f"{REBUILD_FIX}") from None


class BadPathError(KnoxidxError):
    exit_code = 2


class ForbiddenPathError(BadPathError):
    """The path is well-formed but leads outside what may be read (HTTP 403)."""


class SourceNotFoundError(KnoxidxError):
    """No such file in the repository (HTTP 404)."""

    exit_code = 2


class BadInputError(KnoxidxError):
    """An argument that cannot name anything (an empty symbol or name): HTTP 400."""

    exit_code = 2


class LineRangeError(BadInputError):
    """Lines a file does not have: a start below 1 or past its end, an end before the start
    (HTTP 400 ``bad_range``)."""


class IndexWriteError(KnoxidxError):
    """The index cannot be written: the disk is full, or ``.knoxidx/`` is read-only. The
    index is left as it was before the update."""

    exit_code = 7


class HistoryUnavailableError(KnoxidxError):
    """The index holds no git history (not a git repository, ``--no-history``, or a store
    that does not keep it): HTTP 503."""

    exit_code = 9
