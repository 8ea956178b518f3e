"""The path filter that answers take (``search --path``, and the graph answers' ``path``): a
glob with SQLite GLOB semantics (case-sensitive; ``*`` also crosses ``/``), or, without a
wildcard, a file or directory prefix. One meaning, whether SQLite, PostgreSQL or Python
applies it."""

from __future__ import annotations

import re
from collections.abc import Callable

WILDCARDS = "*?["


def glob_regex(glob: str) -> str:
    """SQLite GLOB semantics (case-sensitive; ``*`` crosses ``/``) as a POSIX regex."""
    out = ["^"]
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
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
        regex = re.compile(glob_regex(glob), re.DOTALL)  # a file name may hold a newline
        return lambda path: path is not None and regex.fullmatch(path) is not None
    prefix = path_prefix(glob)
    return lambda path: path is not None and (path == prefix or path.startswith(prefix + "/"))
