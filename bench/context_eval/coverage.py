"""What a pack shows, and which gold definitions it covers.

A pack is a list of shown ranges in rank order. A definition is covered when one range of its
file overlaps at least half its lines or at least 20 of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bench.context_eval.mining import Definition

COVER_SHARE = 0.5
COVER_LINES = 20


@dataclass(frozen=True, slots=True)
class Shown:
    path: str
    start: int
    end: int


def covers(shown: Shown, gold: Definition) -> bool:
    if shown.path != gold.path:
        return False
    overlap = min(shown.end, gold.end) - max(shown.start, gold.start) + 1
    return overlap >= COVER_LINES or overlap >= COVER_SHARE * gold.lines


def first_cover(pack: list[Shown], gold: Definition) -> int | None:
    """The 1-based rank of the first range covering ``gold``, or None."""
    return next((rank for rank, shown in enumerate(pack, 1) if covers(shown, gold)), None)


def names_gold(question: str, gold: tuple[Definition, ...]) -> bool:
    """Whether the question names a gold definition: its short name as a word."""
    return any(re.search(rf"(?<![\w$]){re.escape(g.short_name)}(?![\w$])", question)
               for g in gold)


def score_pack(pack: list[Shown], gold: tuple[Definition, ...]) -> dict[str, Any]:
    ranks = [first_cover(pack, g) for g in gold]
    found = [r for r in ranks if r is not None]
    gold_files = {g.path for g in gold}
    return {
        "covered": len(found),
        "gold": len(gold),
        "success": len(found) == len(gold),
        "any_hit": bool(found),
        "file_hit": any(s.path in gold_files for s in pack),
        "first_rank": min(found) if found else None,
        "ranks": ranks,
    }
