"""The context builder: the code an agent should read for a question, packed into a token
budget.

1. **Seeds** (:mod:`.context_seeds`): hybrid search hits (``search_k`` of the definitions of
   ``search_depth`` fused chunks), its vector sources weighed at ``vector_fusion`` (or, when
   search finds nothing, definitions the query names). A hit inside one definition stands for
   it (with the comments above it, or the blank line below its last chunk); a chunk holding
   several small definitions stands for its own lines.
2. **Expansion** (:mod:`.context_neighbours`) through the graph, for the best hits: the
   definitions they call, their callers, the types and constants they use (of many, those
   named most like the question), their enclosing class, and the import block of their file;
   and the top hit's siblings, the functions of its file matching the question, and that whole
   file (packed only while it takes at most ``top_file_share`` of the budget); and, from the
   index's git history, the functions the last commits changed (ranked below the first
   ``recent_lag`` hits: they fill the room the hits leave), and those the commits the question
   names changed (by id, or by the number of a pull request in their subject: ranked right
   after the top hit).
3. **Ranking** (:mod:`.context_ranking`) of every candidate by four factors (read in
   :mod:`.context_features`), weighted in :class:`ContextWeights` (:mod:`.context_candidates`):
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

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cache, partial
from typing import Any

from knoxidx.answers.budget import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS
from knoxidx.answers.context_candidates import Candidate, ContextIndex, ContextWeights
from knoxidx.answers.context_features import (
    set_features,
    set_local_names,
    set_outlines,
    wanted_terms,
)
from knoxidx.answers.context_neighbours import (
    add_recent,
    add_referenced,
    add_siblings,
    add_similar,
    add_top_file,
    graph_neighbours,
)
from knoxidx.answers.context_ranking import score_candidates, within_expansion
from knoxidx.answers.context_seeds import read_search_fill, search_seeds
from knoxidx.answers.pack_files import Files
from knoxidx.answers.packing import Packer
from knoxidx.core.limits import MAX_QUERY_CHARS
from knoxidx.retrieval.disclosure import Disclosure
from knoxidx.retrieval.errors import SearchInputError
from knoxidx.retrieval.tokens import default_counter


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
    seeds, search_info = search_seeds(index, query, w, disclosure)
    wanted = wanted_terms(query)
    candidates = graph_neighbours(index, seeds, wanted, w)
    if w.sibling:
        add_siblings(index, seeds, candidates, wanted, files, w, facts_of)
    if w.top_file_share and seeds:
        add_top_file(seeds[0], candidates, files)
    if w.recent:
        add_recent(index, candidates, wanted, w)
    if w.referenced:
        add_referenced(index, query, candidates, wanted, w)
    if w.similar:
        add_similar(index, query, candidates, wanted, w)
    refused = [key for key, cand in candidates.items() if not disclosure.allows(cand.path)]
    for key in refused:
        del candidates[key]
    set_features(index, query, wanted, candidates, search_info, files, w)
    set_outlines(candidates, facts_of)
    set_local_names(candidates.values(), facts_of)
    read_fill = partial(read_search_fill, index, query, w, facts_of) if w.fill_search and seeds \
        and not search_info["fallback"] else None
    gathered = Gathered(query, candidates, search_info, files, wanted, len(refused),
                        read_fill=read_fill)
    if not fill_on_demand:
        gathered.search_fill()
    return gathered


def rank(gathered: Gathered, w: ContextWeights) -> list[Candidate]:
    """The candidates in pack order under the weights ``w`` (see :func:`score_candidates`)."""
    candidates = within_expansion(gathered.candidates, w)
    score_candidates(gathered.query, candidates, w)
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
