"""AST-aware chunking: one definition per chunk, small neighbours merged, big ones split.

``chunk_file`` is a pure function of a file's bytes and the definitions the indexer extracted
from it. Units are definitions (function, method, class, interface, impl, type). A definition that
fits ``max_tokens`` stays whole, except a class (any non-function definition with members) over
``member_tokens``, which is split at its members so that each method gets a chunk and a vector
of its own; a bigger one is split at its child definitions, and a stretch with no children left
to split at (a long function body, a data table) is cut between lines, preferring
statement-looking boundaries, with ``overlap_tokens`` of repeated context (and a single line
over ``max_tokens``, minified code, within the line at word boundaries). Adjacent pieces are
merged while the result stays within ``merge_tokens`` (``definition_merge_tokens`` when both
hold whole definitions), or when one of them is a scrap under ``min_tokens``, such as a closing
brace. Comment or decorator lines directly above a definition travel with it. Every line of the
file ends up in at least one chunk.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import NamedTuple, Protocol

import xxhash

from knoxidx.retrieval.tokens import TokenCounter, default_counter


class DefinitionLike(Protocol):
    """What the chunker reads from the indexer's ``Definition`` records."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def qualname(self) -> str: ...
    @property
    def parent(self) -> int: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def signature(self) -> str: ...
    @property
    def doc(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ChunkBudget:
    max_tokens: int = 2048
    overlap_tokens: int = 256
    merge_tokens: int = 512
    min_tokens: int = 48
    # A definition with members (class, interface, ...) over this size is split at its members
    # even though it fits max_tokens, so that each method gets a chunk (and a vector) of its own.
    member_tokens: int = 256
    # Two neighbours that both hold whole definitions merge only up to this size (at most
    # merge_tokens; code between definitions merges up to merge_tokens).
    definition_merge_tokens: int = 256

    def __post_init__(self) -> None:
        if self.max_tokens < 1 or not 0 <= self.overlap_tokens < self.max_tokens:
            raise ValueError("need max_tokens >= 1 and 0 <= overlap_tokens < max_tokens")
        if not 0 <= self.min_tokens <= self.merge_tokens <= self.max_tokens:
            raise ValueError("need 0 <= min_tokens <= merge_tokens <= max_tokens")
        if self.definition_merge_tokens < 0:
            raise ValueError("need definition_merge_tokens >= 0")
        if self.member_tokens < 1:
            raise ValueError("need member_tokens >= 1")

    def __reduce__(self) -> tuple[type[ChunkBudget], tuple[object, ...]]:
        return ChunkBudget, _field_values(self)


@dataclass(frozen=True, slots=True)
class Chunk:
    path: str
    language: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    token_count: int
    symbols: tuple[str, ...]  # qualnames of the definitions that start in this chunk
    symbol: str  # the chunk's main symbol ("" for module-level code)
    kind: str  # that symbol's kind
    enclosing: tuple[str, ...]  # qualnames of definitions containing the chunk, outermost first
    signature: str
    doc: str
    header: str  # short context line(s) prepended for embedding
    content_hash: str  # of header and text: what the embedding depends on
    # the kinds and signatures of ``symbols``, as the chunker made them; not stored with the
    # chunk (what the names and declarations sources need of them is, see ``names``): () in
    # chunks read back
    symbol_kinds: tuple[str, ...] = field(default=(), compare=False)
    symbol_signatures: tuple[str, ...] = field(default=(), compare=False)

    def __reduce__(self) -> tuple[type[Chunk], tuple[object, ...]]:
        return Chunk, _field_values(self)


def _field_values(instance: ChunkBudget | Chunk) -> tuple[object, ...]:
    """A frozen dataclass's fields, in order: what pickle makes it again from (parse workers
    receive the budget and send their chunks back). Compiled by mypyc, such a class would be
    unpickled through its ``__setattr__``, which refuses every field."""
    names = _FIELD_NAMES.get(type(instance))
    if names is None:
        names = _FIELD_NAMES[type(instance)] = tuple(f.name for f in fields(instance))
    return tuple(getattr(instance, name) for name in names)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class Piece(NamedTuple):
    start: int
    end: int
    definition: bool  # holds at least one whole definition


# Kinds whose members are not split off: a function's nested functions belong to its body.
WHOLE_KINDS = frozenset({"Function"})


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept, split on ``\\n`` only (as tree-sitter counts rows)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return [line + "\n" for line in lines]
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def chunk_file(
    path: str,
    source: bytes,
    language: str,
    definitions: Sequence[DefinitionLike],
    *,
    budget: ChunkBudget | None = None,
    counter: TokenCounter | None = None,
) -> list[Chunk]:
    text = source.decode("utf-8", errors="replace")
    lines = split_lines(text) if text else []
    if not lines:
        return []
    budget = budget or ChunkBudget()
    counter = counter or default_counter()
    plan = _Planner(lines, counter.count_many(lines), definitions, budget)
    spans = plan.merge(plan.pieces(1, len(lines), plan.top_level, floor=1))
    chunks: list[Chunk] = []
    for start, end in spans:
        chunk = plan.make_chunk(path, language, start, end)
        if start == end and chunk.token_count > budget.max_tokens:
            chunks.extend(_cut_line(chunk, budget, counter))
        else:
            chunks.append(chunk)
    return chunks


def _cut_line(chunk: Chunk, budget: ChunkBudget, counter: TokenCounter) -> list[Chunk]:
    """A one-line chunk over the budget (minified or generated code) cut within the line, at
    word boundaries, into chunks of the same line of at most ``max_tokens`` with
    ``overlap_tokens`` repeated: whole, a 677 kB line of minified JavaScript was one chunk of
    315,000 tokens, of which an embedding model reads only the start (the local one a few
    hundred tokens, voyage-code-3 32,000). The definitions starting on the line are the first
    piece's."""
    pieces = []
    for n, (a, b, tokens) in enumerate(counter.cut_counted(chunk.text, budget.max_tokens,
                                                            budget.overlap_tokens)):
        text = chunk.text[a:b]
        first = n == 0
        pieces.append(replace(
            chunk, text=text, token_count=counter.count(text) if tokens is None else tokens,
            symbols=chunk.symbols if first else (),
            symbol_kinds=chunk.symbol_kinds if first else (),
            symbol_signatures=chunk.symbol_signatures if first else (),
            content_hash=xxhash.xxh3_128_hexdigest(f"{chunk.header}\x00{text}".encode()),
        ))
    return pieces


class _Planner:
    def __init__(
        self,
        lines: list[str],
        line_tokens: list[int],
        definitions: Sequence[DefinitionLike],
        budget: ChunkBudget,
    ) -> None:
        self.lines = lines
        self.budget = budget
        self.prefix = [0, *itertools.accumulate(line_tokens)]
        self.defs = definitions
        self.children: dict[int, list[int]] = {}  # parent index (-1: file) -> kept children
        self.end: dict[int, int] = {}  # usable definition index -> end line clamped to the file
        self.top_level = self._build_tree(len(lines))
        # the usable definitions by position, as a chunk lists them: (start, -end, index)
        self.by_start = sorted((self.defs[i].start_line, -end, i) for i, end in self.end.items())
        self.starts = [start for start, _, _ in self.by_start]

    def tokens(self, start: int, end: int) -> int:
        return self.prefix[end] - self.prefix[start - 1]

    # ---- the definition tree, cleaned of anything that would break coverage ------------------

    def _build_tree(self, n_lines: int) -> list[int]:
        valid = {
            i
            for i, d in enumerate(self.defs)
            if 1 <= d.start_line <= n_lines and d.end_line >= d.start_line
        }
        self.end.update((i, min(self.defs[i].end_line, n_lines)) for i in valid)
        grouped: dict[int, list[int]] = {}
        for i in sorted(valid):
            p = self.defs[i].parent
            inside = (
                p in valid
                and p != i
                and self.defs[p].start_line <= self.defs[i].start_line
                and self.end[i] <= self.end[p]
            )
            grouped.setdefault(p if inside else -1, []).append(i)
        for parent, members in grouped.items():
            self.children[parent] = self._disjoint(members)
        return self.children.get(-1, [])

    def _disjoint(self, members: list[int]) -> list[int]:
        """Siblings sorted by position; one overlapping an earlier sibling is dropped (its lines
        are still covered by that sibling)."""
        kept: list[int] = []
        for i in sorted(members, key=lambda i: (self.defs[i].start_line, -self.end[i])):
            if not kept or self.defs[i].start_line > self.end[kept[-1]]:
                kept.append(i)
        return kept

    # ---- splitting ---------------------------------------------------------------------------

    def pieces(self, lo: int, hi: int, children: list[int], floor: int) -> list[Piece]:
        """Spans covering lines lo..hi: gaps between children, and each child whole or split.
        ``floor`` is the first line a child may pull attached comments/decorators from."""
        out: list[Piece] = []
        cursor = lo
        for child in children:
            start, end = self.defs[child].start_line, self.end[child]
            if start < cursor or end > hi:
                continue
            attached = start
            while attached - 1 >= max(cursor, floor) and self.lines[attached - 2].strip():
                attached -= 1
            if attached > cursor:
                out.extend(Piece(s, e, False) for s, e in self.split_lines(cursor, attached - 1))
            if not self._split_at_members(child, attached, end):
                out.append(Piece(attached, end, True))
            else:
                out.extend(self.pieces(attached, end, self.children.get(child, []), start + 1))
            cursor = end + 1
        if cursor <= hi:
            out.extend(Piece(s, e, False) for s, e in self.split_lines(cursor, hi))
        return out

    def _split_at_members(self, index: int, start: int, end: int) -> bool:
        size = self.tokens(start, end)
        if size > self.budget.max_tokens:
            return True
        return (
            size > self.budget.member_tokens
            and self.defs[index].kind not in WHOLE_KINDS
            and bool(self.children.get(index))
        )

    def split_lines(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Windows of at most max_tokens (a single longer line is its own window, cut later by
        ``_cut_line``), overlapping."""
        budget = self.budget
        base_indent = min((_indent(line) for line in self.lines[lo:hi] if line.strip()), default=0)
        windows: list[tuple[int, int]] = []
        start = lo
        while True:
            if self.tokens(start, hi) <= budget.max_tokens:
                windows.append((start, hi))
                return windows
            end = start
            while end < hi and self.tokens(start, end + 1) <= budget.max_tokens:
                end += 1
            end = self._good_break(start, end, base_indent)
            windows.append((start, end))
            if end >= hi:
                return windows
            # the overlap reaches back at most to the window's middle: over lines of no tokens
            # (a run of 30,000 blank lines) it reached the window's second line every time, so
            # the windows moved a line at a time, each re-read whole (35 s for one file, and a
            # chunk per blank line; found by a stress run of bench.fuzz's check)
            next_start = end + 1
            while (
                next_start - 1 > start + 1 + (end - start) // 2
                and self.tokens(next_start - 1, end) <= budget.overlap_tokens
            ):
                next_start -= 1
            start = next_start

    def _good_break(self, start: int, end: int, base_indent: int) -> int:
        """The last line at or before ``end`` (in the window's second half) after which a new
        statement starts: the next line follows a blank line or sits at the body's indentation."""
        for last in range(end, start + (end - start) // 2, -1):
            following = self.lines[last] if last < len(self.lines) else ""
            if not following.strip():
                continue
            if not self.lines[last - 1].strip() or _indent(following) <= base_indent:
                return last
        return end

    # ---- merging -----------------------------------------------------------------------------

    def merge(self, pieces: list[Piece]) -> list[tuple[int, int]]:
        budget = self.budget
        merged: list[Piece] = []
        for piece in pieces:
            if merged:
                prev = merged[-1]
                end = max(piece.end, prev.end)
                combined = self.tokens(prev.start, end)
                smallest = min(self.tokens(prev.start, prev.end), self.tokens(piece.start, piece.end))
                limit = budget.merge_tokens
                if prev.definition and piece.definition:
                    limit = min(limit, budget.definition_merge_tokens)
                if combined <= limit or (
                    smallest < budget.min_tokens and combined <= budget.max_tokens
                ):
                    merged[-1] = Piece(prev.start, end, prev.definition or piece.definition)
                    continue
            merged.append(piece)
        return [(p.start, p.end) for p in merged]

    # ---- describing a chunk ------------------------------------------------------------------

    def make_chunk(self, path: str, language: str, start: int, end: int) -> Chunk:
        # found by bisection: a scan of every definition for every chunk cost a file of
        # hundreds of definitions more than the rest of its chunking
        first = bisect.bisect_left(self.starts, start)
        after = bisect.bisect_right(self.starts, end, first)
        starting = [i for _, _, i in self.by_start[first:after]]
        enclosing = [i for _, negative_end, i in self.by_start[:first] if -negative_end >= end]
        main = starting[0] if starting else (enclosing[-1] if enclosing else None)
        d = self.defs[main] if main is not None else None
        text = "".join(self.lines[start - 1 : end])
        scope = tuple(self.defs[i].qualname for i in enclosing)
        # the signature repeats what the text shows, unless the definition began in an earlier chunk
        header = _header(path, scope, d.signature if d is not None and not starting else "")
        return Chunk(
            path=path,
            language=language,
            start_line=start,
            end_line=end,
            text=text,
            token_count=self.tokens(start, end),
            symbols=tuple(self.defs[i].qualname for i in starting),
            symbol_kinds=tuple(self.defs[i].kind for i in starting),
            symbol_signatures=tuple(self.defs[i].signature for i in starting),
            symbol=d.qualname if d else "",
            kind=d.kind if d else "",
            enclosing=scope,
            signature=d.signature if d else "",
            doc=d.doc if d else "",
            header=header,
            content_hash=xxhash.xxh3_128_hexdigest(f"{header}\x00{text}".encode()),
        )


def _header(path: str, scope: tuple[str, ...], signature: str) -> str:
    parts = [path]
    if scope:
        parts.append(f"in {scope[-1]}")
    first_line = signature.strip().splitlines()[0] if signature.strip() else ""
    if first_line:
        parts.append(first_line[:200])
    return "\n".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
