"""Score search variants on saved rankings, without re-indexing or re-embedding.

    python -m bench.retrieval_eval.variants [LANG ...]

Reads ``raw.json`` (each source's own top 50 per query) and the index that
``python -m bench.retrieval_eval`` left in ``bench/.cache/retrieval_eval/<lang>/repo``, then
re-fuses the sources with other weights, narrows results to definitions in different ways
and tries the offline graph-aware reranks; prints Recall@10 / MRR@10 per variant and language.
Used to decide what the product does; the product's own numbers come from the main run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from bench.retrieval_eval.metrics import Span, score
from bench.retrieval_eval.run import CORPORA, eval_root
from knoxidx.index import Index
from knoxidx.retrieval.hybrid_search import best_line
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.terms import content_terms, identifier_parts, line_terms

CODE_KINDS = frozenset({"Function", "Class", "Interface", "Type"})
Fuser = Callable[[dict[str, list[int]]], list[int]]


def rrf(weights: dict[str, float], k: int = 60) -> Fuser:
    def fuse(sources: dict[str, list[int]]) -> list[int]:
        totals: dict[int, float] = {}
        for name, ids in sources.items():
            w = weights.get(name, 0.0)
            for rank, i in enumerate(ids, start=1):
                totals[i] = totals.get(i, 0.0) + w / (k + rank)
        return [i for i, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]

    return fuse


def _with_identifier_symbols(fuse: Fuser) -> Fuser:
    fuse.identifier_symbols = True  # type: ignore[attr-defined]
    return fuse


class LanguageData:
    def __init__(self, language: str) -> None:
        work = eval_root() / language
        raw = json.loads((work / "raw.json").read_text())
        self.language = language
        self.queries: list[dict[str, list[int]]] = raw["queries"]
        self.targets = [Span(t["path"], t["start_line"], t["end_line"]) for t in raw["targets"]]
        self.texts = [t["query"] for t in raw["targets"]]
        self.index = Index.open(work / "repo")
        self.store = ChunkStore(self.index.store.conn)
        ids = sorted({i for q in self.queries for ids in q.values() for i in ids})
        self.chunks = self.store.get(ids)
        self._defs: dict[str, list[Any]] = {}
        self._df: dict[str, int] | None = None
        self._symbols: list[list[int]] | None = None

    def centrality(self, path: str, line: int) -> float:
        """PageRank of the definition starting at ``line`` (0..1, as ``knoxidx context`` has it)."""
        if not hasattr(self, "_centrality"):
            from knoxidx.answers.centrality import centrality_scores
            from knoxidx.answers.context import ContextWeights

            self._centrality = centrality_scores(self.index, ContextWeights().centrality_edges)
        node = self.index.q.node_at(path, line)
        return self._centrality.get(node["id"], 0.0) if node else 0.0

    def df(self) -> dict[str, int]:
        """In how many chunks each term occurs (for IDF weights)."""
        if self._df is None:
            from knoxidx.retrieval.lexical_rows import ChunkFilter

            counts: dict[str, int] = {}
            all_ids = self.store.chunk_ids(ChunkFilter())
            for stored in self.store.get(all_ids).values():
                for term in line_terms(stored.chunk.text):
                    counts[term] = counts.get(term, 0) + 1
            self._df = counts
            self.n_chunks = len(all_ids)
        return self._df

    def identifier_symbols(self) -> list[list[int]]:
        """Symbol hits when only identifier-shaped words of a query (snake_case, camelCase,
        dotted) or a one-word query are looked up as names."""
        if self._symbols is None:
            from knoxidx.retrieval.searcher import Searcher

            searcher = Searcher(self.index)
            self._symbols = []
            for text in self.texts:
                names = [w for w in text.replace("(", " ").replace(")", " ").split()
                         if _identifier_shaped(w.strip(".,;:'\"`"))]
                ids: list[int] = []
                if names:
                    for hit in searcher.graph_symbols(" ".join(names), 50):
                        for i in self.store.chunks_at(hit.path, hit.line)[:1]:
                            if i not in ids:
                                ids.append(i)
                self._symbols.append(ids)
            extra = sorted({i for ids in self._symbols for i in ids} - set(self.chunks))
            self.chunks.update(self.store.get(extra))
        return self._symbols

    def all_defs(self, path: str) -> list[Any]:
        """Every stored definition of ``path`` (the product filters kinds itself)."""
        key = "all:" + path
        if key not in self._defs:
            facts = self.index.store.load_facts(path)
            self._defs[key] = list(facts.defs) if facts else []
        return self._defs[key]

    def defs(self, path: str) -> list[Any]:
        if path not in self._defs:
            facts = self.index.store.load_facts(path)
            self._defs[path] = [d for d in facts.defs if d.kind in CODE_KINDS] if facts else []
        return self._defs[path]


def _identifier_shaped(word: str) -> bool:
    import re

    return bool(re.fullmatch(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*", word)) and (
        "_" in word or "." in word or "::" in word or any(c.isupper() for c in word[1:])
    )


Narrower = Callable[[LanguageData, int, str], Span]


def chunk_span(data: LanguageData, chunk_id: int, query: str) -> Span:
    c = data.chunks[chunk_id].chunk
    return Span(c.path, c.start_line, c.end_line)


def _inside(data: LanguageData, chunk_id: int) -> list[Any]:
    c = data.chunks[chunk_id].chunk
    return [d for d in data.defs(c.path) if c.start_line <= d.start_line and d.end_line <= c.end_line]


def best_line_def(data: LanguageData, chunk_id: int, query: str) -> Span:
    """The innermost definition around the line sharing most words with the query."""
    c = data.chunks[chunk_id].chunk
    inside = _inside(data, chunk_id)
    if len(inside) < 2:
        return chunk_span(data, chunk_id, query)
    line = c.start_line + best_line(c.text, query)
    around = [d for d in inside if d.start_line <= line <= d.end_line]
    if not around:
        return chunk_span(data, chunk_id, query)
    d = min(around, key=lambda d: d.end_line - d.start_line)
    return Span(c.path, d.start_line, d.end_line)


def best_term_def(data: LanguageData, chunk_id: int, query: str) -> Span:
    """The definition (of several in the chunk) whose own lines share most distinct query
    words, name words counting double; the chunk if none shares any."""
    c = data.chunks[chunk_id].chunk
    inside = _inside(data, chunk_id)
    if len(inside) < 2:
        return chunk_span(data, chunk_id, query)
    wanted = set(content_terms(query))
    lines = c.text.split("\n")
    best, best_score = None, 0.0
    for d in inside:
        if any(o is not d and d.start_line <= o.start_line and o.end_line <= d.end_line
               for o in inside):
            continue  # a container: its members compete instead
        words: set[str] = set()
        for line in lines[d.start_line - c.start_line : d.end_line - c.start_line + 1]:
            words |= line_terms(line)
        name = set(identifier_parts(d.name))
        s = len(wanted & words) + len(wanted & name)
        if s > best_score:
            best, best_score = d, s
    if best is None:
        return chunk_span(data, chunk_id, query)
    return Span(c.path, best.start_line, best.end_line)


def best_idf_def(data: LanguageData, chunk_id: int, query: str) -> Span:
    """As ``best_term_def`` with each shared word weighted by its IDF over the chunks."""
    import math

    c = data.chunks[chunk_id].chunk
    inside = _inside(data, chunk_id)
    if len(inside) < 2:
        return chunk_span(data, chunk_id, query)
    df = data.df()
    wanted = set(content_terms(query))
    idf = {w: math.log(1 + data.n_chunks / (1 + df.get(w, 0))) for w in wanted}
    lines = c.text.split("\n")
    best, best_score = None, 0.0
    for d in inside:
        if any(o is not d and d.start_line <= o.start_line and o.end_line <= d.end_line
               for o in inside):
            continue
        words: set[str] = set()
        for line in lines[d.start_line - c.start_line : d.end_line - c.start_line + 1]:
            words |= line_terms(line)
        name = set(identifier_parts(d.name)) | {d.name.lower()}
        s = sum(idf[w] for w in wanted & words) + sum(idf[w] for w in wanted & name)
        if s > best_score:
            best, best_score = d, s
    if best is None:
        return chunk_span(data, chunk_id, query)
    return Span(c.path, best.start_line, best.end_line)


def evaluate(data: LanguageData, fuse: Fuser, narrow: Narrower) -> tuple[float, float]:
    rankings = []
    symbols = data.identifier_symbols() if getattr(fuse, "identifier_symbols", False) else None
    for n, (q, text) in enumerate(zip(data.queries, data.texts, strict=True)):
        if symbols is not None:
            q = {**q, "symbol": symbols[n]}
        order = fuse(q)[:10]
        rankings.append([narrow(data, i, text) for i in order if i in data.chunks])
    s = score(rankings, data.targets)
    return s.recall, s.mrr


def main(argv: Sequence[str]) -> None:
    argv = list(argv)
    rerank_only = "--rerank" in argv
    argv = [a for a in argv if a != "--rerank"]
    langs = list(argv) or [lang for lang in CORPORA if (eval_root() / lang / "raw.json").exists()]
    datas = [LanguageData(lang) for lang in langs]
    if rerank_only:
        rerank_table(datas)
        return
    fusers: dict[str, Fuser] = {
        "lexical+symbol": rrf({"lexical": 1, "symbol": 1}),
        "vector": rrf({"vector": 1}),
        "rrf60 equal": rrf({"lexical": 1, "vector": 1, "symbol": 1}),
        "rrf60 vec x2": rrf({"lexical": 1, "vector": 2, "symbol": 1}),
        "rrf60 vec x1.5": rrf({"lexical": 1, "vector": 1.5, "symbol": 1}),
        "rrf20 equal": rrf({"lexical": 1, "vector": 1, "symbol": 1}, 20),
        "rrf10 equal": rrf({"lexical": 1, "vector": 1, "symbol": 1}, 10),
        "rrf60 no symbol": rrf({"lexical": 1, "vector": 1}),
        "rrf60 identifier symbols": _with_identifier_symbols(
            rrf({"lexical": 1, "vector": 1, "symbol": 1})),
        "rrf20 no symbol": rrf({"lexical": 1, "vector": 1}, 20),
        "rrf60 no symbol vec x1.5": rrf({"lexical": 1, "vector": 1.5}),
    }
    narrowers: dict[str, Narrower] = {
        "chunk": chunk_span, "line-def": best_line_def, "term-def": best_term_def,
        "idf-def": best_idf_def,
    }
    print("variant | " + " | ".join(d.language for d in datas) + " | mean")
    for fname, fuse in fusers.items():
        for nname, narrow in narrowers.items():
            cells = [evaluate(d, fuse, narrow) for d in datas]
            mean_r = sum(c[0] for c in cells) / len(cells)
            mean_m = sum(c[1] for c in cells) / len(cells)
            print(f"{fname} / {nname} | " + " | ".join(f"{r:.2f}/{m:.2f}" for r, m in cells)
                  + f" | {mean_r:.3f}/{mean_m:.3f}", flush=True)



# ---- definition-level reranking -----------------------------------------------------------


def leaf_definitions(data: LanguageData, chunk_id: int) -> list[Any]:
    """The definitions wholly inside a chunk, containers dropped in favour of their members."""
    inside = _inside(data, chunk_id)
    return [d for d in inside
            if not any(o is not d and d.start_line <= o.start_line and o.end_line <= d.end_line
                       for o in inside)]


def definition_rerank(
    data: LanguageData, sources: dict[str, list[int]], query: str, fuse: Fuser, *,
    depth: int = 20, term_weight: float = 1.0, name_weight: float = 1.0, rank_k: float = 10.0,
    use_idf: bool = True, centrality_weight: float = 0.0,
) -> list[Span]:
    """Results at definition level: the definitions of the top ``depth`` fused chunks (a chunk
    of one definition, or part of one, stands for itself), scored by the chunk's rank plus the
    IDF-weighted share of query words in the definition's lines and in its name."""
    import math

    df = data.df()
    wanted = set(content_terms(query))
    idf = {w: math.log(1 + data.n_chunks / (1 + df.get(w, 0))) if use_idf else 1.0
           for w in wanted}
    total = sum(idf.values()) or 1.0
    scored: dict[Span, float] = {}
    for rank, chunk_id in enumerate([i for i in fuse(sources) if i in data.chunks][:depth]):
        c = data.chunks[chunk_id].chunk
        leaves = leaf_definitions(data, chunk_id)
        lines = c.text.split("\n")
        units = ([(d.start_line, d.end_line, d.name) for d in leaves] if len(leaves) >= 2
                 else [(c.start_line, c.end_line, c.symbol.rsplit(".", 1)[-1])])
        base = 1.0 / (rank_k + rank + 1) * (rank_k + 1)  # 1 for the first chunk
        for start, end, name in units:
            words: set[str] = set()
            for line in lines[start - c.start_line : end - c.start_line + 1]:
                words |= line_terms(line)
            names = set(identifier_parts(name)) | {name.lower()}
            s = (base + term_weight * sum(idf[w] for w in wanted & words) / total
                 + name_weight * sum(idf[w] for w in wanted & names) / total)
            if centrality_weight:
                s += centrality_weight * data.centrality(c.path, start)
            span = Span(c.path, start, end)
            scored[span] = max(scored.get(span, 0.0), s)
    return [span for span, _ in sorted(scored.items(), key=lambda kv: -kv[1])][:10]


GRID = [(1.0, 1.0, 10.0, True, 0.0), (1.0, 1.0, 10.0, True, 0.1),
        (1.0, 1.0, 10.0, True, 0.3)]


def rerank_table(datas: list[LanguageData]) -> None:
    fusers = {"rrf20": rrf({"lexical": 1, "vector": 1, "symbol": 1}, 20),
              "rrf20 vec1.5": rrf({"lexical": 1, "vector": 1.5, "symbol": 1}, 20),
              "rrf20 vec0.7": rrf({"lexical": 1, "vector": 0.7, "symbol": 1}, 20),
              "rrf20 sym0.5": rrf({"lexical": 1, "vector": 1, "symbol": 0.5}, 20)}
    for fname, fuse in fusers.items():
        for depth in (20,):
            for tw, nw, rk, ui, cw in GRID:
                cells = []
                for d in datas:
                    symbols = d.identifier_symbols()
                    rankings = [
                        definition_rerank(d, {**q, "symbol": symbols[n]}, text, fuse,
                                          depth=depth, term_weight=tw, name_weight=nw,
                                          rank_k=rk, use_idf=ui, centrality_weight=cw)
                        for n, (q, text) in enumerate(zip(d.queries, d.texts, strict=True))
                    ]
                    s = score(rankings, d.targets)
                    cells.append((s.recall, s.mrr))
                mean_r = sum(c[0] for c in cells) / len(cells)
                mean_m = sum(c[1] for c in cells) / len(cells)
                print(f"defrank {fname} depth{depth} t{tw} n{nw} k{rk} idf{ui} c{cw} | "
                      + " | ".join(f"{r:.2f}/{m:.2f}" for r, m in cells)
                      + f" | {mean_r:.3f}/{mean_m:.3f}", flush=True)


# ---- the product's own rerank and narrowing, with other weights ----------------------------


def product_rankings(
    data: LanguageData, fuse: Fuser, weights: Any, *, mode: str = "hybrid"
) -> list[list[Span]]:
    """Rankings made by ``knoxidx.retrieval.rerank`` itself (what ``Index.search`` runs) over
    the saved sources fused by ``fuse``: the definition rerank for ``hybrid``, each chunk
    narrowed to its best unit otherwise."""
    symbols = data.identifier_symbols()
    return [
        reranked_spans(data, [i for i in fuse({**q, "symbol": symbols[n]}) if i in data.chunks],
                       text, weights, mode)
        for n, (q, text) in enumerate(zip(data.queries, data.texts, strict=True))
    ]


def reranked_spans(data: LanguageData, order: list[int], text: str, weights: Any, mode: str,
                   similarity: dict[int, float] | None = None) -> list[Span]:
    """The top 10 of one fused ``order`` after the product's definition rerank (``hybrid``)
    or each chunk narrowed to its best unit (other modes), as result spans."""
    from knoxidx.retrieval.priors import path_prior
    from knoxidx.retrieval.query_words import QueryWords
    from knoxidx.retrieval.rerank import narrow, rerank_definitions

    words = QueryWords(text, *data.store.document_frequencies(content_terms(text)),
                       stems=weights.stems)
    chunks = {i: data.chunks[i].chunk for i in order[: max(weights.depth, 10)]}
    if mode == "hybrid":
        units = rerank_definitions(order, chunks, data.all_defs, words, weights,
                                   similarity=similarity, path_factor=path_prior(text))[:10]
    else:
        units = [narrow(i, chunks[i], data.all_defs(chunks[i].path), words, weights)
                 for i in order[:10]]
    return [Span(data.chunks[u.chunk_id].chunk.path, u.start_line, u.end_line) for u in units]


def product_table(datas: list[LanguageData]) -> None:
    from dataclasses import replace

    from knoxidx.retrieval.rerank_weights import RerankWeights

    base = RerankWeights()
    single = {"lexical": {"lexical": 1.0}, "vector": {"vector": 1.0}}
    variants: list[tuple[str, str, Fuser, Any]] = []
    for whole in (0, 30, 50, 80):
        w = replace(base, whole_lines=whole)
        variants.append((f"hybrid rrf20 whole<={whole}", "hybrid",
                         rrf({"lexical": 1, "vector": 1, "symbol": 1}, 20), w))
        for name, weights in single.items():
            variants.append((f"{name} whole<={whole}", name, rrf(weights, 20), w))
    w50 = replace(base, whole_lines=50)
    for label, fw in (("vec x1.5", {"lexical": 1, "vector": 1.5, "symbol": 1}),
                      ("vec x2", {"lexical": 1, "vector": 2, "symbol": 1}),
                      ("sym x0.5", {"lexical": 1, "vector": 1, "symbol": 0.5})):
        variants.append((f"hybrid rrf20 {label} whole<=50", "hybrid", rrf(fw, 20), w50))
    for depth in (10, 30):
        variants.append((f"hybrid rrf20 whole<=50 depth {depth}", "hybrid",
                         rrf({"lexical": 1, "vector": 1, "symbol": 1}, 20),
                         replace(w50, depth=depth)))
    for lines_w, name_w in ((0.5, 1.0), (1.0, 0.5), (0.5, 0.5)):
        variants.append((f"hybrid rrf20 whole<=50 lines {lines_w} name {name_w}", "hybrid",
                         rrf({"lexical": 1, "vector": 1, "symbol": 1}, 20),
                         replace(w50, lines=lines_w, name=name_w)))
    for label, fw in (("equal", {"lexical": 1, "vector": 1, "symbol": 1}),
                      ("vec x2", {"lexical": 1, "vector": 2, "symbol": 1})):
        variants.append((f"hybrid-narrow rrf20 {label} whole<=50", "narrow", rrf(fw, 20), w50))
        variants.append((f"hybrid rrf20 {label} whole<=50 no word scores", "hybrid", rrf(fw, 20),
                         replace(w50, lines=0.0, name=0.0)))
        variants.append((f"hybrid rrf20 {label} whole<=50 rank_k 3", "hybrid", rrf(fw, 20),
                         replace(w50, rank_k=3.0)))
        variants.append((f"hybrid rrf20 {label} whole<=50 rank_k 3 depth 10", "hybrid",
                         rrf(fw, 20), replace(w50, rank_k=3.0, depth=10)))
    for margin in (1.5, 2.0, 3.0, float("inf")):  # (whole_lines 50)
        for label, fw in (("equal", {"lexical": 1, "vector": 1, "symbol": 1}),
                          ("vec x2", {"lexical": 1, "vector": 2, "symbol": 1})):
            variants.append((f"hybrid rrf20 {label} whole<=50 margin {margin}", "hybrid",
                             rrf(fw, 20), replace(w50, narrow_margin=margin)))
            if label == "equal":
                variants.append((f"vector whole<=50 margin {margin}", "vector",
                                 rrf({"vector": 1}, 20), replace(w50, narrow_margin=margin)))
                variants.append((f"lexical whole<=50 margin {margin}", "lexical",
                                 rrf({"lexical": 1}, 20), replace(w50, narrow_margin=margin)))
    if "--margins" in sys.argv:
        variants = variants[-16:]
    print("product variant | " + " | ".join(d.language for d in datas) + " | mean")
    for label, mode, fuse, weights in variants:
        cells = []
        for d in datas:
            s = score(product_rankings(d, fuse, weights, mode=mode), d.targets)
            cells.append((s.recall, s.mrr))
        print_row(label, cells)


def print_row(label: str, cells: list[tuple[float, float]]) -> None:
    """One table row: R@10 / MRR@10 per language, then their means."""
    mean_r = sum(c[0] for c in cells) / len(cells)
    mean_m = sum(c[1] for c in cells) / len(cells)
    print(f"{label} | " + " | ".join(f"{r:.2f}/{m:.2f}" for r, m in cells)
          + f" | {mean_r:.3f}/{mean_m:.3f}", flush=True)


if __name__ == "__main__":
    if "--product" in sys.argv:
        langs = [a for a in sys.argv[1:] if not a.startswith("--")]
        product_table([LanguageData(lang) for lang in langs or
                       [lang for lang in CORPORA if (eval_root() / lang / "raw.json").exists()]])
    else:
        main(sys.argv[1:])
