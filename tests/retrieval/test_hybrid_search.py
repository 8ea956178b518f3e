from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
from pydefs import python_definitions
from retrieval_support import SITE_PACKAGES, HashEmbedder

from knoxidx.retrieval.chunker import chunk_file
from knoxidx.retrieval.hybrid_search import HybridSearch, reciprocal_rank_fusion, snippet
from knoxidx.retrieval.rerank_weights import RerankWeights
from knoxidx.retrieval.sources import SymbolHit, SymbolSource
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import create_schema
from knoxidx.retrieval.vectors import VectorIndex, from_blobs, to_blob
from knoxidx.update.embedding_refresh import embed_pending, update_file


def test_vector_top_k_is_exact_cosine() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(500, 32)).astype(np.float32)
    index = VectorIndex(list(range(100, 600)), matrix)
    query = rng.normal(size=32).astype(np.float32)
    top = index.top_k(query, 5)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = np.argsort(-(unit @ (query / np.linalg.norm(query))))[:5] + 100
    assert [i for i, _ in top] == list(expected)
    assert top[0][1] >= top[-1][1]
    assert len(index.top_k(query, 1000)) == 500
    assert VectorIndex([], np.zeros((0, 32))).top_k(query, 3) == []
    assert np.allclose(from_blobs([to_blob(matrix[0])], 32)[0], matrix[0])


def test_cosines_of_some_ids_in_any_order_and_none_for_an_unknown_one() -> None:
    rng = np.random.default_rng(1)
    matrix = rng.normal(size=(50, 16)).astype(np.float32)
    ids = list(rng.permutation(np.arange(1000, 1050)))  # not in order, as a matrix may be
    index = VectorIndex(ids, matrix)
    query = rng.normal(size=16).astype(np.float32)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    expected = dict(zip(ids, unit @ (query / np.linalg.norm(query)), strict=True))
    wanted = [ids[7], 5, ids[0], ids[49], 99_999]
    found = index.cosines(query, wanted)
    assert set(found) == {ids[7], ids[0], ids[49]}
    assert all(abs(found[i] - expected[i]) < 1e-5 for i in found)
    assert index.cosines(query, []) == {}
    assert VectorIndex([], np.zeros((0, 16))).cosines(query, [1]) == {}


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion({"a": [(1, 9.0), (2, 8.0)], "b": [(2, 0.9), (3, 0.8)]})
    assert [i for i, _ in fused] == [2, 1, 3]


def test_a_heavier_source_wins_ties_of_rank_and_unnamed_sources_weigh_one() -> None:
    ranked = {"a": [(1, 9.0)], "b": [(2, 0.9)], "c": [(3, 0.5)]}
    assert [i for i, _ in reciprocal_rank_fusion(ranked, 20)] == [1, 2, 3]  # tie: by id
    fused = reciprocal_rank_fusion(ranked, 20, {"b": 2.0, "c": 0.5})
    assert [i for i, _ in fused] == [2, 1, 3]
    assert dict(fused)[2] == 2.0 / 21 and dict(fused)[1] == 1.0 / 21


def test_snippet_centres_on_the_best_line() -> None:
    text = "\n".join(f"line {i}" for i in range(20)) + "\nparse the response here\n" + "tail\n"
    assert "parse the response here" in snippet(text, "parse response")
    assert snippet("", "x") == ""


def index_corpus(store: ChunkStore, embedder, files: list[Path]) -> None:
    for path in files:
        source = path.read_bytes()
        rel = str(path.relative_to(SITE_PACKAGES))
        update_file(store, rel, chunk_file(rel, source, "python", python_definitions(source)))
    embed_pending(store, embedder)
    store.commit()


def test_hybrid_search_with_the_real_local_model(store: ChunkStore, local_embedder) -> None:
    files = [SITE_PACKAGES / "click" / name for name in ("termui.py", "utils.py", "formatting.py")]
    index_corpus(store, local_embedder, files)
    assert store.pending_count() == 0 and store.vector_count() == store.chunk_count()
    search = HybridSearch(store, local_embedder)
    results = search.search("wrap text to fit the terminal width", k=5)
    assert results and all(r.path.startswith("click/") for r in results)
    assert any(
        r.symbol in ("wrap_text", "HelpFormatter.write_text", "HelpFormatter") for r in results[:3]
    )
    first = results[0]
    assert first.start_line <= first.end_line and first.snippet and first.score > 0
    assert set(first.sources) <= {"lexical", "vector", "declarations", "symbol", "names",
                                  "identifiers"}
    # a purely semantic query still finds the prompt helpers through the vectors
    results = search.search("ask the user a yes or no question", k=5)
    assert any("confirm" in r.symbol for r in results)
    assert any("vector" in r.sources for r in results)


def test_symbol_hits_and_reranker_are_fused(store: ChunkStore) -> None:
    source = (
        b"def alpha():\n    return 1\n"
        + b"\n" * 3
        + b"def beta():\n    return 2\n"
        + b"# filler line\n" * 400
    )
    update_file(store, "m.py", chunk_file("m.py", source, "python", python_definitions(source)))
    embed_pending(store, HashEmbedder())

    def symbols(query: str, limit: int) -> list[SymbolHit]:
        return [SymbolHit("m.py", 5, "beta", "Function")] if "beta" in query else []

    class Reverse:
        def rerank(self, query, documents, top_k):
            return [(i, float(i)) for i in reversed(range(len(documents)))]

    search = HybridSearch(store, HashEmbedder(), symbol_source=symbols)
    hit = search.search("beta")[0]
    assert "symbol" in hit.sources
    reranked = HybridSearch(store, HashEmbedder(), reranker=Reverse()).search("filler", k=3)
    assert all("rerank" in r.sources for r in reranked)


def test_search_without_vectors_or_embedder_is_lexical(store: ChunkStore) -> None:
    update_file(store, "m.py", chunk_file("m.py", b"def gamma_ray():\n    pass\n", "python", []))
    assert HybridSearch(store).search("gamma ray")[0].sources == ("lexical",)
    assert HybridSearch(store, HashEmbedder()).search("   ") == []


def test_vectors_of_another_model_are_not_searched(store: ChunkStore) -> None:
    update_file(store, "m.py", chunk_file("m.py", b"def gamma_ray():\n    pass\n", "python", []))
    embed_pending(store, HashEmbedder("test/one"))
    results = HybridSearch(store, HashEmbedder("test/two")).search("gamma ray")
    assert results and results[0].sources == ("lexical",)


def test_importing_retrieval_does_not_import_heavy_packages() -> None:
    code = (
        "import sys\n"
        "import knoxidx.retrieval, knoxidx.retrieval.hybrid_search, knoxidx.retrieval.backends, "
        "knoxidx.update.embedding_refresh, knoxidx.retrieval.voyage, knoxidx.retrieval.chunker\n"
        "heavy = ('numpy', 'onnxruntime', 'onnx', 'tokenizers', 'voyageai')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_vector_matrix_is_memory_mapped_from_a_copy_that_follows_every_write(
    tmp_path: Path, monkeypatch
) -> None:
    import sqlite3

    from knoxidx.retrieval.store_schema import create_schema

    conn = sqlite3.connect(tmp_path / "index.db")
    create_schema(conn)
    store = ChunkStore(conn)
    embedder = HashEmbedder()
    sources = {f"m{i}.py": f"def handler_{i}(request):\n    return parse_{i}(request)\n"
               for i in range(6)}
    for path, text in sources.items():
        update_file(store, path, chunk_file(path, text.encode(), "python",
                                            python_definitions(text.encode())))
    embed_pending(store, embedder)
    first = HybridSearch(store, embedder)
    expected = first.search("parse_3 request", 3, sources=("vector",))
    copies = sorted(p.name for p in tmp_path.glob("vectors-*.npy"))
    assert len(copies) == 2 and store.vectors_token() in copies[0]
    # a new process (a new search object) reads the copy, not SQLite
    reads: list[int] = []
    real_read = ChunkStore.all_vectors
    monkeypatch.setattr(ChunkStore, "all_vectors", lambda self: reads.append(1) or real_read(self))
    second = HybridSearch(store, embedder)
    assert second.search("parse_3 request", 3, sources=("vector",)) == expected
    assert reads == [] and isinstance(second.vector_index().matrix, np.memmap)
    # a write (new file, new vectors) names a new copy; the old one goes
    update_file(store, "new.py", chunk_file("new.py", b"def fresh_thing():\n    return 1\n",
                                            "python", []))
    embed_pending(store, embedder)
    third = HybridSearch(store, embedder)
    top = third.search("fresh_thing", 1, sources=("vector",))
    assert reads == [1] and top[0].path == "new.py"
    assert sorted(p.name for p in tmp_path.glob("vectors-*.npy")) != copies
    assert len(list(tmp_path.glob("vectors-*.npy"))) == 2
    # a damaged copy is made again, not trusted
    for path in tmp_path.glob("vectors-*.f32.npy"):
        path.write_bytes(b"not an array")
    assert HybridSearch(store, embedder).search("fresh_thing", 1, sources=("vector",))[0].path \
        == "new.py"
    assert reads == [1, 1]
    # an index from before tokens: searched from SQLite, until the next embedding run names it
    for path in tmp_path.glob("vectors-*.npy"):
        path.unlink()
    with store.transaction():
        store.set_meta("vectors_token", "")
    assert HybridSearch(store, embedder).search("fresh_thing", 1, sources=("vector",))
    assert reads == [1, 1, 1] and list(tmp_path.glob("vectors-*.npy")) == []
    embed_pending(store, embedder)  # nothing to embed; still names the vectors
    assert store.vectors_token()
    conn.close()


def test_a_tie_in_the_fusion_is_broken_by_place_not_by_the_order_of_writing() -> None:
    """Two sources each rank a different chunk first: their fused scores are equal, and which
    comes first (and is fetched, when the fetched head is cut between them) must not depend on
    which file was written first."""
    files = {"a.py": b"def gamma_ray():\n    pass\n", "b.py": b"def other_thing():\n    pass\n"}

    def symbols(query: str, limit: int) -> list[SymbolHit]:
        return [SymbolHit("b.py", 1, "other_thing", "Function")]

    firsts = []
    for written in (["a.py", "b.py"], ["b.py", "a.py"]):
        connection = sqlite3.connect(":memory:")
        create_schema(connection)
        store = ChunkStore(connection)
        for path in written:
            update_file(store, path, chunk_file(path, files[path], "python", []))
        search = HybridSearch(store, symbol_source=symbols, rerank_top=1)
        results = search.search("gamma ray", 1, sources=("lexical", "symbol"))
        firsts.append([(r.path, r.sources) for r in results])
        connection.close()
    assert firsts[0] == firsts[1] == [("a.py", ("lexical",))]


def _copies_written_in(written: list[str], source: bytes,
                       ) -> tuple[sqlite3.Connection, ChunkStore]:
    """A new chunk store holding ``source`` once under each path, written in that order."""
    connection = sqlite3.connect(":memory:")
    create_schema(connection)
    store = ChunkStore(connection)
    for path in written:
        update_file(store, path, chunk_file(path, source, "python", python_definitions(source)))
    return connection, store


def test_the_names_source_cuts_a_tie_by_place_not_by_the_order_of_writing() -> None:
    """Three copies of one definition score the same in the names source; the two it keeps
    (its ``candidates``) are the first by path, whichever files were written first."""
    source = b"def parse_config_file(path):\n    return path\n"
    kept = []
    for written in (["c.py", "b.py", "a.py"], ["a.py", "b.py", "c.py"]):
        connection, store = _copies_written_in(written, source)
        search = HybridSearch(store, candidates=2)
        kept.append([r.path for r in search.search("parse config file", 3, sources=("names",))])
        connection.close()
    assert kept[0] == kept[1] == ["a.py", "b.py"]


def test_the_lexical_and_vector_sources_cut_a_tie_by_place_not_by_the_order_of_writing(
) -> None:
    """Three copies of one function score the same in every source; the two each source keeps
    (its ``candidates``) are the first by path, whichever files were written first."""
    source = b"def gamma_ray_burst(energy):\n    return energy * 2\n"
    kept: dict[str, list[list[str]]] = {"lexical": [], "vector": [], "declarations": []}
    for written in (["c.py", "b.py", "a.py"], ["a.py", "b.py", "c.py"]):
        connection, store = _copies_written_in(written, source)
        embedder = HashEmbedder()
        embed_pending(store, embedder)
        search = HybridSearch(store, embedder, candidates=2)
        for name in kept:
            kept[name].append(
                [r.path for r in search.search("gamma ray burst", 3, sources=(name,))])
        connection.close()
    assert kept == {name: [["a.py", "b.py"]] * 2 for name in kept}


def _one_function_per_file(store: ChunkStore, count: int, answer: int
                           ) -> tuple[dict[str, bytes], SymbolSource]:
    """``count`` files of one function each, only the ``answer``-th of them about lava, and
    a symbol source that ranks them in the order of their names (the answer last but few)."""
    names, sources = {}, {}
    for number in range(count):
        path = f"m{number:02}.py"
        names[path] = "harden_lava_into_basalt" if number == answer else f"count_item_{number}"
        body = "basalt = lava.harden()" if number == answer else f"total = {number}"
        sources[path] = f"def {names[path]}(x):\n    {body}\n    return x\n".encode()
        update_file(store, path, chunk_file(path, sources[path], "python",
                                            python_definitions(sources[path])))

    def symbols(query: str, limit: int) -> list[SymbolHit]:
        return [SymbolHit(path, 1, name, "Function") for path, name in names.items()][:limit]

    return sources, symbols


def test_the_rerank_reads_past_the_fusions_first_twenty_chunks(store: ChunkStore) -> None:
    """One source alone (here the graph's symbol hits) may rank the answer's chunk below
    twenty others that share nothing with the question; the definition rerank still reads
    it, and ranks the definition whose name and lines hold the question first."""
    sources, symbols = _one_function_per_file(store, 45, answer=38)
    search = HybridSearch(store, symbol_source=symbols,
                          definitions=lambda path: python_definitions(sources[path]))
    results = search.search("harden the lava into basalt", 10, sources=("symbol",))
    assert (results[0].path, results[0].symbol) == ("m38.py", "harden_lava_into_basalt")


def test_a_deeper_search_lists_the_deeper_chunks_below_its_own(store: ChunkStore) -> None:
    sources, symbols = _one_function_per_file(store, 45, answer=30)
    search = HybridSearch(store, symbol_source=symbols, weights=RerankWeights(depth=20),
                          definitions=lambda path: python_definitions(sources[path]))
    own = search.search("harden the lava into basalt", 50, sources=("symbol",))
    deeper = search.search("harden the lava into basalt", 50, sources=("symbol",), depth=40)
    assert (len(own), len(deeper)) == (20, 40)
    # what its own depth finds keeps its place, though the answer ranks first among the rest
    assert [r.path for r in deeper[:20]] == [r.path for r in own]
    assert deeper[20].path == "m30.py"


def test_an_identifier_the_query_writes_is_a_source_of_its_own(store: ChunkStore) -> None:
    source = (b"def new(reader):\n    return Decoder(reader, single_precision=False)\n"
              + b"\n" * 60
              + b"def ignore_decimal(reader):\n    # skip a decimal number's digits: no flag\n"
              b"    return reader.skip_digits()\n")
    update_file(store, "de.py", chunk_file("de.py", source, "python", python_definitions(source)))
    search = HybridSearch(store)
    found = search.search("Exclude single_precision flag unless needed", k=5)
    assert found[0].symbol == "new" and "identifiers" in found[0].sources
    assert all("identifiers" not in r.sources for r in found[1:])
    # a question in prose alone has no such source
    assert all("identifiers" not in r.sources
               for r in search.search("skip the digits of a decimal", k=5))
