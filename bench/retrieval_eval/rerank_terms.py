"""What the definition rerank holds against the answers it reads and ranks below 10.

    python -m bench.retrieval_eval.rerank_terms WORK [WORK ...]

``WORK`` is a language's folder of a run, as for ``misses`` (set ``$KNOXIDX_LOCAL_PRECISION``
to the precision the copy was embedded with). Each target's query goes through
``Index.search`` again; for each hybrid miss with a rerank unit answering it among the
fused chunks the rerank reads, prints that unit's terms and those of the result ranked first,
each as ``rerank_definitions`` adds it: ``rank`` (the fused rank's term, with ``fused``, the
rank), ``cosine`` (the chunk's), ``lines``, ``name``, ``holder`` (the words of what holds it),
``declaration`` (its closeness x the weight), ``first_word`` and ``opening`` (the lifts), and
the test prior and ``declaration_only`` factors; ``own`` is the sum without the rank's term.
The subject and holder lifts, which come after, are not broken down: ``score`` is what the
search gave the first result, ``total`` what its terms add up to.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import knoxidx.retrieval.hybrid_search as hybrid_search
from bench.retrieval_eval.metrics import Span, first_hit, is_hit
from knoxidx.index import Index
from knoxidx.retrieval import rerank


@dataclass(frozen=True, slots=True)
class UnitTerms:
    symbol: str
    path: str
    start_line: int
    end_line: int
    fused: int
    terms: dict[str, float]
    factor: float

    @property
    def own(self) -> float:
        return sum(v for k, v in self.terms.items() if k != "rank")

    @property
    def total(self) -> float:
        return (self.terms["rank"] + self.own) * self.factor

    def line(self, label: str) -> str:
        shown = " ".join(f"{k} {v:.3f}" for k, v in self.terms.items() if v)
        return (f"  {label}: {self.symbol} {self.path}:{self.start_line}-{self.end_line} "
                f"fused {self.fused}: {shown}; x{self.factor:g}; own {self.own:.3f}, "
                f"total {self.total:.3f}")


@contextmanager
def rerank_arguments() -> Iterator[list[dict[str, Any]]]:
    """The arguments of each ``rerank_definitions`` call the hybrid search makes meanwhile."""
    seen: list[dict[str, Any]] = []
    real = hybrid_search.rerank_definitions

    def recording(order: Any, chunks: Any, definitions: Any, words: Any, weights: Any,
                  similarity: Any = None, path_factor: Any = None,
                  declaration_closeness: Any = None) -> list[rerank.Unit]:
        seen.append(dict(order=order, chunks=chunks, definitions=definitions, words=words,
                         weights=weights, similarity=similarity, path_factor=path_factor,
                         closeness=declaration_closeness))
        return real(order, chunks, definitions, words, weights, similarity, path_factor,
                    declaration_closeness)

    hybrid_search.rerank_definitions = recording
    try:
        yield seen
    finally:
        hybrid_search.rerank_definitions = real


def unit_terms(call: dict[str, Any]) -> list[UnitTerms]:
    """The terms of every unit the rerank scored in ``call``, in its reading order."""
    weights, words = call["weights"], call["words"]
    chunks = call["chunks"]
    ranked = [i for i in call["order"] if i in chunks][: weights.depth]
    similarity = call["similarity"] or {}
    floor = min(similarity.values(), default=0.0)
    declaration_factor = (1.0 if rerank.asks_for_declaration(words.query)
                          else weights.declaration_only)
    head = rerank.query_head(words.query)
    openings = rerank.name_openings(words.query)
    found = []
    for fused, chunk_id in enumerate(ranked, start=1):
        chunk = chunks[chunk_id]
        definitions = call["definitions"](chunk.path)
        for unit in rerank.query_units(chunk_id, chunk, definitions, words, weights):
            seen = rerank.unit_words(chunk, unit, words.stems)
            holder = rerank.scope_words(chunk.path, unit.symbol)
            if words.stems:
                holder = {rerank.stem(w) for w in holder}
            closeness = call["closeness"]
            handler = rerank.named_after_what_it_handles(chunk.path, unit.symbol, unit.kind)
            named = max((rerank.name_share(s, words) for s in (unit.symbol, *unit.held)
                         if not rerank.named_after_what_it_handles(
                             chunk.path, s, unit.kind if s == unit.symbol else "")),
                        default=0.0)
            terms = {
                "rank": (weights.rank_k + 1) / (weights.rank_k + fused),
                "cosine": weights.similarity * similarity.get(chunk_id, floor),
                "lines": weights.lines * words.share(seen),
                "name": weights.name * named,
                "holder": weights.scope * words.share(holder - seen),
                "declaration": (weights.declaration * closeness(unit, chunk)
                                if closeness is not None and not handler else 0.0),
                "first_word": weights.named_first if head and rerank.unit_name(unit) == head
                else 0.0,
                "opening": weights.intent if openings and any(
                    act in openings and words.holds_any(rest)
                    for act, rest in map(rerank.act_and_object, (unit.symbol, *unit.held)))
                else 0.0,
            }
            factor = call["path_factor"](chunk.path, unit.symbol) if call["path_factor"] else 1.0
            if (declaration_factor != 1.0 and rerank.declares_only(unit, definitions)
                    and rerank.unit_name(unit).lower() != head.lower()):
                factor *= declaration_factor
            found.append(UnitTerms(unit.symbol, chunk.path, unit.start_line, unit.end_line,
                                   fused, terms, factor))
    return found


def describe(work: Path, k: int = 10) -> list[str]:
    """The terms of each target the hybrid search does not answer in its first ``k``."""
    raw = json.loads((work / "raw.json").read_text())
    lines: list[str] = []
    with Index.open(work / "repo") as idx, rerank_arguments() as calls:
        for target in raw["targets"]:
            span = Span(target["path"], target["start_line"], target["end_line"])
            calls.clear()
            results = idx.search(target["query"], k=k, mode="hybrid")["results"]
            if first_hit([Span(r["path"], r["start_line"], r["end_line"]) for r in results],
                         span, k) or not calls or not results:
                continue
            scored = [u for call in calls for u in unit_terms(call)]
            answers = [u for u in scored
                       if is_hit(Span(u.path, u.start_line, u.end_line), span)]
            if not answers:
                continue
            top = results[0]
            first = next((u for u in scored if (u.path, u.start_line, u.end_line)
                          == (top["path"], top["start_line"], top["end_line"])), None)
            lines.append(f"MISS {target['qualname']} {span.path}:{span.start_line}-"
                         f"{span.end_line} (result {k}'s score {results[-1]['score']:.3f})")
            lines.append(f"  query: {target['query'][:160]}")
            lines.append(max(answers, key=lambda u: u.total).line("answer"))
            if first is not None:
                lines.append(first.line("first") + f"; score {top['score']:.3f}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_eval.rerank_terms")
    parser.add_argument("work", type=Path, nargs="+")
    args = parser.parse_args(argv)
    for work in args.work:
        print(f"{work}:", flush=True)
        print("\n".join(describe(work)), flush=True)


if __name__ == "__main__":
    main()
