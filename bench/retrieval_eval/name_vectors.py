"""How the declarations source's text was chosen (session 13): a prototype over saved runs.

    python -m bench.retrieval_eval.name_vectors [--text kind|plain|bare|signature|doc]
        [--per-chunk] LANG ...

Over the saved task of each language (``python -m bench.retrieval_eval`` first, with the same
``$KNOXIDX_EVAL_DIR``), this embeds one short text per code definition of the index (the kinds
the names source ranks: functions, classes, interfaces, types) with the local model, e.g.
``function minus years in period`` for ``Period.minusYears``, and ranks chunks by the best
cosine of the query with their definitions' vectors ("name vectors"). That ranking is fused
with the four sources the product had before it (lexical, vector, symbol, names) and reranked
by the product's own code, as ``bench.retrieval_eval.scores`` does; so is a variant that adds
the cosine to the definition rerank instead. The product's source
(``knoxidx.retrieval.names.declaration_texts``) is ``--text signature`` at weight 1, chosen on
the dev projects (BENCHMARKS.md).

Texts (``--text``): ``kind`` (default) ``function minus years in period`` (the kind word,
the name's words, and what holds it: enclosing names, else the file's name); ``plain``
``minus years period``; ``bare`` ``minus years`` (no holder); ``signature`` the kind text and
the signature's words; ``doc`` that and the doc comment's first line. ``--per-chunk``: one
vector per chunk, its definitions' texts joined.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bench.retrieval_eval.metrics import score
from bench.retrieval_eval.scores import QUERY_VIEWS, ScoredLanguage
from bench.retrieval_eval.variants import print_row, reranked_spans, rrf
from knoxidx.retrieval.embedders import meaningful_identifier
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.names import NAME_KINDS
from knoxidx.retrieval.terms import identifier_parts, readable_identifiers

CURRENT_VIEW = "current (text + identifier words)"
TEXTS = ("kind", "plain", "bare", "signature", "doc")
DEPTH = 50  # chunks the source hands to the fusion, as the other sources do


def name_text(path: str, qualname: str, kind: str, style: str, signature: str = "",
              doc: str = "") -> str:
    """The text embedded for one definition (see the module docstring)."""
    parts = qualname.replace("::", ".").split(".")
    own = " ".join(identifier_parts(parts[-1]))
    outer = " ".join(" ".join(identifier_parts(p)) for p in parts[:-1])
    holder = outer or " ".join(identifier_parts(path.rsplit("/", 1)[-1].split(".", 1)[0]))
    if style == "bare":
        return own
    if style == "plain":
        return f"{own} {holder}"
    text = f"{kind.lower()} {own} in {holder}"
    if style in ("signature", "doc") and signature:
        text += ": " + readable_identifiers(signature, keep=meaningful_identifier)
    if style == "doc" and doc:
        text += "\n" + doc.strip().split("\n", 1)[0]
    return text


class NameVectors:
    """Every code definition's name vector in one language's index, and the owning chunks."""

    def __init__(self, lang: ScoredLanguage, style: str) -> None:
        import numpy as np

        data = lang.data
        stored = data.store.get(data.store.chunk_ids(ChunkFilter()))
        kinds_by_path: dict[str, dict[str, tuple[str, str, str]]] = {}
        owners: list[int] = []
        qualnames: list[str] = []
        texts: list[str] = []
        for chunk_id, item in stored.items():
            chunk = item.chunk
            kinds = kinds_by_path.get(chunk.path)
            if kinds is None:  # stored chunks do not keep their symbols' kinds: the facts do
                facts = data.index.store.load_facts(chunk.path)
                kinds = {d.qualname: (d.kind, d.signature, d.doc) for d in (facts.defs if facts else ())}
                kinds_by_path[chunk.path] = kinds
            for qualname in chunk.symbols:
                kind, signature, doc = kinds.get(qualname, ("", "", ""))
                if kind in NAME_KINDS:
                    texts.append(name_text(chunk.path, qualname, kind, style, signature, doc))
                    owners.append(chunk_id)
                    qualnames.append(qualname)
        if "--per-chunk" in sys.argv:  # one text per chunk: its definitions' texts joined
            joined: dict[int, list[str]] = {}
            for chunk_id, text in zip(owners, texts, strict=True):
                joined.setdefault(chunk_id, []).append(text)
            owners = list(joined)
            qualnames = ["" for _ in owners]
            texts = ["\n".join(t) for t in joined.values()]
        start = time.perf_counter()
        self.matrix = lang.embedder.model.encode(texts, batch_size=64)
        self.seconds = time.perf_counter() - start
        self.count = len(texts)
        self.owners = np.asarray(owners, dtype=np.int64)
        self.rows: dict[tuple[int, str], int] = {}  # (chunk id, qualified name) -> row
        self.by_chunk: dict[int, list[int]] = {}
        for row, (chunk_id, qualname) in enumerate(zip(owners, qualnames, strict=True)):
            self.rows[(chunk_id, qualname)] = row
            self.by_chunk.setdefault(chunk_id, []).append(row)
        view = QUERY_VIEWS[CURRENT_VIEW]
        self.queries = lang.embedder.query_model().encode([view(t) for t in data.texts])

    def unit_cosine(self, n: int, chunk_id: int, symbol: str) -> float:
        """Query ``n``'s cosine with a unit's name: the definition's own, or for a whole chunk
        the best of its definitions' (0 for a chunk without any)."""
        row = self.rows.get((chunk_id, symbol))
        rows = [row] if row is not None else self.by_chunk.get(chunk_id, [])
        return max((float(self.matrix[r] @ self.queries[n]) for r in rows), default=0.0)

    def ranking(self, n: int) -> list[int]:
        """Chunks by the best cosine of query ``n`` with their definitions' names."""
        import numpy as np

        order = np.argsort(-(self.matrix @ self.queries[n]), kind="stable")
        out: list[int] = []
        seen: set[int] = set()
        for row in order:
            chunk_id = int(self.owners[row])
            if chunk_id not in seen:
                seen.add(chunk_id)
                out.append(chunk_id)
                if len(out) == DEPTH:
                    break
        return out


def rankings(lang: ScoredLanguage, names: NameVectors | None, fuse_weights: dict[str, float],
             weights: Any, mode: str, in_rerank: float = 0.0) -> list[Any]:
    """The product's rerank (hybrid) or narrowing (other modes) over the saved sources, the
    recomputed vector source, and the name-vector source when given."""
    data = lang.data
    symbols = data.identifier_symbols()
    cos_rows = lang.cosines(CURRENT_VIEW, QUERY_VIEWS[CURRENT_VIEW])
    fuse = rrf(fuse_weights, 20)
    out = []
    for n, (saved, text) in enumerate(zip(data.queries, data.texts, strict=True)):
        cos = cos_rows[n]
        sources = {"lexical": saved["lexical"], "vector": lang.vector_ranking(cos),
                   "symbol": symbols[n], "names": lang.names(n)}
        if names is not None:
            sources["name_vectors"] = names.ranking(n)
        missing = [i for ids in sources.values() for i in ids if i not in data.chunks]
        if missing:
            data.chunks.update(data.store.get(missing))
        order = [i for i in fuse(sources) if i in data.chunks]
        similarity = {i: float(cos[lang.row[i]]) for i in order[: max(weights.depth, 10)]
                      if i in lang.row}
        with _name_cosine_in_rerank(names, n, in_rerank):
            out.append(reranked_spans(data, order, text, weights, mode, similarity))
    return out


@contextmanager
def _name_cosine_in_rerank(names: NameVectors | None, n: int, weight: float) -> Iterator[None]:
    """The rerank's word score of each unit plus ``weight`` x the query's cosine with the
    unit's name (a prototype: patched in, so it also counts where the rerank decides whether
    a small chunk is narrowed to one of its definitions)."""
    from knoxidx.retrieval import rerank

    if names is None or not weight:
        yield
        return
    original = rerank.match_score

    def match_score(chunk: Any, unit: Any, words: Any, weights: Any) -> float:
        return (original(chunk, unit, words, weights)
                + weight * names.unit_cosine(n, unit.chunk_id, unit.symbol))

    rerank.match_score = match_score
    try:
        yield
    finally:
        rerank.match_score = original


def main(argv: Sequence[str]) -> None:
    from knoxidx.retrieval.rerank import RerankWeights

    style = "kind"
    args = [a for a in argv if a != "--per-chunk"]
    if "--text" in args:
        i = args.index("--text")
        style = args[i + 1]
        del args[i : i + 2]
        if style not in TEXTS:
            raise SystemExit(f"--text: one of {', '.join(TEXTS)}")
    langs = [ScoredLanguage(language) for language in args]
    vectors = []
    for lang in langs:
        names = NameVectors(lang, style)
        print(f"{lang.data.language}: {names.count} names embedded in {names.seconds:.1f} s",
              file=sys.stderr, flush=True)
        vectors.append(names)
    base = RerankWeights()
    four = {"lexical": 1.0, "vector": 1.0, "symbol": 1.0, "names": 1.0}
    variants: list[tuple[str, bool, dict[str, float], str, float]] = [
        ("hybrid (the four sources before declarations)", False, four, "hybrid", 0.0),
        ("lexical (lexical + symbol + names)", False,
         {"lexical": 1.0, "symbol": 1.0, "names": 1.0}, "vector", 0.0),
        ("vector (chunks)", False, {"vector": 1.0}, "vector", 0.0),
        ("name vectors alone", True, {"name_vectors": 1.0}, "vector", 0.0),
    ]
    for w in (0.5, 1.0, 1.5, 2.0):
        variants.append((f"hybrid + name vectors x{w}", True, {**four, "name_vectors": w},
                         "hybrid", 0.0))
    without_chunks = {"lexical": 1.0, "symbol": 1.0, "names": 1.0}
    for w in (1.0, 1.5):
        variants.append((f"hybrid, name vectors x{w} instead of chunk vectors", True,
                         {**without_chunks, "name_vectors": w}, "hybrid", 0.0))
    for r in (0.5, 1.0, 2.0):
        variants.append((f"hybrid, name cosine in the rerank x{r}", True, four, "hybrid", r))
        variants.append((f"hybrid + name vectors x1, name cosine in the rerank x{r}", True,
                         {**four, "name_vectors": 1.0}, "hybrid", r))
    print(f"text: {style}; variant | " + " | ".join(x.data.language for x in langs) + " | mean")
    for label, use, fuse_weights, mode, in_rerank in variants:
        cells = []
        for lang, names in zip(langs, vectors, strict=True):
            s = score(rankings(lang, names if use else None, fuse_weights, base, mode,
                               in_rerank), lang.data.targets)
            cells.append((s.recall, s.mrr))
        print_row(label, cells)


if __name__ == "__main__":
    main(sys.argv[1:])
