"""Ask an embedded benchmark copy again, and show what the hybrid search misses.

    python -m bench.retrieval_eval.misses WORK [WORK ...] [--show] [--vector-weight W]

``WORK`` is a language's folder of a run (``$KNOXIDX_EVAL_DIR/<lang>``: ``repo`` with its
index and embeddings, ``raw.json`` with the targets). Every target's query goes through
``Index.search`` again, hybrid and vector, with the code of this checkout: a rerank or
fusion change is measured without embedding anything again (set ``$KNOXIDX_LOCAL_PRECISION``
to the precision the copy was embedded with). Prints Recall@10 / MRR@10 per copy and the
rank of each query (``x``: not in the first 10). ``--show`` lists each hybrid miss: the
query, where each source and their fusion rank the chunk holding it (0: not in a source's
first 50), whether a rerank unit of that chunk would answer it, and the ten results given
instead.
``--vector-weight`` asks with both vector sources of the fusion at ``W`` (the installed
``SOURCE_WEIGHTS`` otherwise).
"""

from __future__ import annotations

import argparse
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from bench.context_eval.fusion import vector_weight
from bench.retrieval_eval.metrics import Span, first_hit, is_hit
from knoxidx.index import Index


def ranks_line(ranks: list[int]) -> str:
    return "".join(str(min(r, 9)) if r else "x" for r in ranks)


def fused_ranks(idx: Index, query: str, span: Span) -> dict[str, int]:
    """Where each source of this checkout, and their fusion, rank the first chunk holding
    any line of ``span`` (0: not among a source's candidates). Asks the sources the search
    just asked (so the query's vector and words are made), without the fusion's tie order."""
    from knoxidx.retrieval.hybrid_search import reciprocal_rank_fusion
    from knoxidx.retrieval.searcher import searcher_for

    hybrid = searcher_for(idx).hybrid()
    ranked = {name: ask(query) for name, ask in (
        ("lexical", hybrid.lexical), ("vector", hybrid.vector),
        ("declarations", hybrid.declarations), ("symbol", hybrid.symbols),
        ("names", hybrid.names))}
    ranked["fused"] = reciprocal_rank_fusion(ranked, hybrid.rrf_k, hybrid.source_weights)
    places = hybrid.store.places(list({i for hits in ranked.values() for i, _ in hits}))

    def holds(chunk_id: int) -> bool:
        path, start, end = places[chunk_id]
        return path == span.path and start <= span.end_line and span.start_line <= end

    return {name: next((rank for rank, (i, _) in enumerate(hits, 1) if holds(i)), 0)
            for name, hits in ranked.items()}


def describe_miss(idx: Index, target: dict[str, Any], results: list[dict[str, Any]]
                  ) -> list[str]:
    from knoxidx.retrieval.searcher import searcher_for
    from knoxidx.retrieval.units import units

    span = Span(target["path"], target["start_line"], target["end_line"])
    found = fused_ranks(idx, target["query"], span)
    searcher = searcher_for(idx)
    definitions = searcher.file_definitions(span.path)
    holding = searcher.store.get(searcher.store.chunks_at(span.path, span.start_line))
    lines = [f"MISS {target['qualname']} {span.path}:{span.start_line}-{span.end_line}",
             f"  query: {target['query'][:200]}",
             f"  source ranks: {found} (the rerank reads the first "
             f"{searcher.hybrid().weights.depth} fused)"]
    for chunk_id, stored in holding.items():
        chunk = stored.chunk
        is_unit = any(is_hit(Span(span.path, u.start_line, u.end_line), span)
                      for u in units(chunk_id, chunk, definitions))
        lines.append(f"  in chunk {chunk.start_line}-{chunk.end_line} "
                     f"({chunk.end_line - chunk.start_line + 1} lines): a rerank unit: {is_unit}")
    lines += [f"   - {r['path']}:{r['start_line']}-{r['end_line']} {r['kind']} {r['symbol']}"
              for r in results]
    return lines


def ask_again(work: Path, show: bool, vector_weights: float | None = None
              ) -> tuple[dict[str, tuple[float, float]], list[str]]:
    raw = json.loads((work / "raw.json").read_text())
    ranks: dict[str, list[int]] = {"hybrid": [], "vector": []}
    shown: list[str] = []
    weights = nullcontext() if vector_weights is None else vector_weight(vector_weights)
    with weights, Index.open(work / "repo") as idx:
        for target in raw["targets"]:
            span = Span(target["path"], target["start_line"], target["end_line"])
            for mode in ranks:
                results = idx.search(target["query"], k=10, mode=mode)["results"]
                rank = first_hit([Span(r["path"], r["start_line"], r["end_line"])
                                  for r in results], span)
                ranks[mode].append(rank)
                if mode == "hybrid" and not rank and show:
                    shown += describe_miss(idx, target, results)
    scores = {mode: (sum(1 for r in found if r) / len(found),
                     sum(1 / r for r in found if r) / len(found))
              for mode, found in ranks.items()}
    summary = [f"{work}: " + "  ".join(f"{mode} {recall:.2f} / {mrr:.3f}"
                                       for mode, (recall, mrr) in scores.items())
               + f" ({len(ranks['hybrid'])} queries)",
               f"  hybrid ranks {ranks_line(ranks['hybrid'])}",
               f"  vector ranks {ranks_line(ranks['vector'])}"]
    return scores, summary + shown


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_eval.misses")
    parser.add_argument("work", type=Path, nargs="+")
    parser.add_argument("--show", action="store_true", help="list each hybrid miss")
    parser.add_argument("--vector-weight", type=float, metavar="W",
                        help="fusion weight of both vector sources (default: as installed)")
    args = parser.parse_args(argv)
    means: dict[str, list[tuple[float, float]]] = {"hybrid": [], "vector": []}
    for work in args.work:
        scores, lines = ask_again(work, args.show, args.vector_weight)
        print("\n".join(lines), flush=True)
        for mode, pair in scores.items():
            means[mode].append(pair)
    print("mean: " + "  ".join(
        f"{mode} {sum(r for r, _ in pairs) / len(pairs):.3f} / "
        f"{sum(m for _, m in pairs) / len(pairs):.3f}" for mode, pairs in means.items()))


if __name__ == "__main__":
    main()
