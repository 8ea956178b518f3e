"""What a context build is made of: its weights, its candidates (a definition, a range, a file
or an import block that may go into the pack) and what it reads of an open index."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from knoxidx.graph.protocol import IndexedGraph

DEFINITION_KINDS = ("Function", "Class", "Interface", "Type", "Constant", "Variable")


@dataclass(frozen=True, slots=True)
class ContextWeights:
    """Every knob of ranking and packing, in one place."""

    semantic: float = 0.30
    # the share of the question's words a candidate holds: weighed above the vectors' cosine,
    # which a change request's few words make a weak signal (fitted on three histories)
    lexical: float = 1.0
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
    sibling_lexical: float = 0.1  # the least lexical match for a sibling to be taken
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


class ContextIndex(IndexedGraph, Protocol):
    """What a context build reads of an open index (:class:`knoxidx.Index`, a layer above):
    its graph, and its search for the seeds."""

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid",
               language: str | None = None, path_glob: str | None = None,
               source_weights: Mapping[str, float] | None = None,
               depth: int | None = None) -> dict[str, Any]: ...


def node_candidate(node: dict[str, Any]) -> Candidate:
    return Candidate(
        key=f"node:{node['id']}", path=node["path"], start=node["start_line"],
        end=node["end_line"], kind=node["kind"], name=node["qualified_name"],
        signature=node.get("signature") or "", language=node.get("language") or "",
        node_id=node["id"],
    )
