"""The path filter that answers take (``search --path``, and the graph answers' ``path``): a
glob with SQLite GLOB semantics (case-sensitive; ``*`` also crosses ``/``), or, without a
wildcard, a file or directory prefix. One meaning, whether SQLite, PostgreSQL or Python
applies it."""

from __future__ import annotations

import re
from collections.abc import Callable

WILDCARDS = "*?["


def _glob_pieces(glob: str) -> list[str | None]:
    """``glob`` as POSIX regex pieces, each matching one character, and None for each ``*``."""
    out: list[str | None] = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(None)
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = glob[i + 1 : end]
                body = "^" + body[1:] if body.startswith("^") else body
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return out


def glob_regex(glob: str) -> str:
    """SQLite GLOB semantics (case-sensitive; ``*`` crosses ``/``) as a POSIX regex."""
    return "^" + "".join(".*" if piece is None else piece for piece in _glob_pieces(glob)) + "$"


def _linear_regex(glob: str) -> str:
    """:func:`glob_regex` for Python's backtracking engine, which took time polynomial in a
    path's length to refuse ``*s*s*s*s*s*Z`` (seconds per path): runs of ``*`` are one, and
    a ``*`` followed by fixed characters that another ``*`` follows matches them at their
    earliest end, atomically (the next ``*`` absorbs whatever a later end would skip)."""
    pieces = _glob_pieces(glob)
    out = ["^"]
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        if piece is not None:
            out.append(piece)
            i += 1
            continue
        while i + 1 < len(pieces) and pieces[i + 1] is None:
            i += 1  # `**` is `*`
        j = i + 1
        while j < len(pieces) and pieces[j] is not None:
            j += 1
        fixed = "".join(p for p in pieces[i + 1 : j] if p is not None)
        if fixed and j < len(pieces):  # another `*` follows: earliest end, no backtracking
            name = f"g{i}"
            out.append(f"(?=(?P<{name}>.*?{fixed}))(?P={name})")
        else:
            out.append(".*" + fixed)
        i = j
    return "".join(out) + "$"


def absolute_filter_problem(glob: str) -> str | None:
    """Why ``glob`` can match no path, if it starts with ``/``: the index holds paths relative
    to the repository root, so an absolute one (what a shell or an agent often has) would
    silently match nothing."""
    if not glob.strip().startswith("/"):
        return None
    return (f"the path filter {glob.strip()[:200]!r} starts with '/'; paths in the index are "
            "relative to the repository root: pass a glob such as 'src/*' or a directory "
            "such as 'src'")


def path_prefix(glob: str) -> str:
    """A glob without wildcards as the file or directory it names."""
    return glob.removeprefix("./").rstrip("/")


def path_matcher(glob: str) -> Callable[[str | None], bool]:
    """Whether a repository-relative path passes the filter ``glob`` (no path never does)."""
    if any(ch in glob for ch in WILDCARDS):
        regex = re.compile(_linear_regex(glob), re.DOTALL)  # a file name may hold a newline
        return lambda path: path is not None and regex.fullmatch(path) is not None
    prefix = path_prefix(glob)
    return lambda path: path is not None and (path == prefix or path.startswith(prefix + "/"))
