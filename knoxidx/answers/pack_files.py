"""The lines and token counts of the files a context pack shows, read and counted once per
build."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from knoxidx.core.files import NO_LIMIT, confined, read_regular_text
from knoxidx.retrieval.terms import unique_terms
from knoxidx.retrieval.tokens import TokenCounter

if TYPE_CHECKING:
    from knoxidx.retrieval.disclosure import MaskedText

_COUNT_LOCK = threading.Lock()  # the counter's word cache is not safe under concurrent clears


class Files:
    """File lines and per-line token counts, read once per build; with ``mask``, the lines
    are those of the file with its secrets masked (so the tokens counted are those shown)."""

    def __init__(self, root: Any, counter: TokenCounter,
                 mask: Callable[[str], MaskedText] | None = None) -> None:
        self.root = root
        self.counter = counter
        self.mask = mask
        self._lines: dict[str, list[str]] = {}
        self._tokens: dict[str, list[int]] = {}
        self._secrets: dict[str, MaskedText] = {}
        self._counted: dict[str, int] = {}
        self._terms: dict[str, dict[int, frozenset[str]]] = {}

    def lines(self, path: str) -> list[str]:
        lines = self._lines.get(path)
        if lines is None:
            try:
                text = read_regular_text(confined(self.root, path), NO_LIMIT)  # never a FIFO's wait
            except OSError:
                text = ""
            if self.mask is not None:
                shown = self._secrets[path] = self.mask(text)
                text = shown.text
            lines = self._lines[path] = text.split("\n")
        return lines

    def masked_in(self, path: str, start: int, end: int) -> Counter[str]:
        """The secrets masked on lines ``start``..``end`` (1-based) of ``path``, by kind."""
        shown = self._secrets.get(path)
        return shown.counts(start - 1, end - 1) if shown is not None else Counter()

    def tokens(self, path: str, start: int = 1, end: int | None = None) -> list[int]:
        """Per-line token counts of ``path``, counted for lines ``start``..``end`` (all by
        default) if not yet: a pack shows a few ranges of long files, and counting whole
        files was most of a build's time on a large repository. Lines not asked for
        are -1."""
        lines = self.lines(path)
        counts = self._tokens.get(path)
        if counts is None:
            counts = self._tokens[path] = [-1] * len(lines)
        end = len(lines) if end is None else min(end, len(lines))
        missing = [i for i in range(max(start, 1) - 1, end) if counts[i] < 0]
        if missing:
            with _COUNT_LOCK:
                counted = self.counter.count_many([lines[i] for i in missing])
            for i, n in zip(missing, counted, strict=True):
                counts[i] = n
        return counts

    def span_tokens(self, path: str, start: int, end: int) -> int:
        return sum(self.tokens(path, start, end)[start - 1:end])

    def fits(self, path: str, start: int, end: int, room: float) -> bool:
        """Whether lines ``start``..``end`` count at most ``room`` tokens; a range with more
        non-blank lines than that does not, and is not counted."""
        lines = self.lines(path)[start - 1:end]
        if sum(1 for line in lines if line.strip()) > room:
            return False
        return self.span_tokens(path, start, end) <= room

    def wanted_on_lines(self, path: str, start: int, end: int,
                        wanted: frozenset[str]) -> list[frozenset[str]]:
        """Which of ``wanted`` (lower-case search terms) are terms of each of lines
        ``start``..``end``; a term is a substring of its lower-cased line, so a line holding
        none of them as one is not split into terms (most lines of a long definition)."""
        lines = self.lines(path)
        terms = self._terms.setdefault(path, {})
        out: list[frozenset[str]] = []
        for i in range(max(start, 1) - 1, min(end, len(lines))):
            lowered = lines[i].lower()
            if not any(w in lowered for w in wanted):
                out.append(frozenset())
                continue
            found = terms.get(i)
            if found is None:
                found = terms[i] = frozenset(unique_terms([lines[i]]))
            out.append(wanted.intersection(found))
        return out

    def balanced_end(self, path: str, start: int, end: int) -> int:
        """Extend ``end`` until brackets opened since ``start`` close (a parenthesised import
        list), at most 200 lines."""
        lines = self.lines(path)
        depth = sum(line.count("(") - line.count(")") for line in lines[start - 1:end])
        while depth > 0 and end < len(lines) and end - start < 200:
            end += 1
            line = lines[end - 1]
            depth += line.count("(") - line.count(")")
        return end

    def count(self, text: str) -> int:
        if not text:
            return 0
        counted = self._counted.get(text)
        if counted is None:  # a block's header and fence are counted again at every commit
            with _COUNT_LOCK:
                counted = self._counted[text] = self.counter.count_many([text])[0]
        return counted
