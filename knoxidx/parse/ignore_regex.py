"""Ignore patterns whose regexes cannot backtrack for ever.

A cloned repository writes its own ``.gitignore``, and pathspec translates each wildcard to
a regex quantifier: ``*a*a*a*b`` becomes ``[^/]*a[^/]*a[^/]*a[^/]*b`` and ``a/**/b/**/b/**/c``
a chain of ``(?:/.+)?/b``, which Python's backtracking engine takes polynomial time in the
path's length to refuse (seconds per path at five wildcards, so ``knoxidx index`` never
ended; pathspec's issue #131). git's own matcher does not backtrack so.

The regex is rewritten to match the same paths in linear time per starting point: a run of
``[^/]*`` is one; and a gap followed by a fixed-width piece that another gap follows is
matched at the piece's earliest end, atomically (a lookahead's match, read back by a
backreference: Python 3.10 has no atomic groups). The earliest end is always the best one
there: the next gap can absorb whatever a later end would have skipped, since both gap and
piece stay within a segment (``[^/]*``), or start at a ``/`` and may hold anything
(``(?:/.+)?``). The last gap before the end keeps its ordinary backtracking, which is linear.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, AnyStr

import pathspec

_GAP = r"\[\^/\]\*"  # what pathspec writes for `*`: any run within a segment
_RUN_OF_GAPS = re.compile(f"(?:{_GAP}){{2,}}")
_LITERAL = r"(?:\\.|[^\\\[\]()*+?{}|^$./])"  # one character, escaped or not special
# a class that cannot hold `/`: listed characters, ranges between letters or digits (a
# negated class, `[!a]`, matches `/` in pathspec's translation)
_CLASS = r"\[(?:[A-Za-z0-9]-[A-Za-z0-9]|[^\]/\\^\-])+\]"
# one character of a segment: a literal, `?` ([^/]) or such a class; not a gap
_FIXED = rf"(?:{_LITERAL}|\[\^/\](?![*+])|{_CLASS}(?![*+]))"
# a gap, then a fixed-width piece, when another gap follows within the segment
_SEGMENT_GAP = re.compile(rf"{_GAP}({_FIXED}+)(?={_GAP})")
_DEEP_GAP = r"\(\?:/\.\+\)\?/"  # what pathspec writes for `/**/`: `/`, or `/` ... `/`
# a deep gap, then a whole literal segment, when another deep gap follows it
_DIRECTORY_GAP = re.compile(rf"{_DEEP_GAP}({_LITERAL}+)(?={_DEEP_GAP})")


def bounded(regex: str) -> str:
    """``regex`` (pathspec's translation of one ignore pattern) rewritten to match the same
    paths without backtracking more than linearly; see the module's note."""
    names = (f"kxg{n}" for n in itertools.count())
    regex = _RUN_OF_GAPS.sub(lambda _: "[^/]*", regex)
    regex = _SEGMENT_GAP.sub(
        lambda m: (lambda name: f"(?=(?P<{name}>[^/]*?{m.group(1)}))(?P={name})")(next(names)),
        regex)
    return _DIRECTORY_GAP.sub(
        lambda m: (lambda name: f"(?=(?P<{name}>(?:/.+?)??/{m.group(1)}(?=/)))(?P={name})")(
            next(names)),
        regex)


_DEFAULT_PATTERN: Any = type(pathspec.GitIgnoreSpec.from_lines(["x"]).patterns[0])


class BoundedIgnorePattern(_DEFAULT_PATTERN):  # type: ignore[misc]
    """pathspec's own gitignore pattern, its regex :func:`bounded`."""

    @classmethod
    def pattern_to_regex(cls, pattern: AnyStr) -> tuple[AnyStr | None, bool | None]:
        regex, include = super().pattern_to_regex(pattern)
        if isinstance(regex, str):
            regex = bounded(regex)
        elif isinstance(regex, bytes):
            regex = bounded(regex.decode("latin-1")).encode("latin-1")
        return regex, include


def ignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """The gitignore spec of ``lines``, its patterns :class:`BoundedIgnorePattern`."""
    return pathspec.GitIgnoreSpec.from_lines(BoundedIgnorePattern, lines)
