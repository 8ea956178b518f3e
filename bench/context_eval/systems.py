"""The four systems compared, each giving the ranges it shows for a question within a budget.

- ``context``: ``knoxidx context`` as installed (:func:`knoxidx.answers.context.build_context`);
- ``retrieval``: knoxidx's own hybrid ``search`` results packed in rank order, no graph;
- ``bm25``: BM25 over 40-line windows (:mod:`.bm25`), packed the same way;
- ``gold_files``: the gold definitions' whole files, in turn, cut at the budget (a ceiling for
  "open the right files").

Baseline packs are counted with the same tokenizer as knoxidx's packer, a header line and the
code fence included, so every system pays the same for what it shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.context_eval.bm25 import Window
from bench.context_eval.coverage import Shown
from bench.context_eval.mining import Definition

SYSTEMS = ("context", "retrieval", "bm25", "gold_files")
SEARCH_K = 100  # knoxidx's largest k: ~100 chunks fill far more than 8,000 tokens


class LineTokens:
    """Per-line token counts of the files at one revision, counted once."""

    def __init__(self, counter: Any, files: dict[str, list[str]]) -> None:
        self.counter = counter
        self.files = files
        self._counts: dict[str, list[int]] = {}

    def lines(self, path: str) -> list[str]:
        return self.files.get(path, [])

    def span(self, path: str, start: int, end: int) -> int:
        counts = self._counts.get(path)
        if counts is None:
            counts = self._counts[path] = self.counter.count_many(self.lines(path))
        return sum(counts[start - 1:end])

    def overhead(self, path: str, start: int, end: int) -> int:
        """The header line and the fence around a block, as knoxidx renders them."""
        return sum(self.counter.count_many([f"{path}:{start}-{end}", "```", "```"]))


@dataclass(slots=True)
class RangePacker:
    """Ranges in rank order into a token budget: what an earlier range already shows is trimmed
    off the ends of a later one; a range that no longer fits is skipped, not cut."""

    tokens: LineTokens
    budget: int
    used: int = 0
    shown: list[Shown] = field(default_factory=list)

    def offer(self, path: str, start: int, end: int) -> None:
        end = min(end, len(self.tokens.lines(path)))
        for s in sorted((s for s in self.shown if s.path == path), key=lambda s: s.start):
            if s.start <= start <= s.end:
                start = s.end + 1
            if s.start <= end <= s.end:
                end = s.start - 1
        if start > end:
            return
        cost = self.tokens.span(path, start, end) + self.tokens.overhead(path, start, end)
        if self.used + cost <= self.budget:
            self.used += cost
            self.shown.append(Shown(path, start, end))

    def offer_cut(self, path: str, start: int, end: int) -> None:
        """As many leading lines of the range as fit."""
        end = min(end, len(self.tokens.lines(path)))
        room = self.budget - self.used - self.tokens.overhead(path, start, end)
        last = start - 1
        while last < end and self.tokens.span(path, last + 1, last + 1) <= room:
            room -= self.tokens.span(path, last + 1, last + 1)
            last += 1
        if last >= start:
            self.used += self.tokens.span(path, start, last) + self.tokens.overhead(path, start,
                                                                                   last)
            self.shown.append(Shown(path, start, last))


def context_pack(result: dict[str, Any]) -> list[Shown]:
    """The ranges a ``build_context`` answer shows, in its order; a signature-only block shows
    its first line (a multi-line signature is still far short of the coverage rule), an
    elided block only the lines it shows (each of its ranges at the block's rank)."""
    out: list[Shown] = []
    for block in result["blocks"]:
        if block.get("ranges"):
            out.extend(Shown(block["path"], start, end) for start, end in block["ranges"])
            continue
        end = block["start_line"] if block["mode"] == "signature" else block["end_line"]
        out.append(Shown(block["path"], block["start_line"], end))
    return out


def retrieval_pack(results: list[dict[str, Any]], tokens: LineTokens, budget: int) -> list[Shown]:
    packer = RangePacker(tokens, budget)
    for result in results:
        packer.offer(result["path"], result["start_line"], result["end_line"])
    return packer.shown


def bm25_pack(ranked: list[Window], tokens: LineTokens, budget: int) -> list[Shown]:
    """BM25's windows, best first, packed like search results."""
    packer = RangePacker(tokens, budget)
    for window in ranked:
        packer.offer(window.path, window.start, window.end)
    return packer.shown


def gold_files_pack(gold: tuple[Definition, ...], tokens: LineTokens,
                    budget: int) -> list[Shown]:
    """The gold files from their first line, the file with the most gold definitions first."""
    per_file: dict[str, int] = {}
    for g in gold:
        per_file[g.path] = per_file.get(g.path, 0) + 1
    packer = RangePacker(tokens, budget)
    for path in sorted(per_file, key=lambda p: (-per_file[p], p)):
        packer.offer_cut(path, 1, len(tokens.lines(path)))
    return packer.shown
