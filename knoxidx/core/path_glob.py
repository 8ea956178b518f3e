"""The path filter that answers take (``search --path``, and the graph answers' ``path``): a
glob with SQLite GLOB semantics (case-sensitive; ``*`` also crosses ``/``), or, without a
wildcard, a file or directory prefix. One meaning, whether SQLite, PostgreSQL or Python
applies it."""

from __future__ import annotations

import re
from collections.abc import Callable

WILDCARDS = "*?["
# a piece no character matches: a class never closed
_NEVER = "(?!)"


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
            piece, i = _class_piece(glob, i)
            out.append(piece)
        else:
            out.append(re.escape(ch))
        i += 1
    return out


def _class_piece(glob: str, start: int) -> tuple[str, int]:
    """The class that opens at ``glob[start]`` as a regex piece, and the index of its ``]``,
    read as SQLite's GLOB reads it: ``^`` negates; a ``]`` first (after any ``^``) is a
    member; ``x-y`` holds ``x`` and, unless reversed, ``x`` to ``y``; a class never closed
    matches nothing. Members are escaped: a glob's class is not the regex engine's syntax."""
    i = start + 1
    negated = glob.startswith("^", i)
    i += negated
    members: list[str] = []
    if glob.startswith("]", i):
        members.append(re.escape("]"))
        i += 1
    prior: str | None = None  # a character that a following `-` makes a range's start
    while i < len(glob) and glob[i] != "]":
        if glob[i] == "-" and prior is not None and glob[i + 1 : i + 2] not in ("", "]"):
            if prior <= glob[i + 1]:
                members.append(f"{re.escape(prior)}-{re.escape(glob[i + 1])}")
            prior = None
            i += 2
            continue
        members.append(re.escape(glob[i]))
        prior = glob[i]
        i += 1
    if i >= len(glob):
        return _NEVER, len(glob) - 1
    return f"[{'^' if negated else ''}{''.join(members)}]", i


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
