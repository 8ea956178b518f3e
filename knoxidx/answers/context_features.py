"""What each candidate of a context build is scored on, read from the index and the files:
lexical match, semantic similarity, centrality, its file's churn; and what its block shows
beside it (its name within its module, a type's outline)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from knoxidx.answers.blocks import short_name
from knoxidx.answers.centrality import centrality_scores
from knoxidx.answers.context_candidates import (
    DEFINITION_KINDS,
    Candidate,
    ContextIndex,
    ContextWeights,
)
from knoxidx.answers.pack_files import Files
from knoxidx.history.tables import tables_of
from knoxidx.parse.file_index import TYPE_KINDS
from knoxidx.retrieval.errors import RetrievalError
from knoxidx.retrieval.terms import unique_terms

STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "the", "this", "to", "what", "when", "where",
    "which", "who", "why", "with",
})


def wanted_terms(query: str) -> list[str]:
    return [t for t in unique_terms([query]) if len(t) > 1 and t not in STOP_WORDS]


def set_features(index: ContextIndex, query: str, wanted: list[str],
              candidates: dict[str, Candidate], info: dict[str, Any], files: Files,
              w: ContextWeights) -> None:
    semantic = _semantic_scores(index, query, candidates) if info["semantic"] else {}
    ranks = centrality_scores(index, w.centrality_edges)
    churn = _file_churn(index, {c.path for c in candidates.values()}, w.history_days) \
        if w.history else {}
    for cand in candidates.values():
        cand.history = churn.get(cand.path, 0.0)
        if cand.kind == "imports":
            cand.end = files.balanced_end(cand.path, cand.start, cand.end)
        cand.lexical = lexical_share(wanted, cand, files)
        cand.semantic = semantic.get(cand.key, 0.0)
        node_id = cand.node_id
        if node_id is None and cand.kind == "imports":
            file_node = index.q.file_node(cand.path)
            node_id = file_node["id"] if file_node else None
        cand.centrality = ranks.get(node_id, 0.0) if node_id is not None else 0.0


def _file_churn(index: ContextIndex, paths: set[str], days: int) -> dict[str, float]:
    """Per path, log(1 + commits that changed it in the last ``days`` of the stored git
    history) over the same for the most changed of ``paths``; empty without a history."""
    tables = tables_of(index.store)
    if tables is None or not tables.exists():
        return {}
    newest = tables.newest_time()
    if not newest:
        return {}
    changed = dict(tables.paths_changed_since(tables.first_seq_since(newest - days * 86400)))
    return churn_shares({p: changed.get(p, 0) for p in paths})


def churn_shares(counts: dict[str, int]) -> dict[str, float]:
    top = math.log1p(max(counts.values(), default=0))
    return {p: math.log1p(n) / top for p, n in counts.items()} if top else {}


def set_local_names(candidates: Iterable[Candidate], facts_of: Callable[[str], Any]) -> None:
    """Each definition's name within its module (``Parser.parse``, not
    ``org.jsoup.parser.Parser.parse``): what a header shows beside the path, which already
    says the module. Read from the stored facts of its file; a name not found there stays
    whole."""
    by_path: dict[str, list[Candidate]] = {}
    for cand in candidates:
        if cand.kind in DEFINITION_KINDS:
            by_path.setdefault(cand.path, []).append(cand)
    for path, cands in by_path.items():
        facts = facts_of(path)
        if facts is None:
            continue
        by_last: dict[str, list[str]] = {}
        for d in facts.defs:
            by_last.setdefault(d.name, []).append(d.qualname)
        for cand in cands:
            cand.local_name = local_name(cand.name, by_last.get(short_name(cand.name), ()))


def local_name(qualified: str, qualnames: Iterable[str]) -> str:
    """``qualified`` less its module's part: the longest of ``qualnames`` (names within a
    module, "." separated) that it ends with after a separator, written as ``qualified`` writes
    it; ``qualified`` itself if none."""
    best = ""
    for name in qualnames:
        for written in (name, name.replace(".", "::")):
            if len(best) < len(written) < len(qualified) and qualified.endswith(written) \
                    and qualified[-len(written) - 1] in ".:/":
                best = written
    return best or qualified


def set_outlines(candidates: dict[str, Candidate], facts_of: Callable[[str], Any]) -> None:
    """The method start lines of every type candidate that is not a hit (it is shown as its
    outline, not its body), from the stored facts of its file; fields are left to the body."""
    by_path: dict[str, list[Candidate]] = {}
    for cand in candidates.values():
        if cand.kind in TYPE_KINDS and cand.hit_rank is None and cand.node_id is not None:
            by_path.setdefault(cand.path, []).append(cand)
    for path, types in by_path.items():
        facts = facts_of(path)
        if facts is None:
            continue
        defs = facts.defs
        for cand in types:
            own = next((i for i, d in enumerate(defs) if d.start_line == cand.start
                        and d.end_line == cand.end), None)
            if own is not None:
                cand.outline = tuple(sorted({d.start_line for d in defs if d.parent == own
                                             and d.kind == "Function"
                                             and d.start_line > cand.start}))


def lexical_share(wanted: list[str], cand: Candidate, files: Files) -> float:
    """The share of the query's words found in the candidate: its name and signature count
    as much as its body."""
    if not wanted:
        return 0.0
    head = set(unique_terms([cand.name, cand.signature]))
    body: set[str] = set()
    for found in files.wanted_on_lines(cand.path, cand.start, cand.end, frozenset(wanted)):
        body.update(found)
    hits = sum((t in head) + (t in body) for t in wanted)
    return hits / (2 * len(wanted))


def _semantic_scores(index: ContextIndex, query: str,
                     candidates: dict[str, Candidate]) -> dict[str, float]:
    """Cosine of the query's vector and the vector of the narrowest chunk holding each
    candidate's first line; empty when the index has no usable vectors."""
    from knoxidx.retrieval.searcher import searcher_for

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
