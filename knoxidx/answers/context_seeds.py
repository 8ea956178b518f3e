"""The seeds of a context build: search's hits, each standing for the definition it falls in
(or its own lines where a chunk holds several), or the definitions the query names when search
finds nothing; and search's own results for the fill."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from knoxidx.answers.context_candidates import (
    DEFINITION_KINDS,
    Candidate,
    ContextIndex,
    ContextWeights,
    node_candidate,
)
from knoxidx.answers.context_features import STOP_WORDS, set_local_names
from knoxidx.retrieval.disclosure import Disclosure
from knoxidx.retrieval.errors import SearchIndexMissingError
from knoxidx.retrieval.hybrid_search import VECTOR_SOURCES

_TRAILING_LINES = 3  # blank or comment lines a definition's last chunk may hold below it
_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")


def search_seeds(index: ContextIndex, query: str, w: ContextWeights,
           disclosure: Disclosure) -> tuple[list[Candidate], dict[str, Any]]:
    info: dict[str, Any] = {"mode": None, "note": "", "hits": 0, "fallback": False,
                            "semantic": False, "withheld": 0}
    results: list[dict[str, Any]] = []
    try:
        found = index.search(query, k=w.search_k, mode="hybrid", source_weights=dict.fromkeys(
            VECTOR_SOURCES, w.vector_fusion), depth=w.search_depth)
        results = found["results"]
        info.update(mode=found["mode"], note=found["note"], withheld=found["withheld"])
        info["semantic"] = found["mode"] == "hybrid" and not found["note"]
    except SearchIndexMissingError as exc:
        info["note"] = str(exc)
    seeds: list[Candidate] = []
    seen: set[str] = set()
    for result in results:
        cand = candidate_for_result(index, result)
        if cand.key in seen:  # another chunk of a long definition: where else it matches
            first = next(c for c in seeds if c.key == cand.key)
            if cand.match is not None:
                first.matches.append(cand.match)
            continue
        if cand.match is not None:
            cand.matches.append(cand.match)
        seen.add(cand.key)
        rank = len(seeds)
        found_by = ", ".join(result.get("sources") or ()) or "search"
        cand.hit_rank = rank
        cand.relate("hit", w.hit / (1 + w.hit_decay * rank), f"search hit #{rank + 1} ({found_by})")
        seeds.append(cand)
    if not seeds:
        info["fallback"] = True
        for node in _named_definitions(index, query, w.search_k):
            cand = node_candidate(node)
            if cand.key in seen:
                continue
            seen.add(cand.key)
            if not disclosure.allows(cand.path):  # not expanded from either
                info["withheld"] += 1
                continue
            rank = len(seeds)
            cand.hit_rank = rank
            cand.relate("hit", w.hit / (1 + w.hit_decay * rank),
                        f"named in the query (symbol match #{rank + 1})")
            seeds.append(cand)
    info["hits"] = len(seeds)
    return seeds, info


def read_search_fill(index: ContextIndex, query: str, w: ContextWeights,
                 facts_of: Callable[[str], Any]) -> list[Candidate]:
    """Search's own first ``fill_search`` results (at its own depth, the fusion as the seeds'),
    each the lines it shows, in its order: what the pack's last fill takes."""
    found = index.search(query, k=w.fill_search, mode="hybrid", source_weights=dict.fromkeys(
        VECTOR_SOURCES, w.vector_fusion))
    out: list[Candidate] = []
    for n, result in enumerate(found["results"], 1):
        path, start, end = result["path"], result["start_line"], result["end_line"]
        out.append(Candidate(
            key=f"search:{path}:{start}:{end}", path=path, start=start, end=end,
            kind=result.get("kind") or "code", name=result.get("symbol") or path,
            language=result.get("language") or "", relation="search",
            forced_signature=False, reasons=[f"search result #{n}"]))
    set_local_names(out, facts_of)
    return out


def candidate_for_result(index: ContextIndex, result: dict[str, Any]) -> Candidate:
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
        cand = node_candidate(node)
        if _only_trailing(q, path, end, node, result.get("definitions") or ()) and \
                _only_lead_in(q, path, start, node):
            # a part of one definition (with the comments above it, or the blank line below
            # its last chunk holds): that definition
            match = (max(start, cand.start), min(end, cand.end))
            if match != (cand.start, cand.end):
                cand.match = match
            return cand
        # the chunk holds more than this definition (small neighbours merged into one chunk):
        # its own lines, so that none of them is lost; the graph still expands from the node
        cand.key, cand.start, cand.end = f"range:{path}:{start}:{end}", start, end
        return cand
    return Candidate(
        key=f"range:{path}:{start}:{end}", path=path, start=start, end=end,
        kind=result.get("kind") or "code", name=result.get("symbol") or path,
        language=result.get("language") or "",
    )


def _only_trailing(q: Any, path: str, end: int, node: dict[str, Any],
                   definitions: Sequence[str]) -> bool:
    """Whether the lines of a chunk below ``node`` (a few at most) hold no definition, and the
    chunk (``definitions``: those it holds, as search names them) no other one."""
    if end <= node["end_line"]:
        return True
    if end - node["end_line"] > _TRAILING_LINES or \
            any(name != node["qualified_name"] for name in definitions):
        return False
    for line in range(node["end_line"] + 1, end + 1):
        below = q.node_at(path, line)
        if below is not None and below["kind"] in DEFINITION_KINDS and not (
                below["start_line"] <= node["start_line"] and below["end_line"] >= end):
            return False
    return True


def _only_lead_in(q: Any, path: str, start: int, node: dict[str, Any]) -> bool:
    """Whether the lines of a chunk above ``node`` hold no other definition (comments,
    decorators or the head of a definition holding ``node``)."""
    if start >= node["start_line"]:
        return True
    above = q.node_at(path, start)
    return above is None or above["kind"] not in DEFINITION_KINDS or above["id"] == node["id"] \
        or (above["start_line"] <= node["start_line"] and above["end_line"] >= node["end_line"])


def _named_definitions(index: ContextIndex, query: str, limit: int) -> list[dict[str, Any]]:
    """Definitions whose names appear in the query, in the order the query names them."""
    out: list[dict[str, Any]] = []
    for name in dict.fromkeys(m.group() for m in _IDENT.finditer(query)):
        if len(name) < 3 or name.lower() in STOP_WORDS:
            continue
        rows = index.q.nodes_qualified(name, limit) or index.q.nodes_named(name, None, limit)
        out.extend(r for r in rows if r["kind"] in DEFINITION_KINDS and r["path"])
        if len(out) >= limit:
            break
    return out[:limit]
