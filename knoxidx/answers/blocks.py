"""A block of a context pack: a range of a file shown whole, elided, outlined or as its
signature, with its header (``path:start-end (kind name — why)``) and fence."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knoxidx.answers.context_candidates import Candidate

_BACKTICKS = re.compile(r"`{3,}")
_SOURCES = re.compile(r"^(search hit #\d+) \([^)]*\)$")  # "search hit #3 (lexical, vector)"
_SEPARATORS = re.compile(r"[.:]")  # of a qualified name's parts, in any language


def short_name(qualified: str) -> str:
    """The last part of a qualified name, whatever its language's separator (``.``, ``::``, or
    the ``:`` after a TypeScript module path)."""
    return _SEPARATORS.split(qualified)[-1]


@dataclass(slots=True)
class Block:
    path: str
    start: int
    end: int
    mode: str  # full | excerpt | truncated | elided | outline | signature
    items: list[Candidate]
    language: str
    body: list[str] = field(default_factory=list)
    ranges: list[tuple[int, int]] = field(default_factory=list)  # lines shown, if elided
    tokens: int = 0
    named: int = 0  # items named in the header: fixed when placed, so its count holds
    terse: bool = False  # a header without the why (the top hit in a tiny budget)
    masked: Counter[str] = field(default_factory=Counter)  # a signature's secrets masked

    @property
    def primary(self) -> Candidate:
        return self.items[0]

    def shown(self) -> list[tuple[int, int]]:
        """The line ranges the block shows (a signature: its first line)."""
        if self.mode == "signature":
            return [(self.start, self.start)]
        return self.ranges or [(self.start, self.end)]

    def header(self) -> str:
        c = self.primary
        # the rest, and which of search's sources found a hit, are in the JSON
        why = "; ".join(_SOURCES.sub(r"\1", reason) for reason in c.reasons[:2])
        named = self.items[:self.named or len(self.items)]
        extra = ["imports" if i.kind == "imports" else i.path.rsplit("/", 1)[-1]
                 if i.name == i.path else short_name(i.name) for i in named[1:3]]
        if extra:
            why += "; with " + ", ".join(extra) + ("…" if len(named) > 3 else "")
        if self.mode != "full":
            why += f"; {self.mode}" if self.mode != "signature" else "; signature only"
        what = f"{c.kind} {c.local_name or c.name}" if c.kind != "imports" \
            else f"imports of {c.path}"
        if self.terse:
            return f"{self.path}:{self.start}-{self.end} ({what})"
        return f"{self.path}:{self.start}-{self.end} ({what} — {why})"

    def fence(self) -> str:
        """Three backticks, or more than the longest run in the code (a docstring may hold
        markdown)."""
        longest = max((len(run) for line in self.body for run in _BACKTICKS.findall(line)),
                      default=0)
        return "`" * max(3, longest + 1)

    def text(self) -> str:
        fence = self.fence()
        return "\n".join([self.header(), fence + (self.language or ""), *self.body, fence])

    def describe(self) -> dict[str, Any]:
        return {"header": self.header(), "path": self.path, "start_line": self.start,
                "end_line": self.end, "mode": self.mode, "tokens": self.tokens,
                "ranges": [list(r) for r in self.shown()], "items": [i.name for i in self.items]}
