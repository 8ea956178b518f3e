"""The BM25 baseline: 40-line windows of every source file, ranked by Okapi BM25.

Written here on purpose, independent of knoxidx: the point is to compare knoxidx with what a
plain text retriever would pack.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

WINDOW_LINES = 40
WINDOW_STEP = 20
K1, B = 1.2, 0.75
SOURCE_EXTENSIONS = frozenset({
    ".py", ".pyi", ".go", ".rs", ".java", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs",
    ".cjs",
})

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words, with ``camelCase``, ``HTTPServer`` and ``snake_case`` identifiers
    split into their parts (the whole identifier is kept too)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        parts = _CAMEL.findall(word)
        if len(parts) > 1:
            out.append(word.lower())
        out.extend(p.lower() for p in parts)
    return out


@dataclass(frozen=True, slots=True)
class Window:
    path: str
    start: int  # 1-based, inclusive
    end: int


def windows(path: str, line_count: int) -> list[Window]:
    """40-line windows every 20 lines; the last one ends at the file's last line."""
    if line_count <= 0:
        return []
    out = []
    start = 1
    while True:
        end = min(start + WINDOW_LINES - 1, line_count)
        out.append(Window(path, start, end))
        if end >= line_count:
            return out
        start += WINDOW_STEP


class BM25Windows:
    """A BM25 index over the windows of a set of files."""

    def __init__(self, files: dict[str, list[str]]) -> None:
        self.windows: list[Window] = []
        self.counts: list[Counter[str]] = []
        for path in sorted(files):
            lines = files[path]
            for window in windows(path, len(lines)):
                self.windows.append(window)
                self.counts.append(Counter(tokenize("\n".join(
                    lines[window.start - 1:window.end]))))
        self.lengths = [sum(c.values()) for c in self.counts]
        self.mean_length = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(self.counts)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def search(self, query: str) -> list[Window]:
        """Windows with any query word, best first (ties: path, then line)."""
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in self.idf]
        scored = []
        for i, counts in enumerate(self.counts):
            score = 0.0
            norm = K1 * (1 - B + B * self.lengths[i] / (self.mean_length or 1.0))
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    score += self.idf[term] * tf * (K1 + 1) / (tf + norm)
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda s: (-s[0], self.windows[s[1]].path, self.windows[s[1]].start))
        return [self.windows[i] for _, i in scored]


def source_files(root: Path, paths: list[str]) -> dict[str, list[str]]:
    """The lines of each listed file with a source extension (unreadable ones skipped)."""
    out: dict[str, list[str]] = {}
    for path in paths:
        if Path(path).suffix.lower() not in SOURCE_EXTENSIONS:
            continue
        try:
            out[path] = (root / path).read_text("utf-8", "replace").split("\n")
        except OSError:
            continue
    return out
