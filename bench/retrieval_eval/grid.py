"""Fusion and rerank settings tried on a finished run's indexes, through the product's own search.

    KNOXIDX_EVAL_DIR=... python -m bench.retrieval_eval.grid [--set dev] [LANG ...]

After ``python -m bench.retrieval_eval`` (same ``$KNOXIDX_EVAL_DIR``, same model: set
``$KNOXIDX_LOCAL_ADAPTER`` as the run had it), every saved question is asked again through
``HybridSearch.search`` with other source weights, RRF constant and rerank weights (the chunk
vectors, declarations and lexical tables are the run's; only the queries are embedded again,
once). Prints hybrid Recall@10 / MRR@10 per variant and language and their mean. Unlike
``bench.retrieval_eval.scores``, which re-fuses saved rankings of four sources, this runs the
search as shipped, all five sources and the rerank included, so the first row equals the run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace

from bench.retrieval_eval.metrics import Span, score
from bench.retrieval_eval.run import SETS, eval_root
from knoxidx.index import Index
from knoxidx.retrieval.rerank import RerankWeights
from knoxidx.retrieval.search import SOURCE_WEIGHTS

Variant = tuple[str, dict[str, float], int, RerankWeights]


def variants() -> Iterator[Variant]:
    base = RerankWeights()
    yield "as shipped", dict(SOURCE_WEIGHTS), 20, base
    for source in ("vector", "declarations"):
        for w in (1.5, 2.0):
            yield f"{source} x{w}", {**SOURCE_WEIGHTS, source: w}, 20, base
    for w in (1.5, 2.0):
        yield (f"vector and declarations x{w}",
               {**SOURCE_WEIGHTS, "vector": w, "declarations": w}, 20, base)
    for w in (0.7,):
        yield f"lexical x{w}", {**SOURCE_WEIGHTS, "lexical": w}, 20, base
    for sim in (1.5, 2.0, 3.0):
        yield f"cosine x{sim}", dict(SOURCE_WEIGHTS), 20, replace(base, similarity=sim)
    for sim in (1.5, 2.0):
        yield (f"cosine x{sim}, vector x1.5", {**SOURCE_WEIGHTS, "vector": 1.5}, 20,
               replace(base, similarity=sim))
    for decl in (1.5, 2.0):
        yield (f"declaration closeness x{decl}", dict(SOURCE_WEIGHTS), 20,
               replace(base, declaration=base.declaration * decl))
    for depth in (30,):
        yield f"depth {depth}", dict(SOURCE_WEIGHTS), 20, replace(base, depth=depth)
    for rrf_k in (10, 60):
        yield f"rrf k {rrf_k}", dict(SOURCE_WEIGHTS), rrf_k, base


def run_language(language: str) -> dict[str, tuple[float, float]]:
    from knoxidx.retrieval.api import searcher_for

    work = eval_root() / language
    raw = json.loads((work / "raw.json").read_text())
    targets = raw["targets"]
    spans = [Span(t["path"], t["start_line"], t["end_line"]) for t in targets]
    out: dict[str, tuple[float, float]] = {}
    with Index.open(work / "repo") as idx:
        searcher = searcher_for(idx)
        hybrid = searcher.hybrid()
        hybrid.embedder = searcher.embedder()
        for name, source_weights, rrf_k, weights in variants():
            hybrid.source_weights, hybrid.rrf_k, hybrid.weights = source_weights, rrf_k, weights
            rankings = [[Span(r.path, r.start_line, r.end_line)
                         for r in hybrid.search(t["query"], k=10)] for t in targets]
            s = score(rankings, spans)
            out[name] = (s.recall, s.mrr)
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    corpora = SETS["main"]
    if "--set" in args:
        at = args.index("--set")
        corpora = SETS[args[at + 1]]
        del args[at : at + 2]
    languages = args or list(corpora)
    results = {language: run_language(language) for language in languages}
    names = list(next(iter(results.values())))
    print("| variant | " + " | ".join(languages) + " | mean |")
    print("|---" * (len(languages) + 2) + "|")
    for name in names:
        cells = [results[lang][name] for lang in languages]
        mean = (sum(c[0] for c in cells) / len(cells), sum(c[1] for c in cells) / len(cells))
        print(f"| {name} | " + " | ".join(f"{r:.3f} / {m:.3f}" for r, m in cells)
              + f" | **{mean[0]:.3f} / {mean[1]:.3f}** |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
