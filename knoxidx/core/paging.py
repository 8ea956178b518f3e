"""Bounded list answers: what every graph answer that lists things (symbols, callers, callees,
references, dependencies, impact) returns of its list, and how to ask for the rest.

An agent reads an answer whole into its context, so an answer must stay small whatever the
repository: a page holds at most ``limit`` items and, whatever the limit, at most about
:data:`PAGE_CHARS` characters of JSON (~8k tokens). Each answer says how many items there are
in all (``total``, after the ``kind`` and ``path`` filters), whether this page ``truncated``
them, and the ``next_offset`` to ask for next. The CLI, HTTP and MCP pass these parameters
through and return the same shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from knoxidx.core.errors import BadInputError
from knoxidx.core.limits import MAX_PATH_CHARS
from knoxidx.core.model import NodeKind
from knoxidx.core.path_glob import absolute_filter_problem, path_matcher

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
MAX_OFFSET = 2**31 - 1  # what the faces take: SQLite's OFFSET overflows past 2**63
# a page's items stop before their compact JSON passes this (~4 characters a token)
PAGE_CHARS = 28_000
# an impact answer also lists the distinct files of all its hits, up to this many
FILES_SHOWN = 100
# an ambiguous symbol's error lists this many of the definitions it may name (~17k characters)
CANDIDATES_SHOWN = 50
# a walk stops after this many hits: the total is then a lower bound (total_exact: false)
WALK_CAP = 50_000
_KINDS = tuple(k.value for k in NodeKind)


@dataclass(frozen=True, slots=True)
class Page:
    """Which part of a list answer to return: ``limit`` items from ``offset``, of those of
    ``kind`` whose file matches ``path`` (a glob, ``*`` crossing ``/``, or a directory)."""

    limit: int = DEFAULT_LIMIT
    offset: int = 0
    kind: str | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or \
                not 1 <= self.limit <= MAX_LIMIT:
            raise BadInputError(f"limit must be a whole number from 1 to {MAX_LIMIT}, "
                                f"not {self.limit!r}")
        if isinstance(self.offset, bool) or not isinstance(self.offset, int) or \
                not 0 <= self.offset <= MAX_OFFSET:
            raise BadInputError(f"offset must be a whole number from 0 to {MAX_OFFSET}, "
                                f"not {self.offset!r}")
        if self.kind is not None and self.kind not in _KINDS:
            raise BadInputError(f"unknown kind {self.kind!r}; use one of {', '.join(_KINDS)}")
        if self.path is not None:
            if not self.path.strip():
                raise BadInputError("the path filter is empty")
            if len(self.path) > MAX_PATH_CHARS:
                raise BadInputError(f"the path filter is longer than {MAX_PATH_CHARS} "
                                    "characters")
            problem = absolute_filter_problem(self.path)
            if problem:
                raise BadInputError(problem)

    @property
    def path_glob(self) -> str | None:
        """The path filter as the stores take it (stripped), or None."""
        return self.path.strip() if self.path else None

    def select(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``items`` of this page's kind and path (all of them, before the cut)."""
        if self.kind is None and self.path is None:
            return items
        matches = path_matcher(self.path_glob) if self.path_glob else None
        return [i for i in items if (self.kind is None or i.get("kind") == self.kind)
                and (matches is None or matches(i.get("path")))]

    def cut(self, selected: list[dict[str, Any]], *,
            exact: bool = True) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """This page of ``selected`` (all the items that pass the filters) and what the answer
        says about it (:meth:`info`)."""
        return self.bound(selected[self.offset : self.offset + self.limit], len(selected),
                          exact=exact)

    def bound(self, window: list[dict[str, Any]], total: int, *,
              exact: bool = True) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """``window`` (at most ``limit`` items from ``offset``, of ``total``) ended before it
        passes :data:`PAGE_CHARS`, but never empty (each page moves the offset on)."""
        size = 0
        for count, item in enumerate(window):
            size += len(json.dumps(item, ensure_ascii=False, default=str)) + 2
            if size > PAGE_CHARS and count:
                window = window[:count]
                break
        return window, self.info(len(window), total, exact=exact)

    def info(self, returned: int, total: int, *, exact: bool = True) -> dict[str, Any]:
        end = self.offset + returned
        truncated = end < total
        return {"total": total, "total_exact": exact, "offset": self.offset,
                "limit": self.limit, "truncated": truncated,
                "next_offset": end if truncated else None}
