"""Score-aware fusion and rerank variants on the saved rankings, without re-embedding documents.

    python -m bench.retrieval_eval.scores [--stems | --grid | --queries | --names] [LANG ...]

``bench.retrieval_eval.variants`` re-fuses the saved per-source rankings by rank only. This
module also has each candidate's *scores*: the cosine of the query's vector with every stored
chunk vector (the queries are embedded again, ~100 per language; the documents are not), so
it can score (1) query-side variants of the vector source, and (2) the product's definition
rerank with the chunk's cosine added as a feature (``RerankWeights.similarity``). Everything
else is the product's own code (``knoxidx.retrieval.rerank``). Prints Recall@10 / MRR@10 per
variant and language, and their mean.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from bench.retrieval_eval.metrics import Span, score
from bench.retrieval_eval.run import CORPORA, eval_root
from bench.retrieval_eval.variants import LanguageData, print_row, reranked_spans, rrf
from knoxidx.retrieval.terms import content_terms, readable_identifiers

QueryView = Callable[[str], str]


class ScoredLanguage:
    """A language's saved task plus the stored vectors of its index."""

    def __init__(self, language: str) -> None:
        import numpy as np

        from knoxidx.retrieval.backends import LocalEmbedder
        from knoxidx.retrieval.vectors import from_blobs

        self.data = LanguageData(language)
        self.embedder = LocalEmbedder()
        ids, blobs = self.data.store.all_vectors()
        self.ids = np.asarray(ids, dtype=np.int64)
        self.matrix = from_blobs(blobs, self.embedder.dimension)
        self.row = {int(i): n for n, i in enumerate(ids)}
        self._cos: dict[str, list[Any]] = {}

    def cosines(self, view_name: str, view: QueryView) -> list[Any]:
        """Per query: the cosine with every stored chunk (a row over ``self.ids``)."""
        if view_name not in self._cos:
            texts = [view(t) for t in self.data.texts]
            queries = self.embedder.query_model().encode(texts)
            self._cos[view_name] = list(queries @ self.matrix.T)
        return self._cos[view_name]

    def names(self, n: int) -> list[int]:
        """Query ``n``'s names source, from the index (runs before it was saved: computed)."""
        saved = self.data.queries[n].get("names")
        if saved is None:
            from knoxidx.retrieval.hybrid_search import HybridSearch

            saved = [i for i, _ in HybridSearch(self.data.store).names(self.data.texts[n])]
            self.data.queries[n]["names"] = saved
            missing = [i for i in saved if i not in self.data.chunks]
            self.data.chunks.update(self.data.store.get(missing))
        return saved

    def vector_ranking(self, cos: Any, n: int = 50) -> list[int]:
        import numpy as np

        top = np.argsort(-cos, kind="stable")[:n]
        return [int(self.ids[i]) for i in top]


def current_view(text: str) -> str:
    return f"{text}\n{readable_identifiers(text)}"


QUERY_VIEWS: dict[str, QueryView] = {
    "current (text + identifier words)": current_view,
    "raw text": lambda text: text,
    "content words": lambda text: " ".join(content_terms(text)),
    # the condensed-v2 documents begin "function <name words> in <holder words>"
    "'function' + text + identifier words": lambda text: "function " + current_view(text),
}


def rankings(
    lang: ScoredLanguage, view: str, fuse_weights: dict[str, float], rrf_k: int, weights: Any,
    mode: str,
) -> list[list[Span]]:
    """The product's rerank (hybrid) or narrowing (vector) over the saved lexical and symbol
    rankings and a vector ranking recomputed with query ``view``."""
    data = lang.data
    symbols = data.identifier_symbols()
    cos_rows = lang.cosines(view, QUERY_VIEWS[view])
    fuse = rrf(fuse_weights, rrf_k)
    out = []
    for n, (saved, text) in enumerate(zip(data.queries, data.texts, strict=True)):
        cos = cos_rows[n]
        vector = lang.vector_ranking(cos)
        missing = [i for i in vector if i not in data.chunks]
        if missing:
            data.chunks.update(data.store.get(missing))
        sources = {"lexical": saved["lexical"], "vector": vector, "symbol": symbols[n],
                   "names": lang.names(n)}
        order = [i for i in fuse(sources) if i in data.chunks]
        chunks = order[: max(weights.depth, 10)]
        similarity = {i: float(cos[lang.row[i]]) for i in chunks if i in lang.row}
        out.append(reranked_spans(data, order, text, weights, mode, similarity))
    return out


def names_variants(base: Any, equal: dict[str, float], current: str) -> list[tuple]:
    """The rerank's weights again, with the names source in the fusion."""
    lexical = {"lexical": 1.0, "symbol": 1.0, "names": 1.0}
    variants = [("hybrid", current, equal, 20, base, "hybrid"),
                ("lexical (lexical + symbol + names)", current, lexical, 20, base, "vector"),
                ("fused, each chunk narrowed (no rerank)", current, equal, 20, base,
                 "vector")]
    for rank_k in (3.0, 5.0, 20.0):
        variants.append((f"hybrid, rank_k {rank_k}", current, equal, 20,
                         replace(base, rank_k=rank_k), "hybrid"))
    for w in (0.5, 1.5):
        variants.append((f"hybrid, names x{w}", current, {**equal, "names": w}, 20, base,
                         "hybrid"))
    variants.append(("hybrid, vector x1.5", current, {**equal, "vector": 1.5}, 20, base,
                     "hybrid"))
    for lines_w, name_w in ((1.0, 0.5), (1.0, 1.5), (0.5, 1.0)):
        variants.append((f"hybrid, lines {lines_w} name {name_w}", current, equal, 20,
                         replace(base, lines=lines_w, name=name_w), "hybrid"))
    for sim in (0.5, 1.5):
        variants.append((f"hybrid, cosine x{sim}", current, equal, 20,
                         replace(base, similarity=sim), "hybrid"))
    for depth in (10, 30):
        variants.append((f"hybrid, depth {depth}", current, equal, 20,
                         replace(base, depth=depth), "hybrid"))
    return variants


def table(langs: Sequence[ScoredLanguage]) -> None:
    from knoxidx.retrieval.rerank_weights import RerankWeights

    base = RerankWeights()
    equal = {"lexical": 1.0, "vector": 1.0, "symbol": 1.0, "names": 1.0}
    current = "current (text + identifier words)"
    variants: list[tuple[str, str, dict[str, float], int, Any, str]] = []
    if "--stems" in sys.argv:
        variants.append(("hybrid", current, equal, 20, base, "hybrid"))
        variants.append(("lexical", current, {"lexical": 1.0}, 20, base, "vector"))
        variants.append(("lexical, stems (narrowing only)", current, {"lexical": 1.0}, 20,
                         replace(base, stems=True), "vector"))
        variants.append(("hybrid, stems", current, equal, 20, replace(base, stems=True),
                         "hybrid"))
        for sim in (0.5, 1.0):
            variants.append((f"hybrid, stems + cosine x{sim}", current, equal, 20,
                             replace(base, stems=True, similarity=sim), "hybrid"))
        variants.append(("hybrid, stems, vector x1.5", current,
                         {"lexical": 1.0, "vector": 1.5, "symbol": 1.0}, 20,
                         replace(base, stems=True), "hybrid"))
    if "--names" in sys.argv:  # the names source's levers alone
        print_table(langs, names_variants(base, equal, current))
        return
    if "--queries" in sys.argv:
        variants = []
        for view in QUERY_VIEWS:
            variants.append((f"vector, query view: {view}", view, {"vector": 1.0}, 20, base,
                             "vector"))
            variants.append((f"hybrid, query view: {view}", view, equal, 20, base, "hybrid"))
    elif "--grid" in sys.argv:  # the rerank's weights again, with stems
        variants = [("hybrid", current, equal, 20, base, "hybrid"),
                    ("hybrid, stems", current, equal, 20, replace(base, stems=True), "hybrid")]
        for lines_w, name_w in ((1.0, 1.5), (1.0, 2.0), (0.5, 1.0), (1.5, 1.0)):
            variants.append((f"hybrid, stems, lines {lines_w} name {name_w}", current, equal, 20,
                             replace(base, stems=True, lines=lines_w, name=name_w), "hybrid"))
        for scope in (0.25, 0.5, 1.0):
            variants.append((f"hybrid, stems, scope {scope}", current, equal, 20,
                             replace(base, stems=True, scope=scope), "hybrid"))
        for label, fw in (("vector x1.5", {"lexical": 1.0, "vector": 1.5, "symbol": 1.0}),
                          ("vector x2", {"lexical": 1.0, "vector": 2.0, "symbol": 1.0})):
            for scope in (0.0, 1.0):
                variants.append((f"hybrid, stems, scope {scope}, {label}", current, fw, 20,
                                 replace(base, stems=True, scope=scope), "hybrid"))
        for sim in (0.5, 1.0):
            variants.append((f"hybrid, stems, scope 1.0, cosine x{sim}", current, equal, 20,
                             replace(base, stems=True, scope=1.0, similarity=sim), "hybrid"))
        for rank_k in (5.0, 20.0):
            variants.append((f"hybrid, stems, rank_k {rank_k}", current, equal, 20,
                             replace(base, stems=True, rank_k=rank_k), "hybrid"))
        for depth in (10, 30):
            variants.append((f"hybrid, stems, depth {depth}", current, equal, 20,
                             replace(base, stems=True, depth=depth), "hybrid"))
        for rrf_k in (10, 60):
            variants.append((f"hybrid, stems, rrf k {rrf_k}", current, equal, rrf_k,
                             replace(base, stems=True), "hybrid"))
        for label, fw in (("vector x0.7", {"lexical": 1.0, "vector": 0.7, "symbol": 1.0}),
                          ("symbol x0.5", {"lexical": 1.0, "vector": 1.0, "symbol": 0.5})):
            variants.append((f"hybrid, stems, {label}", current, fw, 20,
                             replace(base, stems=True), "hybrid"))
    skip = any(flag in sys.argv for flag in ("--stems", "--grid", "--queries"))
    for view in ([] if skip else QUERY_VIEWS):
        variants.append((f"vector, query view: {view}", view, {"vector": 1.0}, 20, base,
                         "vector"))
        variants.append((f"hybrid, query view: {view}", view, equal, 20, base, "hybrid"))
    variants.append(("lexical", current, {"lexical": 1.0}, 20, base, "vector"))
    variants.append(("lexical, stems", current, {"lexical": 1.0}, 20, replace(base, stems=True),
                     "vector"))
    variants.append(("hybrid, stems", current, equal, 20, replace(base, stems=True), "hybrid"))
    variants.append(("vector, stems", current, {"vector": 1.0}, 20, replace(base, stems=True),
                     "vector"))
    for sim in (0.5, 1.0, 2.0):
        variants.append((f"hybrid, stems + cosine x{sim}", current, equal, 20,
                         replace(base, stems=True, similarity=sim), "hybrid"))
    for sim in ([] if skip else (0.5, 1.0, 2.0, 3.0, 4.0)):
        variants.append((f"hybrid + cosine x{sim}", current, equal, 20,
                         replace(base, similarity=sim), "hybrid"))
    for sim in ([] if skip else (1.0, 2.0)):
        for depth in (30, 50):
            variants.append((f"hybrid + cosine x{sim}, depth {depth}", current, equal, 20,
                             replace(base, similarity=sim, depth=depth), "hybrid"))
        variants.append((f"hybrid + cosine x{sim}, vector x2", current,
                         {"lexical": 1.0, "vector": 2.0, "symbol": 1.0}, 20,
                         replace(base, similarity=sim), "hybrid"))
    print_table(langs, variants)


def print_table(langs: Sequence[ScoredLanguage], variants: Sequence[tuple]) -> None:
    print("variant | " + " | ".join(x.data.language for x in langs) + " | mean", flush=True)
    for label, view, fuse_weights, rrf_k, weights, mode in variants:
        cells = []
        for lang in langs:
            s = score(rankings(lang, view, fuse_weights, rrf_k, weights, mode),
                      lang.data.targets)
            cells.append((s.recall, s.mrr))
        print_row(label, cells)


if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    names = names or [lang for lang in CORPORA if (eval_root() / lang / "raw.json").exists()]
    table([ScoredLanguage(lang) for lang in names])
