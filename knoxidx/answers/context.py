"""The context builder: the code an agent should read for a question, packed into a token
budget.

1. **Seeds**: hybrid search hits (``search_k`` of the definitions of ``search_depth`` fused
   chunks), its vector sources weighed at ``vector_fusion`` (or, when search finds nothing,
   definitions the query names). A hit inside one definition stands for it (with the
   comments above it, or the blank line below its last chunk); a chunk holding several small
   definitions stands for its own lines.
2. **Expansion** through the graph, for the best hits: the definitions they call, their
   callers, the types and constants they use (of many, those named most like the question),
   their enclosing class, and the import block of their file; and the top hit's siblings,
   the functions of its file matching the question, and that whole file (packed only while
   it takes at most ``top_file_share`` of the budget); and, from the index's git history,
   the functions the last commits changed (ranked below the first ``recent_lag`` hits: they
   fill the room the hits leave), and those the commits the question names changed (by id,
   or by the number of a pull request in their subject: ranked right after the top hit).
3. **Ranking** of every candidate by four factors, weighted in :class:`ContextWeights`:
   semantic similarity (cosine of query and chunk vectors, when the index has them), lexical
   match (the share of query words in the candidate), graph proximity (how directly a
   candidate relates to how good a hit), centrality (PageRank over the call/import graph,
   computed once per index state and cached in ``.knoxidx/``: :mod:`.centrality`); test and
   config files demoted unless the query is about tests. Hits keep search's order, and a
   graph neighbour ranks below the ``neighbour_lag`` hits after the one that brought it in.
4. **Packing** (:mod:`.packing`), greedy in rank order, counted with the real tokenizer
   (:mod:`.tokens`): whole definitions within their share of the budget, long hits elided to
   their signature and the lines that match, classes as outlines, overlapping or adjacent
   ranges of a file merged into one block, nothing shown twice; what budget the candidates
   leave, to search's own results (``fill_search``: ``knoxidx search``'s, at its own depth,
   read only then) in its order, as they alone would be packed; then the types a hit uses and
   its file's imports, when nothing else brought them in (``after_search``); and at the end
   the best candidates left out, one line each. The rendered markdown is counted once more at the
   end, so it never exceeds the budget.

Never-send files take no part (their search hits and graph neighbours are withheld, counted
in ``withheld``) and the code shown has its secrets masked before it is counted (``masked``
counts them by kind): :mod:`.disclosure`.

Everything is ordered with explicit tie-breaks: the same index and query give the same answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache, partial
from typing import Any, Protocol

from knoxidx.answers.budget import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS
from knoxidx.answers.centrality import centrality_scores
from knoxidx.answers.packing import FILE_KIND, Files, Packer, short_name
from knoxidx.answers.precedents import similar_commits
from knoxidx.graph import traverse
from knoxidx.graph.protocol import IndexedGraph
from knoxidx.history.answers import (
    RecentChange,
    commit_changes,
    recent_changes,
    referenced_changes,
)
from knoxidx.history.store import tables_of
from knoxidx.parse.file_index import TYPE_KINDS
from knoxidx.retrieval.disclosure import Disclosure
from knoxidx.retrieval.errors import RetrievalError, SearchIndexMissingError, SearchInputError
from knoxidx.retrieval.hybrid_search import VECTOR_SOURCES
from knoxidx.retrieval.priors import asks_about_tests, is_test_path
from knoxidx.retrieval.terms import unique_terms
from knoxidx.retrieval.tokens import default_counter

RECENT_SOURCE = "history:recent"  # the link of a recently changed function: no hit brought it
REFERENCED_SOURCE = "history:referenced"  # of a function a commit the question names changed
SIMILAR_SOURCE = "history:similar"  # of a function a past commit like the question changed
NEIGHBOURS_READ = 200  # a hit's callers (or callees, types) read at most, the best named kept
MAX_QUERY_CHARS = 2000
_TRAILING_LINES = 3  # blank or comment lines a definition's last chunk may hold below it
DEFINITION_KINDS = ("Function", "Class", "Interface", "Type", "Constant", "Variable")
_CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties",
                    ".xml", ".lock", ".gradle")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "of", "on", "or", "the", "this", "to", "what", "when", "where",
    "which", "who", "why", "with",
})


@dataclass(frozen=True, slots=True)
class ContextWeights:
    """Every knob of ranking and packing, in one place."""

    semantic: float = 0.30
    lexical: float = 0.25
    proximity: float = 0.30
    centrality: float = 0.15
    history: float = 0.0
    history_days: int = 365  # the window of git history whose changes count
    # proximity of a function the last ``recent_commits`` commits changed (work in progress is
    # often what the next change request touches, named or not); 0 gathers none
    recent: float = 0.5
    recent_commits: int = 30
    recent_functions: int = 8  # the newest changed first, the best named within a commit
    recent_lag: int = 30  # such a function ranks below this many hits: it fills spare room
    recent_max_files: int = 20  # a commit that changed more files is passed over (0: none is)
    recent_lexical: float = 0.0  # the least lexical match for such a function to be taken
    # proximity of a function changed by a commit the question names (its id, or the number
    # of a pull request or issue its subject carries: "touch up PR 123", "after 1a2b3c4"):
    # the question points at that change, so it ranks right after the top hit; 0 gathers none
    referenced: float = 1.0
    referenced_functions: int = 8  # the best named first, of the newest commit first
    # proximity of a function changed by a past commit whose subject is like the question
    # (answers.precedents): an earlier change on the same subject; off (0 gathers none): on
    # the benchmark it reached no more than search and the graph (BENCHMARKS) for ~60 % more time
    similar: float = 0.0
    similar_commits: int = 10
    similar_functions: int = 4  # the best matching commit's first, the best named within one
    similar_lag: int = 30  # such a function ranks below this many hits
    similar_max_files: int = 10  # a commit that changed more files is passed over
    # proximity of a neighbour = strength of the hit it came from x its relation's weight
    hit: float = 1.0
    callee: float = 0.8
    type: float = 0.7
    enclosing: float = 0.7
    caller: float = 0.6
    imports: float = 0.5
    sibling: float = 0.6  # another definition in the top hit's file matching the question
    siblings: int = 4  # siblings of one hit, at most (the best matching), when weighed
    sibling_lexical: float = 0.25  # the least lexical match for a sibling to be taken
    sibling_hits: int = 1  # the hits whose files give siblings (more lost on the benchmark)
    # the top hit's whole file, right after it, when it counts at most this share of the
    # budget (a small file's other functions are often what a change also touches); 0: never
    top_file_share: float = 0.12
    hit_decay: float = 0.1  # a hit's strength is 1 / (1 + hit_decay * rank), rank from 0
    search_k: int = 50  # search hits taken as seeds, at most (20 chunks give 20-48)
    # fused chunks whose definitions are the hits (``knoxidx search`` reads 60): 40 or 60,
    # reranked as one or after these 20, moved pooled recall by 0.004 at most and lost
    # held-out gold @8k (BENCHMARKS)
    search_depth: int = 20
    # the fusion weight of search's vector sources when it seeds a context (``knoxidx search``
    # keeps 1): a change request's few words are outvoted by two vector sources at 1
    vector_fusion: float = 0.75
    expand_hits: int = 5  # hits whose graph neighbourhood is added
    per_relation: int = 8  # neighbours of one hit per relation, at most: the best named
    full_cutoff: float = 0.5  # below this share of the best score: signature only
    max_full_lines: int = 150  # a longer definition that is not a hit: signature only
    type_full_lines: int = 60  # the same for classes, interfaces and types
    demoted: float = 0.5  # score factor of test and config files, unless the query is on tests
    block_share: float = 0.15  # no block takes more of the budget: long ones become excerpts
    hit_full_share: float = 0.15  # a longer hit inside a definition: signature and its chunk
    outline_members: int = 20  # method signatures in a class outline, at most
    neighbour_signatures: bool = False  # a graph neighbour not shown whole: its signature
    neighbour_lag: int = 10  # a graph neighbour ranks below this many hits after its own
    neighbour_share: float = 0.08  # a graph neighbour is shown whole up to this share at most
    neighbour_elided: bool = True  # a longer one ranked high: its signature and matching lines
    fill_neighbours: bool = True  # the budget left at the end: neighbours below the cut-off
    # and what that leaves: search's own results (``knoxidx search``'s k, at its own depth), in
    # its order, as they alone would be packed (the 20 chunks the hits come from miss what it
    # finds deeper); 0: none
    fill_search: int = 100
    # neighbours brought in only by these relations (the types a hit uses, its file's imports:
    # read to understand a change, rarely where it is made) get only the budget that search's
    # own results leave, never displacing what plain retrieval would have shown
    after_search: tuple[str, ...] = ("type", "imports")
    search_order: bool = True  # a hit never outranks one that search put before it
    left_out: int = 8  # candidates left out, listed one line each at the end of the pack
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
    local_name: str = ""  # the name within its file's module ("Parser.parse"), if known
    signature: str = ""
    language: str = ""
    node_id: int | None = None
    hit_rank: int | None = None
    match: tuple[int, int] | None = None  # a hit's matching chunk, inside the definition
    matches: list[tuple[int, int]] = field(default_factory=list)  # every chunk of it hit
    proximity: float = 0.0
    relation: str = ""
    sources: list[str] = field(default_factory=list)  # keys of the hits that brought it in
    links: list[tuple[str, str]] = field(default_factory=list)  # (relation, hit key) pairs
    outline: tuple[int, ...] = ()  # a type's member start lines, for its outline
    forced_signature: bool = True
    reasons: list[str] = field(default_factory=list)
    semantic: float = 0.0
    lexical: float = 0.0
    centrality: float = 0.0
    history: float = 0.0  # how often its file changed lately, 0..1 (see ``_file_churn``)
    score: float = 0.0  # the order of the pack
    relevance: float = 0.0  # the score before the caps that keep search's order

    def relate(self, relation: str, proximity: float, reason: str, source: str = "") -> None:
        if source and source not in self.sources:
            self.sources.append(source)
        if source and (relation, source) not in self.links:
            self.links.append((relation, source))
        if proximity > self.proximity:
            self.proximity, self.relation = proximity, relation
        if relation != "enclosing":
            self.forced_signature = False
        if reason not in self.reasons:
            self.reasons.append(reason)


@dataclass(slots=True)
class Gathered:
    """Everything a pack is made from that the ranking weights do not change: the candidates
    with their features, the files they come from, and what search said."""

    query: str
    candidates: dict[str, Candidate]
    search: dict[str, Any]
    files: Files
    wanted: list[str]
    refused: int
    fill: list[Candidate] | None = None  # search's own results in its order, once read
    read_fill: Callable[[], list[Candidate]] | None = None  # a second search, read on demand

    def search_fill(self) -> list[Candidate]:
        """Search's own results that fill the budget a pack leaves: read when first asked
        for (most packs leave none, and the search is a tenth of a build's time)."""
        if self.fill is None:
            self.fill = self.read_fill() if self.read_fill is not None else []
        return self.fill


class ContextIndex(IndexedGraph, Protocol):
    """What a context build reads of an open index (:class:`knoxidx.Index`, a layer above):
    its graph, and its search for the seeds."""

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid",
               language: str | None = None, path_glob: str | None = None,
               source_weights: Mapping[str, float] | None = None,
               depth: int | None = None) -> dict[str, Any]: ...


def build_context(index: ContextIndex, query: Any, *, max_tokens: Any = DEFAULT_TOKENS,
                  weights: ContextWeights | None = None) -> dict[str, Any]:
    query, max_tokens = _validate(query, max_tokens)
    w = weights or ContextWeights()
    gathered = gather(index, query, w, fill_on_demand=True)
    return pack(gathered, rank(gathered, w), max_tokens, w)


def gather(index: ContextIndex, query: str, w: ContextWeights, *,
           fill_on_demand: bool = False) -> Gathered:
    """Seeds, their graph neighbours and each candidate's features (lexical, semantic,
    centrality, outline), and search's own results for the fill: the part of a build that
    reads the index (with ``fill_on_demand``, those results are read only when a pack has
    budget left for them, so the index must still be open then)."""
    counter = default_counter()
    disclosure = Disclosure.for_root(index.root)
    files = Files(index.root, counter, mask=disclosure.mask)
    facts_of = cache(index.store.load_facts)  # a file's facts, read once per build
    seeds, search_info = _seeds(index, query, w, disclosure)
    wanted = _wanted_terms(query)
    candidates = _expand(index, seeds, wanted, w)
    if w.sibling:
        _add_siblings(index, seeds, candidates, wanted, files, w, facts_of)
    if w.top_file_share and seeds:
        _add_top_file(seeds[0], candidates, files)
    if w.recent:
        _add_recent(index, candidates, wanted, w)
    if w.referenced:
        _add_referenced(index, query, candidates, wanted, w)
    if w.similar:
        _add_similar(index, query, candidates, wanted, w)
    refused = [key for key, cand in candidates.items() if not disclosure.allows(cand.path)]
    for key in refused:
        del candidates[key]
    _features(index, query, wanted, candidates, search_info, files, w)
    _outline(candidates, facts_of)
    _local_names(candidates.values(), facts_of)
    read_fill = partial(_search_fill, index, query, w, facts_of) if w.fill_search and seeds \
        and not search_info["fallback"] else None
    gathered = Gathered(query, candidates, search_info, files, wanted, len(refused),
                        read_fill=read_fill)
    if not fill_on_demand:
        gathered.search_fill()
    return gathered


def rank(gathered: Gathered, w: ContextWeights) -> list[Candidate]:
    """The candidates in pack order under the weights ``w`` (see :func:`_score`)."""
    candidates = _within_expansion(gathered.candidates, w)
    _score(gathered.query, candidates, w)
    return sorted(candidates.values(), key=lambda c: (
        -c.score, c.hit_rank if c.hit_rank is not None else 1 << 30, c.path, c.start, c.key))


def pack(gathered: Gathered, ranked: list[Candidate], max_tokens: int,
         w: ContextWeights) -> dict[str, Any]:
    files = gathered.files
    packer = Packer(files, files.counter, max_tokens, w, frozenset(gathered.wanted))
    packer.pack(ranked, (lambda: gathered.search_fill()[:w.fill_search])
                if w.fill_search else None)
    markdown = packer.render(ranked + (gathered.fill or [])[:w.fill_search])
    return {
        "query": gathered.query,
        "max_tokens": max_tokens,
        "tokens": packer.final_tokens,
        "tokenizer": files.counter.name,
        "markdown": markdown,
        "blocks": [b.describe() for b in packer.blocks],
        "items": [packer.describe(c, n) for n, c in enumerate(ranked, 1)],
        "left_out": [packer.describe(c, n) for n, c in packer.left_out],
        "search": gathered.search,
        "weights": asdict(w),
        "withheld": gathered.search["withheld"] + gathered.refused,
        "masked": dict(packer.masked()),
    }


def is_config_path(path: str) -> bool:
    """Whether ``path`` holds configuration rather than code (demoted like tests)."""
    return path.lower().endswith(_CONFIG_SUFFIXES)


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


def _seeds(index: ContextIndex, query: str, w: ContextWeights,
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
        cand = _candidate_for_result(index, result)
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
            cand = _node_candidate(node)
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


def _search_fill(index: ContextIndex, query: str, w: ContextWeights,
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
    _local_names(out, facts_of)
    return out


def _candidate_for_result(index: ContextIndex, result: dict[str, Any]) -> Candidate:
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


def _node_candidate(node: dict[str, Any]) -> Candidate:
    return Candidate(
        key=f"node:{node['id']}", path=node["path"], start=node["start_line"],
        end=node["end_line"], kind=node["kind"], name=node["qualified_name"],
        signature=node.get("signature") or "", language=node.get("language") or "",
        node_id=node["id"],
    )


def _named_definitions(index: ContextIndex, query: str, limit: int) -> list[dict[str, Any]]:
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


def _expand(index: ContextIndex, seeds: list[Candidate], wanted: list[str],
            w: ContextWeights) -> dict[str, Candidate]:
    q = index.q
    out = {c.key: c for c in seeds}
    for seed in seeds[: w.expand_hits]:
        if seed.node_id is None:
            continue
        strength = seed.proximity
        label = short_name(seed.name)
        relations = (
            ("callee", "out", ("Calls",), f"called by {label}"),
            ("caller", "in", ("Calls",), f"calls {label}"),
            ("type", "out", ("Uses", "Extends", "Implements"), f"used by {label}"),
        )
        for relation, direction, types, reason in relations:
            hits = traverse.walk(q, seed.node_id, direction, types, 1, limit=NEIGHBOURS_READ)
            ids = list(dict.fromkeys(h["id"] for h in hits))
            nodes = q.nodes_by_id(ids)
            found = [nodes[i] for i in ids if i in nodes and nodes[i]["path"]
                     and nodes[i]["kind"] in DEFINITION_KINDS]
            for node in best_named(found, wanted, w.per_relation):
                _add(out, _node_candidate(node), relation, strength * w.relation(relation),
                     reason, seed.key)
        full = q.nodes_by_id([seed.node_id]).get(seed.node_id)
        parent_id = full.get("parent_id") if full else None
        parent = q.nodes_by_id([parent_id]).get(parent_id) if parent_id else None
        if parent is not None and parent["kind"] in TYPE_KINDS and parent["path"]:
            _add(out, _node_candidate(parent), "enclosing", strength * w.enclosing,
                 f"encloses {label}", seed.key)
        imports = _import_block(index, seed.path)
        if imports is not None:
            _add(out, imports, "imports", strength * w.imports, f"the imports of {label}'s file",
                 seed.key)
    return out


def best_named(nodes: list[dict[str, Any]], wanted: list[str],
               limit: int) -> list[dict[str, Any]]:
    """The ``limit`` of ``nodes`` whose names and signatures share the most words with the
    question, in the graph's order among equals (a function with many callers: the one the
    question names is rarely among the first the graph lists)."""
    if len(nodes) <= limit:
        return nodes
    wanted_set = set(wanted)
    named = [len(wanted_set.intersection(unique_terms([n["qualified_name"],
                                                       n.get("signature") or ""])))
             for n in nodes]
    order = sorted(range(len(nodes)), key=lambda i: -named[i])
    return [nodes[i] for i in order[:limit]]


def _add_siblings(index: ContextIndex, seeds: list[Candidate], out: dict[str, Candidate],
                  wanted: list[str], files: Files, w: ContextWeights,
                  facts_of: Callable[[str], Any]) -> None:
    """The functions of the top hit's file that match the question best (a change request
    often touches a hit's neighbours in its file that the graph does not link to it)."""
    for seed in seeds[: w.sibling_hits]:
        facts = facts_of(seed.path)
        if facts is None:
            continue
        matching = []
        for d in facts.defs:
            if d.kind != "Function" or (seed.start <= d.start_line and d.end_line <= seed.end):
                continue
            probe = Candidate(key="", path=seed.path, start=d.start_line, end=d.end_line,
                              kind=d.kind, name=d.qualname)
            lexical = _lexical(wanted, probe, files)
            if lexical >= w.sibling_lexical:
                matching.append((-lexical, d.start_line, d.end_line))
        label = short_name(seed.name)
        for _, start, end in sorted(matching)[: w.siblings]:
            node = index.q.node_at(seed.path, start)
            if node is not None and node["start_line"] == start and node["end_line"] == end:
                _add(out, _node_candidate(node), "sibling", seed.proximity * w.sibling,
                     f"in {label}'s file", seed.key)


def _add_top_file(top: Candidate, out: dict[str, Candidate], files: Files) -> None:
    """The top hit's whole file as one candidate (packed only while it fits
    ``top_file_share`` of the budget: :mod:`.packing`)."""
    lines = files.lines(top.path)
    last = len(lines) - (lines[-1] == "")  # a final newline ends the last line, adds none
    if last > top.end - top.start + 1:
        _add(out, Candidate(key=f"file:{top.path}", path=top.path, start=1, end=last,
                            kind=FILE_KIND, name=top.path, language=top.language),
             "file", 0.0, "the top hit's file", top.key)


def _add_recent(index: ContextIndex, out: dict[str, Candidate], wanted: list[str],
                w: ContextWeights) -> None:
    """The functions the last ``recent_commits`` commits changed, the newest change first and,
    among one commit's, those whose names share most words with the question (names only: a
    sweeping commit's files are not read); none without a stored history."""
    changes = recent_changes(index.store, index.root, w.recent_commits,
                             w.recent_max_files or None)
    reason = f"changed in one of the last {w.recent_commits} commits"
    for node, _ in _changed_nodes(index, changes, wanted)[: w.recent_functions]:
        _add(out, _node_candidate(node), "recent", w.recent, reason, RECENT_SOURCE)


def _add_referenced(index: ContextIndex, query: str, out: dict[str, Candidate],
                    wanted: list[str], w: ContextWeights) -> None:
    """The functions changed by the commits the question names (by id, or by the number of a
    pull request or issue in their subject), in the same order as the recent ones."""
    changes, commits = referenced_changes(index.store, index.root, query)
    for node, seq in _changed_nodes(index, changes, wanted)[: w.referenced_functions]:
        commit = commits[seq]
        reason = f"changed by {commit['commit'][:10]} ({commit['subject'][:60]}), which the " \
            "question names"
        _add(out, _node_candidate(node), "referenced", w.referenced, reason, REFERENCED_SOURCE)


def _add_similar(index: ContextIndex, query: str, out: dict[str, Candidate],
                 wanted: list[str], w: ContextWeights) -> None:
    """The functions changed by the past commits whose subjects are most like the question,
    the best matching commit's first; none without a stored history."""
    tables = tables_of(index.store)
    if tables is None or tables.get("head") is None:
        return
    seqs = similar_commits(tables, query, w.similar_commits, w.similar_max_files or None)
    changes, commits = commit_changes(tables, index.root, seqs, best_first=True)
    place = {seq: n for n, seq in enumerate(seqs)}
    ordered = sorted(_changed_nodes(index, changes, wanted), key=lambda ns: place[ns[1]])
    for node, seq in ordered[: w.similar_functions]:
        commit = commits[seq]
        reason = f"changed by {commit['commit'][:10]} ({commit['subject'][:60]}), a past " \
            "commit like the question"
        _add(out, _node_candidate(node), "similar", w.similar, reason, SIMILAR_SOURCE)


def _changed_nodes(index: ContextIndex, changes: list[RecentChange],
                   wanted: list[str]) -> list[tuple[dict[str, Any], int]]:
    """The nodes of ``changes`` with the commit of each, the newest commit's first and, among
    one commit's, those whose names share the most words with the question."""
    nodes = index.q.nodes_by_id([c.node_id for c in changes]) if changes else {}
    wanted_set = set(wanted)
    ordered = []
    for change in changes:
        node = nodes.get(change.node_id)
        if node is None or not node["path"]:
            continue
        named = len(wanted_set.intersection(unique_terms([node["qualified_name"]])))
        ordered.append((-change.seq, -named, node["path"], node["start_line"], node))
    ordered.sort(key=lambda o: o[:4])
    return [(node, -seq) for seq, *_, node in ordered]


def _add(out: dict[str, Candidate], cand: Candidate, relation: str, proximity: float,
         reason: str, source: str) -> None:
    existing = out.setdefault(cand.key, cand)
    if existing.hit_rank is None:  # a hit keeps its own place
        existing.relate(relation, proximity, reason, source)
    else:
        existing.relate(relation, proximity, reason)


def _import_block(index: ContextIndex, path: str) -> Candidate | None:
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


def _wanted_terms(query: str) -> list[str]:
    return [t for t in unique_terms([query]) if len(t) > 1 and t not in _STOP]


def _features(index: ContextIndex, query: str, wanted: list[str],
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
        cand.lexical = _lexical(wanted, cand, files)
        cand.semantic = semantic.get(cand.key, 0.0)
        node_id = cand.node_id
        if node_id is None and cand.kind == "imports":
            file_node = index.q.file_node(cand.path)
            node_id = file_node["id"] if file_node else None
        cand.centrality = ranks.get(node_id, 0.0) if node_id is not None else 0.0


def _within_expansion(candidates: dict[str, Candidate],
                      w: ContextWeights) -> dict[str, Candidate]:
    """The hits, and the neighbours of the ``expand_hits`` best of them."""
    return {key: c for key, c in candidates.items() if c.hit_rank is not None or any(
        _counts(c, relation, candidates.get(source), w) for relation, source in c.links)}


def _counts(cand: Candidate, relation: str, source: Candidate | None,
            w: ContextWeights) -> bool:
    """Whether a link brings ``cand`` in under ``w``: from an expanded hit, and a sibling
    only while siblings are weighed and it matches the question well enough."""
    if relation == "sibling":
        return _expanded(source, w.sibling_hits) and w.sibling > 0 \
            and cand.lexical >= w.sibling_lexical
    if relation == "recent":
        return w.recent > 0 and cand.lexical >= w.recent_lexical
    if relation == "referenced":
        return w.referenced > 0
    if relation == "similar":
        return w.similar > 0
    if relation == "file":
        return w.top_file_share > 0 and _expanded(source, 1)
    return _expanded(source, w.expand_hits)


def _expanded(source: Candidate | None, hits: int) -> bool:
    return source is not None and source.hit_rank is not None and source.hit_rank < hits


def _hit_strength(cand: Candidate, w: ContextWeights) -> float:
    return 0.0 if cand.hit_rank is None else w.hit / (1 + w.hit_decay * cand.hit_rank)


def _proximity(cand: Candidate, candidates: dict[str, Candidate],
               w: ContextWeights) -> tuple[float, str]:
    """A hit's strength, or the strongest (hit's strength x relation weight) of its links."""
    best = (_hit_strength(cand, w), "hit" if cand.hit_rank is not None else "")
    for relation, key in cand.links:
        source = candidates.get(key)
        if relation == "recent" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.recent, relation))
        elif relation == "referenced" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.referenced, relation))
        elif relation == "similar" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.similar, relation))
        elif relation == "file" and source is not None and _counts(cand, relation, source, w):
            best = max(best, (_hit_strength(source, w), relation))
        elif source is not None and _counts(cand, relation, source, w):
            best = max(best, (_hit_strength(source, w) * w.relation(relation), relation))
    return best


def _score(query: str, candidates: dict[str, Candidate], w: ContextWeights) -> None:
    demote = not asks_about_tests(query)
    for cand in candidates.values():
        cand.proximity, cand.relation = _proximity(cand, candidates, w)
        cand.score = (w.semantic * cand.semantic + w.lexical * cand.lexical
                      + w.proximity * cand.proximity + w.centrality * cand.centrality
                      + w.history * cand.history)
        if demote and (is_test_path(cand.path) or is_config_path(cand.path)):
            cand.score *= w.demoted
        cand.relevance = cand.score
    # search's own order of its hits stands (it already weighs words, names, vectors and
    # priors, and reranks): a hit never outranks one search put before it
    hits = sorted((c for c in candidates.values() if c.hit_rank is not None),
                  key=lambda c: c.hit_rank or 0)
    ceiling = float("inf")
    for cand in hits if w.search_order else ():
        cand.score = ceiling = min(cand.score, ceiling)
    hits.sort(key=lambda c: -c.score)
    # a graph neighbour never outranks the hits that brought it in, nor the next
    # ``neighbour_lag`` hits after them (a central class would otherwise lead the pack, and
    # small callees crowd out the hits that a small budget has room for); it takes the
    # score of the last of them, so it also follows the later hits tied with that one
    # (placed right after it instead: jsoup -3 gold @4k with embeddings, BENCHMARKS)
    # and a recently changed function ranks below the first ``recent_lag`` hits
    for cand in candidates.values():
        if cand.hit_rank is not None or not hits:
            continue
        lags = [(candidates[key].hit_rank or 0) + w.neighbour_lag
                for relation, key in cand.links
                if key in candidates and _counts(cand, relation, candidates[key], w)]
        if any(relation == "recent" and _counts(cand, relation, None, w)
               for relation, _ in cand.links):
            lags.append(w.recent_lag)
        if any(relation == "similar" and _counts(cand, relation, None, w)
               for relation, _ in cand.links):
            lags.append(w.similar_lag)
        if lags:
            cand.score = min(cand.score, max(hits[min(lag, len(hits) - 1)].score
                                             for lag in lags))
    # what a commit the question names changed: right after the top hit, never above it
    for cand in candidates.values():
        if cand.hit_rank is None and hits and any(
                relation == "referenced" and _counts(cand, relation, None, w)
                for relation, _ in cand.links):
            cand.score = hits[0].score
    # the top hit's file is not held back by the lag: it is shown whole only while small (the
    # packer's call), and then as good as the top hit's neighbourhood; never above the top hit
    for cand in candidates.values():
        top = candidates.get(cand.sources[0]) if cand.kind == FILE_KIND and cand.sources \
            else None
        if top is not None:
            cand.score = min(cand.relevance, top.score)


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


def _local_names(candidates: Iterable[Candidate], facts_of: Callable[[str], Any]) -> None:
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


def _outline(candidates: dict[str, Candidate], facts_of: Callable[[str], Any]) -> None:
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


def _lexical(wanted: list[str], cand: Candidate, files: Files) -> float:
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


def _semantic_scores(index: ContextIndex, query: str, candidates: dict[str, Candidate]) -> dict[str, float]:
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
