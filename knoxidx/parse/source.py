"""Reading a repository file for a client (``GET /source``, the MCP ``read_code`` tool),
confined to the repository root.

A path is refused before anything is opened when it is absolute, holds ``..``, a NUL byte, a
backslash or a percent-encoded dot or slash (a client that decoded once too few times), or
names version-control or index internals; after resolving symlinks it must still lie under the
root, and discovery must not skip it (``.gitignore``, ``node_modules``, virtualenvs...): what a
client may read is what knoxidx indexes, plus the other files beside it (READMEs, configs).
Each name must be spelled as on disk, case included, as the ignore rules match it.
Given a ``disclosure`` (what ``Index.read_source`` passes:
:class:`knoxidx.retrieval.disclosure.Disclosure`), a never-send file is refused by its path
and by the path a symlink leads to, and secrets in the lines read are masked.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from knoxidx.core.errors import (
    BadPathError,
    ForbiddenPathError,
    LineRangeError,
    SourceNotFoundError,
)
from knoxidx.core.files import (
    FileTooLargeError,
    NotRegularFileError,
    OutsideRootError,
    confined,
    read_regular,
)
from knoxidx.languages.registry import language_for_path
from knoxidx.parse.watch_filter import RepoPathFilter

MAX_SOURCE_BYTES = 8 * 1024 * 1024
MAX_SOURCE_LINES = 2000
_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.IGNORECASE)


class Disclosing(Protocol):
    def check(self, path: str) -> None: ...

    def source(self, answer: dict[str, Any]) -> dict[str, Any]: ...


def check_relative(path: Any) -> str:
    """The normalised repo-relative form of a client's ``path``, or BadPathError."""
    if not isinstance(path, str) or not path.strip():
        raise BadPathError("the path is empty; pass a repository-relative file path")
    if "\x00" in path:
        raise BadPathError("the path holds a NUL byte")
    if "\\" in path:
        raise BadPathError("the path holds a backslash; use '/' between directories")
    if _ENCODED.search(path):
        raise BadPathError(
            "the path holds a percent-encoded '.', '/', '\\' or NUL; send it decoded")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~"):
        raise BadPathError(f"{path!r} is absolute; pass a path relative to the repository root")
    if ".." in pure.parts:
        raise BadPathError(f"{path!r} climbs out with '..'; pass a path inside the repository")
    rel = "/".join(p for p in pure.parts if p not in ("", "."))
    if not rel:
        raise BadPathError(f"{path!r} names the repository root, not a file")
    return rel


def read_source(root: Path, path: Any, start: int | None = None, end: int | None = None,
                max_lines: int = MAX_SOURCE_LINES,
                path_filter: RepoPathFilter | None = None,
                disclosure: Disclosing | None = None) -> dict[str, Any]:
    """Lines ``start``..``end`` (1-based, inclusive; default: from the top, at most
    ``max_lines``) of a file under ``root``: ``{"path", "start_line", "end_line",
    "total_lines", "language", "text", "truncated"}``; ``truncated`` says lines were left out
    after ``end_line`` because of ``max_lines``; with a ``disclosure``, ``masked`` counts the
    secrets masked in ``text`` by kind."""
    rel = check_relative(path)
    filt = path_filter or RepoPathFilter(root)
    if filt.private(rel):
        raise ForbiddenPathError(f"{rel!r} is inside version-control or index internals")
    try:  # the one confinement every answer that reads a file goes through
        real = confined(filt.root, rel)
    except OutsideRootError as exc:
        raise ForbiddenPathError(
            f"{rel!r} is inside version-control or index internals" if exc.internal
            else f"{rel!r} resolves outside the repository (a symlink)") from None
    real_rel = filt.relative(real) or rel
    if filt.private(real_rel) or filt.file_ignored(rel) or filt.file_ignored(real_rel):
        raise ForbiddenPathError(
            f"{rel!r} is not part of the indexed repository (ignored or skipped by discovery)"
        )
    if disclosure is not None:  # by its name and by a link's target; before it is opened
        disclosure.check(rel)
        if real_rel != rel:
            disclosure.check(real_rel)
    other = _spelled_otherwise(filt.root, rel) or _spelled_otherwise(filt.root, real_rel)
    if other is not None:
        raise SourceNotFoundError(f"no file {rel!r} in the repository: names are matched in "
                                  f"their case, and on disk it is {other!r}")
    text = _read_text(real, rel)
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # the final newline does not start another line
    total = len(lines) if text else 0
    first, last, truncated = _window(rel, total, start, end, max_lines)
    body = "\n".join(lines[first - 1:last]) if total else ""
    spec = language_for_path(rel)
    answer = {
        "path": rel,
        "start_line": first,
        "end_line": last,
        "total_lines": total,
        "language": spec.name if spec else None,
        "text": body,
        "truncated": truncated,
    }
    return disclosure.source(answer) if disclosure is not None else answer


def _spelled_otherwise(root: str, rel: str) -> str | None:
    """The first name of ``rel`` that its directory holds only in another case, as it holds
    it; None if none. A case-insensitive file system (macOS, Windows) opens
    ``SECRETS/token.py`` as ``secrets/token.py``, which ignore files and never-send patterns,
    matched in their case, do not know."""
    parent = root
    for name in rel.split("/"):
        try:
            names = os.listdir(parent)
        except OSError:  # not a listable directory: opening the file says what is wrong
            return None
        if name not in names:
            folded = name.casefold()
            return next((n for n in names if n.casefold() == folded), None)
        parent = os.path.join(parent, name)
    return None


def _read_text(real: str, rel: str) -> str:
    try:  # opened without blocking, read only if regular: a FIFO would block the reader for ever
        data = read_regular(real, MAX_SOURCE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise SourceNotFoundError(f"no file {rel!r} in the repository") from None
    except NotRegularFileError:
        if os.path.isdir(real):
            raise BadPathError(f"{rel!r} is a directory, not a file") from None
        raise BadPathError(f"{rel!r} is not a regular file") from None
    except FileTooLargeError:
        raise BadPathError(
            f"{rel!r} is over {MAX_SOURCE_BYTES} bytes; larger files are not served") from None
    except PermissionError:
        raise ForbiddenPathError(f"{rel!r} is not readable") from None
    except OSError as exc:  # a symlink loop, a name too long: the client's path, not a bug
        raise BadPathError(f"{rel!r} cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in data[:8192]:
        raise BadPathError(f"{rel!r} is a binary file")
    return data.decode("utf-8", errors="replace")


def _window(rel: str, total: int, start: int | None, end: int | None,
            max_lines: int) -> tuple[int, int, bool]:
    first = 1 if start is None else start
    if first < 1:
        raise LineRangeError(f"start must be 1 or more, not {first}")
    if end is not None and end < first:
        raise LineRangeError(f"end ({end}) is before start ({first})")
    if total == 0:
        return 1, 0, False
    if first > total:
        raise LineRangeError(f"{rel!r} has {total} lines; start {first} is past its end")
    last = total if end is None else min(end, total)
    truncated = False
    if last - first + 1 > max_lines:
        last = first + max_lines - 1
        truncated = True
    return first, last, truncated
