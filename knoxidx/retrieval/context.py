"""The context builder: the code an agent should read for a question, packed into a token
budget.

1. **Seeds**: hybrid search hits (or, when search finds nothing, definitions the query names).
2. **Expansion** through the graph, for the best hits: the definitions they call, their
   callers, the types and constants they use, the signature of their enclosing class, and the
   import block of their file.
3. **Ranking** of every candidate by four factors, weighted in :class:`ContextWeights`:
   semantic similarity (cosine of query and chunk vectors, when the index has them), lexical
   match (the share of query words in the candidate), graph proximity (how directly a
   candidate relates to how good a hit), centrality (PageRank over the call/import graph,
   computed once per index state and cached in ``.knoxidx/``).
4. **Packing**, greedy in rank order, counted with the real tokenizer (:mod:`.tokens`): whole
   definitions while they are ranked high enough, signatures for the rest, overlapping or
   adjacent ranges of a file merged into one block, nothing shown twice. The rendered markdown
   is counted once more at the end, so it never exceeds the budget.

Everything is ordered with explicit tie-breaks: the same index and query give the same answer.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import pickle
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from knoxidx.graph import traverse
from knoxidx.retrieval.errors import RetrievalError, SearchIndexMissingError, SearchInputError
from knoxidx.retrieval.terms import unique_terms
from knoxidx.retrieval.tokens import TokenCounter, default_counter

MIN_TOKENS = 64
MAX_TOKENS = 200_000
MAX_QUERY_CHARS = 2000
DEFINITION_KINDS = ("Function", "Class", "Interface", "Type", "Constant", "Variable")
_TYPE_KINDS = ("Class", "Interface", "Type")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "the", "this", "to", "what", "when", "where",
    "which", "who", "why", "with",
})
_BACKTICKS = re.compile(r"`{3,}")
MIN_HEAD_LINES = 6  # the top hit's head is shown rather than its signature if this much fits
_MERGE_GAP = 2  # ranges of a file this few lines apart are shown as one block (one header)
log = logging.getLogger(__name__)
_COUNT_LOCK = threading.Lock()  # the counter's word cache is not safe under concurrent clears


@dataclass(frozen=True, slots=True)
class ContextWeights:
    """Every knob of ranking and packing, in one place."""

    semantic: float = 0.30
    lexical: float = 0.25
    proximity: float = 0.30
    centrality: float = 0.15
    # proximity of a neighbour = strength of the hit it came from x its relation's weight
    hit: float = 1.0
    callee: float = 0.8
    type: float = 0.7
    enclosing: float = 0.7
    caller: float = 0.6
    imports: float = 0.5
    hit_decay: float = 0.1  # a hit's strength is 1 / (1 + hit_decay * rank), rank from 0
    search_k: int = 10  # search hits taken as seeds
    expand_hits: int = 5  # hits whose graph neighbourhood is added
    per_relation: int = 8  # neighbours of one hit per relation, at most
    full_cutoff: float = 0.5  # below this share of the best score: signature only
    max_full_lines: int = 150  # a longer definition that is not a hit: signature only
    type_full_lines: int = 60  # the same for classes, interfaces and types
    # PageRank edge weights (types not listed are left out of the centrality graph)
    centrality_edges: tuple[tuple[str, float], ...] = (
        ("Calls", 1.0), ("Imports", 1.0), ("References", 0.5), ("Extends", 0.5),
        ("Implements", 0.5), ("Uses", 0.25),
    )

    def relation(self, name: str) -> float:
        return float(getattr(self, name))


@dataclass(slots=True)
class Candidate:
    key: str
    path: str
    start: int
    end: int
    kind: str
    name: str  # qualified name, or a description for ranges
    signature: str = ""
    language: str = ""
    node_id: int | None = None
    hit_rank: int | None = None
    match: tuple[int, int] | None = None  # a hit's matching chunk, inside the definition
    proximity: float = 0.0
    relation: str = ""
    forced_signature: bool = True
    reasons: list[str] = field(default_factory=list)
    semantic: float = 0.0
    lexical: float = 0.0
    centrality: float = 0.0
    score: float = 0.0

    def relate(self, relation: str, proximity: float, reason: str) -> None:
        if proximity > self.proximity:
            self.proximity, self.relation = proximity, relation
        if relation != "enclosing":
            self.forced_signature = False
        if reason not in self.reasons:
            self.reasons.append(reason)


def build_context(index: Any, query: Any, *, max_tokens: Any = 8000,
                  weights: ContextWeights | None = None) -> dict[str, Any]:
    query, max_tokens = _validate(query, max_tokens)
    w = weights or ContextWeights()
    counter = default_counter()
    files = _Files(index.root, counter)
    seeds, search_info = _seeds(index, query, w)
    candidates = _expand(index, seeds, w)
    _score(index, query, candidates, search_info, files, w)
    ranked = sorted(candidates.values(), key=lambda c: (
        -c.score, c.hit_rank if c.hit_rank is not None else 1 << 30, c.path, c.start, c.key))
    packer = _Packer(files, counter, max_tokens, w)
    packer.pack(ranked)
    markdown = packer.render()
    return {
        "query": query,
        "max_tokens": max_tokens,
        "tokens": packer.final_tokens,
        "tokenizer": counter.name,
        "markdown": markdown,
        "blocks": [b.describe() for b in packer.blocks],
        "items": [packer.describe(c, rank) for rank, c in enumerate(ranked, 1)],
        "search": search_info,
        "weights": asdict(w),
    }


def _validate(query: Any, max_tokens: Any) -> tuple[str, int]:
    if not isinstance(query, str) or not query.strip():
        raise SearchInputError("the context query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchInputError(f"the context query is longer than {MAX_QUERY_CHARS} characters")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or \
            not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise SearchInputError(
            f"max_tokens must be a whole number from {MIN_TOKENS} to {MAX_TOKENS}, "
            f"not {max_tokens!r}"
        )
    return query.strip(), max_tokens


# ---- seeds ---------------------------------------------------------------------------------


def _seeds(index: Any, query: str, w: ContextWeights) -> tuple[list[Candidate], dict[str, Any]]:
    info: dict[str, Any] = {"mode": None, "note": "", "hits": 0, "fallback": False,
                            "semantic": False}
    results: list[dict[str, Any]] = []
    try:
        found = index.search(query, k=w.search_k, mode="hybrid")
        results = found["results"]
        info.update(mode=found["mode"], note=found["note"])
        info["semantic"] = found["mode"] == "hybrid" and not found["note"]
    except SearchIndexMissingError as exc:
        info["note"] = str(exc)
    seeds: list[Candidate] = []
    seen: set[str] = set()
    for result in results:
        cand = _candidate_for_result(index, result)
        if cand.key in seen:
            continue
        seen.add(cand.key)
        rank = len(seeds)
        found_by = ", ".join(result.get("sources") or ()) or "search"
        cand.hit_rank = rank
        cand.relate("hit", w.hit / (1 + w.hit_decay * rank), f"search hit #{rank + 1} ({found_by})")
        seeds.append(cand)
    if not seeds:
        info["fallback"] = True
        for node in _named_definitions(index, query, w.search_k):
            cand = _node_candidate(node)
            if cand.key in seen:
                continue
            seen.add(cand.key)
            rank = len(seeds)
            cand.hit_rank = rank
            cand.relate("hit", w.hit / (1 + w.hit_decay * rank),
                        f"named in the query (symbol match #{rank + 1})")
            seeds.append(cand)
    info["hits"] = len(seeds)
    return seeds, info


def _candidate_for_result(index: Any, result: dict[str, Any]) -> Candidate:
    q = index.q
    path, start, end = result["path"], result["start_line"], result["end_line"]
    node = None
    if result.get("symbol"):
        node = next((n for n in q.nodes_qualified(result["symbol"], 20) if n["path"] == path),
                    None)
    if node is None:
        node = q.node_at(path, start)
    if node is not None and node["kind"] in DEFINITION_KINDS and \
            node["start_line"] <= end and node["end_line"] >= start:
        cand = _node_candidate(node)
        if (start, end) != (cand.start, cand.end):
            cand.match = (max(start, cand.start), min(end, cand.end))
        return cand
    return Candidate(
        key=f"range:{path}:{start}:{end}", path=path, start=start, end=end,
        kind=result.get("kind") or "code", name=result.get("symbol") or path,
        language=result.get("language") or "",
    )


def _node_candidate(node: dict[str, Any]) -> Candidate:
    return Candidate(
        key=f"node:{node['id']}", path=node["path"], start=node["start_line"],
        end=node["end_line"], kind=node["kind"], name=node["qualified_name"],
        signature=node.get("signature") or "", language=node.get("language") or "",
        node_id=node["id"],
    )


def _named_definitions(index: Any, query: str, limit: int) -> list[dict[str, Any]]:
    """Definitions whose names appear in the query, in the order the query names them."""
    out: list[dict[str, Any]] = []
    for name in dict.fromkeys(m.group() for m in _IDENT.finditer(query)):
        if len(name) < 3 or name.lower() in _STOP:
            continue
        rows = index.q.nodes_qualified(name, limit) or index.q.nodes_named(name, None, limit)
        out.extend(r for r in rows if r["kind"] in DEFINITION_KINDS and r["path"])
        if len(out) >= limit:
            break
    return out[:limit]


# ---- expansion -----------------------------------------------------------------------------


def _expand(index: Any, seeds: list[Candidate], w: ContextWeights) -> dict[str, Candidate]:
    q = index.q
    out = {c.key: c for c in seeds}
    for seed in seeds[: w.expand_hits]:
        if seed.node_id is None:
            continue
        strength = seed.proximity
        label = seed.name.rsplit(".", 1)[-1]
        relations = (
            ("callee", "out", ("Calls",), f"called by {label}"),
            ("caller", "in", ("Calls",), f"calls {label}"),
            ("type", "out", ("Uses", "Extends", "Implements"), f"used by {label}"),
        )
        for relation, direction, types, reason in relations:
            hits = traverse.walk(q, seed.node_id, direction, types, 1, limit=200)
            ids = list(dict.fromkeys(h["id"] for h in hits))[: w.per_relation * 2]
            nodes = q.nodes_by_id(ids)
            taken = 0
            for node_id in ids:
                node = nodes.get(node_id)
                if node is None or not node["path"] or node["kind"] not in DEFINITION_KINDS:
                    continue
                _add(out, _node_candidate(node), relation, strength * w.relation(relation),
                     reason)
                taken += 1
                if taken >= w.per_relation:
                    break
        full = q.nodes_by_id([seed.node_id]).get(seed.node_id)
        parent_id = full.get("parent_id") if full else None
        parent = q.nodes_by_id([parent_id]).get(parent_id) if parent_id else None
        if parent is not None and parent["kind"] in _TYPE_KINDS and parent["path"]:
            _add(out, _node_candidate(parent), "enclosing", strength * w.enclosing,
                 f"encloses {label}")
        imports = _import_block(index, seed.path)
        if imports is not None:
            _add(out, imports, "imports", strength * w.imports, f"the imports of {label}'s file")
    return out


def _add(out: dict[str, Candidate], cand: Candidate, relation: str, proximity: float,
         reason: str) -> None:
    existing = out.setdefault(cand.key, cand)
    existing.relate(relation, proximity, reason)


def _import_block(index: Any, path: str) -> Candidate | None:
    """The file's first run of import statements, as one range."""
    file_node = index.q.file_node(path)
    if file_node is None:
        return None
    lines = sorted({e["line"] for e in index.q.edges([file_node["id"]], "out", ("Imports",))
                    if e["line"]})
    if not lines:
        return None
    start = end = lines[0]
    for line in lines[1:]:
        if line - end > 3:
            break
        end = line
    return Candidate(key=f"imports:{path}", path=path, start=start, end=end, kind="imports",
                     name=path, language=file_node.get("language") or "")


# ---- scoring -------------------------------------------------------------------------------


def _score(index: Any, query: str, candidates: dict[str, Candidate], info: dict[str, Any],
           files: _Files, w: ContextWeights) -> None:
    wanted = [t for t in unique_terms([query]) if len(t) > 1 and t not in _STOP]
    semantic = _semantic_scores(index, query, candidates) if info["semantic"] else {}
    ranks = centrality_scores(index, w.centrality_edges)
    for cand in candidates.values():
        if cand.kind == "imports":
            cand.end = files.balanced_end(cand.path, cand.start, cand.end)
        cand.lexical = _lexical(wanted, cand, files)
        cand.semantic = semantic.get(cand.key, 0.0)
        node_id = cand.node_id
        if node_id is None and cand.kind == "imports":
            file_node = index.q.file_node(cand.path)
            node_id = file_node["id"] if file_node else None
        cand.centrality = ranks.get(node_id, 0.0) if node_id is not None else 0.0
        cand.score = (w.semantic * cand.semantic + w.lexical * cand.lexical
                      + w.proximity * cand.proximity + w.centrality * cand.centrality)


def _lexical(wanted: list[str], cand: Candidate, files: _Files) -> float:
    """The share of the query's words found in the candidate: its name and signature count
    as much as its body."""
    if not wanted:
        return 0.0
    head = set(unique_terms([cand.name, cand.signature]))
    body = set(unique_terms(files.lines(cand.path)[cand.start - 1:cand.end]))
    hits = sum((t in head) + (t in body) for t in wanted)
    return hits / (2 * len(wanted))


def _semantic_scores(index: Any, query: str, candidates: dict[str, Candidate]) -> dict[str, float]:
    """Cosine of the query's vector and the vector of the narrowest chunk holding each
    candidate's first line; empty when the index has no usable vectors."""
    from knoxidx.retrieval.api import searcher_for

    try:
        searcher = searcher_for(index)
        embedder = searcher.embedder()
        hybrid = searcher.hybrid()
        if embedder is None or hybrid.embedder is None:
            return {}
        vectors = hybrid.vector_index()
        if len(vectors) == 0:
            return {}
        row_of = {int(chunk_id): row for row, chunk_id in enumerate(vectors.ids)}
        query_vector = embedder.embed_query(query)
    except RetrievalError:
        return {}
    from knoxidx.retrieval.vectors import normalize

    unit = normalize(query_vector).reshape(-1)
    out: dict[str, float] = {}
    for cand in candidates.values():
        for chunk_id in searcher.store.chunks_at(cand.path, cand.start)[:1]:
            row = row_of.get(chunk_id)
            if row is not None:
                out[cand.key] = max(0.0, float(vectors.matrix[row] @ unit))
    return out


# ---- files and tokens ----------------------------------------------------------------------


class _Files:
    """File lines and per-line token counts, read once per build."""

    def __init__(self, root: Any, counter: TokenCounter) -> None:
        self.root = root
        self.counter = counter
        self._lines: dict[str, list[str]] = {}
        self._tokens: dict[str, list[int]] = {}

    def lines(self, path: str) -> list[str]:
        lines = self._lines.get(path)
        if lines is None:
            try:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            lines = self._lines[path] = text.split("\n")
        return lines

    def tokens(self, path: str) -> list[int]:
        counts = self._tokens.get(path)
        if counts is None:
            with _COUNT_LOCK:
                counts = self._tokens[path] = self.counter.count_many(self.lines(path))
        return counts

    def span_tokens(self, path: str, start: int, end: int) -> int:
        return sum(self.tokens(path)[start - 1:end])

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
        with _COUNT_LOCK:
            return self.counter.count_many([text])[0] if text else 0


# ---- packing -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    path: str
    start: int
    end: int
    mode: str  # full | excerpt | truncated | signature
    items: list[Candidate]
    language: str
    body: list[str] = field(default_factory=list)
    tokens: int = 0
    named: int = 0  # items named in the header: fixed when placed, so its count holds
    terse: bool = False  # a header without the why (the top hit in a tiny budget)

    @property
    def primary(self) -> Candidate:
        return self.items[0]

    def header(self) -> str:
        c = self.primary
        why = "; ".join(c.reasons[:2])  # the rest are in the JSON
        named = self.items[:self.named or len(self.items)]
        extra = [i.name.rsplit(".", 1)[-1] if i.kind != "imports" else "imports"
                 for i in named[1:3]]
        if extra:
            why += "; with " + ", ".join(extra) + ("…" if len(named) > 3 else "")
        if self.mode != "full":
            why += f"; {self.mode}" if self.mode != "signature" else "; signature only"
        what = f"{c.kind} {c.name}" if c.kind != "imports" else f"imports of {c.path}"
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
                "items": [i.name for i in self.items]}


class _Packer:
    def __init__(self, files: _Files, counter: TokenCounter, budget: int,
                 w: ContextWeights) -> None:
        self.files = files
        self.counter = counter
        self.budget = budget
        self.w = w
        self.blocks: list[_Block] = []  # in the order they were first placed
        self.used = 0
        self.final_tokens = 0

    # ---- the greedy pass ---------------------------------------------------------------

    def pack(self, ranked: list[Candidate]) -> None:
        if not ranked:
            return
        top_score = ranked[0].score or 1.0
        for position, cand in enumerate(ranked):
            if self._covered(cand):
                continue
            for mode in self._modes(cand, position, top_score):
                if self._place(cand, mode):
                    break

    def _modes(self, cand: Candidate, position: int, top_score: float) -> list[str]:
        lines = cand.end - cand.start + 1
        limit = self.w.type_full_lines if cand.kind in _TYPE_KINDS else self.w.max_full_lines
        full_ok = not cand.forced_signature and (
            cand.hit_rank is not None or cand.kind == "imports"
            or (cand.score >= self.w.full_cutoff * top_score and lines <= limit)
        )
        modes = ["full"] if full_ok else []
        if cand.match is not None and full_ok:
            modes.append("excerpt")
        if position == 0 and cand.kind != "imports":
            modes.append("truncated")  # the top hit: its head rather than only its signature
        if cand.kind != "imports" and cand.node_id is not None:
            modes.append("signature")
        if position == 0 and cand.kind != "imports":
            modes.append("truncated-short")  # and always shown, in part if need be
        return modes

    def _covered(self, cand: Candidate) -> bool:
        """Inside a range already placed: recorded there (not in its header), costs
        nothing."""
        for block in self.blocks:
            if block.path == cand.path and block.mode != "signature" and \
                    block.start <= cand.start and cand.end <= block.end:
                block.items.append(cand)
                return True
        return False

    def _place(self, cand: Candidate, mode: str) -> bool:
        lines = self.files.lines(cand.path)
        if mode == "signature":
            text = cand.signature.strip() or (
                lines[cand.start - 1].strip() if cand.start <= len(lines) else "")
            block = _Block(cand.path, cand.start, cand.end, mode, [cand], cand.language,
                           body=text.split("\n") if text else [])
            return bool(text) and self._commit(block, [])
        if mode in ("truncated", "truncated-short"):
            short = mode == "truncated-short"
            head = self._truncated(cand, 1 if short else MIN_HEAD_LINES, terse=short)
            return head is not None and self._commit(head, [])
        start, end = cand.match if mode == "excerpt" and cand.match else (cand.start, cand.end)
        end = min(end, len(lines))
        if start > end:
            return False
        # what this range overlaps or touches in the same file is merged into one block
        touching = [b for b in self.blocks if b.path == cand.path and (
            (b.mode != "signature" and start <= b.end + 1 + _MERGE_GAP
             and end >= b.start - 1 - _MERGE_GAP)
            or (b.mode == "signature" and start <= b.start <= end))]
        ranged = [b for b in touching if b.mode != "signature"]
        start = min([start] + [b.start for b in ranged])
        end = max([end] + [b.end for b in ranged])
        if ranged and not (mode == "full" and all(b.mode == "full" for b in ranged)):
            mode = "excerpt"
        items = [i for b in touching for i in b.items] + [cand]
        block = _Block(cand.path, start, end, mode, items,
                       cand.language or (touching[0].language if touching else ""),
                       body=lines[start - 1:end])
        return self._commit(block, touching)

    def _truncated(self, cand: Candidate, at_least: int, terse: bool = False) -> _Block | None:
        """As many leading lines of the definition as fit, if that is ``at_least`` lines (or
        the whole of a shorter one)."""
        counts = self.files.tokens(cand.path)
        lines = self.files.lines(cand.path)
        last = min(cand.end, len(lines))
        probe = _Block(cand.path, cand.start, last, "truncated", [cand], cand.language,
                       terse=terse)
        overhead = self._tokens(probe) - self.files.span_tokens(cand.path, cand.start, last)
        room = self.budget - self.used - overhead
        end = cand.start - 1
        while end < last and room >= counts[end]:
            room -= counts[end]
            end += 1
        if end - cand.start + 1 < min(at_least, last - cand.start + 1):
            return None
        return _Block(cand.path, cand.start, end, "truncated", [cand], cand.language,
                      body=lines[cand.start - 1:end], terse=terse)

    def _commit(self, block: _Block, replaced: list[_Block]) -> bool:
        block.named = len(block.items)
        block.tokens = self._tokens(block)
        cost = block.tokens - sum(b.tokens for b in replaced)
        if self.used + cost > self.budget:
            return False
        if replaced:
            at = self.blocks.index(replaced[0])  # keeps the place of the best-ranked part
            self.blocks[at] = block
            self.blocks = [b for b in self.blocks if not any(b is r for r in replaced)
                           or b is block]
        else:
            self.blocks.append(block)
        self.used += cost
        return True

    def _tokens(self, block: _Block) -> int:
        if block.mode == "signature":
            body = sum(self.files.count(line) for line in block.body)
        else:
            body = self.files.span_tokens(block.path, block.start, block.end)
        fence = block.fence()
        return (self.files.count(block.header()) + self.files.count(fence + block.language)
                + self.files.count(fence) + body)

    # ---- output ------------------------------------------------------------------------

    def render(self) -> str:
        """The blocks as markdown; should the whole text count more than the budget (the
        per-block sums make that unlikely, not impossible), the last blocks are dropped."""
        while True:
            text = "\n\n".join(b.text() for b in self.blocks)
            tokens = self.files.count(text)
            if tokens <= self.budget or not self.blocks:
                self.final_tokens = tokens
                return text
            self.blocks.pop()

    def describe(self, cand: Candidate, rank: int) -> dict[str, Any]:
        block_index, how = None, None
        for i, block in enumerate(self.blocks):
            if any(item is cand for item in block.items):
                block_index = i
                how = block.mode if block.primary is cand else "merged"
                break
        return {
            "rank": rank,
            "path": cand.path,
            "start_line": cand.start,
            "end_line": cand.end,
            "kind": cand.kind,
            "qualified_name": cand.name,
            "id": cand.node_id,
            "included": how,
            "block": block_index,
            "score": round(cand.score, 6),
            "scores": {"semantic": round(cand.semantic, 6), "lexical": round(cand.lexical, 6),
                       "proximity": round(cand.proximity, 6),
                       "centrality": round(cand.centrality, 6)},
            "relation": cand.relation,
            "reasons": cand.reasons,
        }


# ---- centrality ----------------------------------------------------------------------------

CENTRALITY_FILE = "centrality.pickle"
_CENTRALITY_VERSION = 1
_centrality_lock = threading.Lock()
_centrality_memo: dict[str, tuple[str, dict[int, float]]] = {}


def centrality_scores(index: Any, edge_weights: tuple[tuple[str, float], ...]) -> dict[int, float]:
    """PageRank of every node over the weighted call/import graph, log-scaled to 0..1 (the
    most central node: 1). Computed once per index state (its files' content hashes and
    layout) and edge weights; kept in memory and in ``.knoxidx/centrality.pickle``."""
    key = _state_key(index, edge_weights)
    db = str(index.store.path)
    with _centrality_lock:  # one computation at a time; the others wait for its result
        memo = _centrality_memo.get(db)
        if memo is not None and memo[0] == key:
            return memo[1]
        cache = index.store.path.parent / CENTRALITY_FILE
        scores = _load_centrality(cache, key)
        if scores is None:
            scores = _pagerank(index, dict(edge_weights))
            _save_centrality(cache, key, scores)
        _centrality_memo[db] = (key, scores)
        return scores


def _state_key(index: Any, edge_weights: tuple[tuple[str, float], ...]) -> str:
    import xxhash

    digest = xxhash.xxh64()
    layout = index.store.get_meta("layout")
    digest.update(f"v{_CENTRALITY_VERSION}|{edge_weights!r}|{layout}".encode())
    for path, state in sorted(index.store.file_states().items()):
        digest.update(f"\n{path}\x1f{state.hash}\x1f{state.status}".encode())
    return digest.hexdigest()


def _pagerank(index: Any, weights: dict[str, float]) -> dict[int, float]:
    import networkx as nx

    totals: dict[tuple[int, int], float] = {}
    ids = [node["id"] for node in index.q.all_nodes()]
    for edge in index.q.edges(ids, "out", tuple(weights)):
        source, target = edge["source"], edge["target"]
        if source != target:
            totals[(source, target)] = totals.get((source, target), 0.0) + weights[edge["type"]]
    if not totals:
        return {}
    graph = nx.DiGraph()
    graph.add_weighted_edges_from((s, t, w) for (s, t), w in sorted(totals.items()))
    try:
        ranks = nx.pagerank(graph, weight="weight")
    except ImportError:  # networkx's PageRank needs scipy; its pure-Python one is ~30x slower
        from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

        ranks = _pagerank_python(graph, weight="weight")
    mean = 1.0 / graph.number_of_nodes()
    top = max(ranks.values())
    return {node: round(_log_scale(value, mean, top), 6) for node, value in ranks.items()}


def _load_centrality(path: Any, key: str) -> dict[int, float] | None:
    try:
        with open(path, "rb") as fh:
            data = pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    return data.get("scores")


def _save_centrality(path: Any, key: str, scores: dict[int, float]) -> None:
    """Written beside the index, atomically; a read-only directory only costs recomputing."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pickle.dump({"key": key, "scores": scores}, fh, protocol=5)
        os.replace(tmp, path)
    except OSError as exc:
        log.info("centrality cache not saved (%s)", exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _log_scale(value: float, mean: float, top: float) -> float:
    if value <= 0 or top <= 0:
        return 0.0
    return math.log1p(value / mean) / math.log1p(top / mean)
