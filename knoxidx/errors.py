"""The errors knoxidx raises on purpose; the CLI maps each to a one-line message and exit code."""

from __future__ import annotations


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

    def __init__(self, message: str, candidates: list[dict]) -> None:
        super().__init__(message)
        self.candidates = candidates


class IndexLockedError(KnoxidxError):
    """Another process holds the single-writer lock on this index."""

    exit_code = 5


class CorruptIndexError(KnoxidxError):
    exit_code = 6


class BadPathError(KnoxidxError):
    exit_code = 2


class BadInputError(KnoxidxError):
    """An argument that cannot name anything (an empty symbol or name): HTTP 400."""

    exit_code = 2


class IndexWriteError(KnoxidxError):
    """The index cannot be written: the disk is full, or ``.knoxidx/`` is read-only. The
    index is left as it was before the update."""

    exit_code = 7


class HistoryUnavailableError(KnoxidxError):
    """The index holds no git history (not a git repository, ``--no-history``, or a store
    that does not keep it): HTTP 503."""

    exit_code = 9
