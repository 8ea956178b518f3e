"""The names source: code definitions whose names are made of the question's words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pydefs import python_definitions

from knoxidx.index import Index
from knoxidx.retrieval.chunker import chunk_file
from knoxidx.retrieval.hybrid_search import HybridSearch
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.names import name_score, name_stems, rank_names
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK
from knoxidx.update.embedding_refresh import update_file
from tests.helpers import BILLING, BILLING_QUESTION

REPO, QUESTION = BILLING, BILLING_QUESTION


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in REPO.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _chunks(path: str, text: str):
    source = text.encode()
    return chunk_file(path, source, "python", python_definitions(source))


def test_name_stems_are_the_name_parts_once() -> None:
    assert name_stems("Period.minusYears") == ["minus", "year"]
    assert name_stems("crate::io::read_to_end") == ["read", "to", "end"]
    assert name_stems("HTTPServer.serve_http") == ["serv", "http"]


def test_a_name_the_question_explains_entirely_scores_highest() -> None:
    words = QueryWords(QUESTION, {}, 0, stems=True)
    whole = name_score(["total", "amount"], ["amount"], words)
    half = name_score(["total", "count"], [], words)
    none = name_score(["render", "page"], ["invoic"], words)
    assert whole > half > none > 0  # the scope word "invoice" still counts a little
    assert name_score([], ["invoic"], words) == 0.0
    # per chunk, its best definition; best first, at most ``limit``; no word in common: none
    rows = [(1, "render page", ""), (2, "total count", ""), (2, "total amount", ""),
            (3, "page", ""), (4, "amount", "")]
    assert rank_names(rows, words, 5) == [
        (2, name_score(["total", "amount"], [], words)),
        (4, name_score(["amount"], [], words)),
    ]
    assert [i for i, _ in rank_names(rows, words, 1)] == [2]


def test_only_code_definitions_are_looked_up_by_name(repo: Path) -> None:
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        chunks = ChunkStore(idx.store.conn)
        model = [c.chunk for c in chunks.get(chunks.chunk_ids(ChunkFilter(
            path_glob="billing/model.py"))).values()]
        assert {"MAX_TOTAL_AMOUNT", "Invoice"} <= {s for c in model for s in c.symbols}
        names = {row[0] for row in idx.store.conn.execute("SELECT name FROM chunk_name")}
    assert {"invoic", "init", "total amount", "describ", "footer"} <= names
    assert not any("max" in n for n in names)  # the constant is not


def test_the_table_follows_the_chunks(store: ChunkStore) -> None:
    update_file(store, "billing/amounts.py", _chunks("billing/amounts.py",
                                                     REPO["billing/amounts.py"]))
    found = store.name_search(["total", "amount"], 10)
    # (the file name "amounts" is no scope word: its stem is one of the name's parts)
    assert [(parts, scope) for _, parts, scope in found] == [("total amount", "")]
    chunk_id = found[0][0]
    assert store.get([chunk_id])[chunk_id].chunk.symbols == ("total_amount",)
    # a chunk whose text survives an edit only moves: its names stay, once
    moved = [replace(c, start_line=c.start_line + 2, end_line=c.end_line + 2)
             for c in _chunks("billing/amounts.py", REPO["billing/amounts.py"])]
    assert update_file(store, "billing/amounts.py", moved).kept == 1
    assert [i for i, _, _ in store.name_search(["total"], 10)] == [chunk_id]
    # filters apply to it as to every source
    assert store.name_search(["total"], 10, ChunkFilter(path_glob="billing/")) != []
    assert store.name_search(["total"], 10, ChunkFilter(languages=("go",))) == []
    # a renamed function: the old name is gone
    update_file(store, "billing/amounts.py", _chunks(
        "billing/amounts.py", REPO["billing/amounts.py"].replace("total_amount", "net_sum")))
    assert store.name_search(["total"], 10) == []
    assert [p for _, p, _ in store.name_search(["net"], 10)] == ["net sum"]
    assert store.remove_file("billing/amounts.py") == 1
    assert store.conn.execute("SELECT count(*) FROM chunk_name").fetchone()[0] == 0


def test_rebuilt_names_are_the_names_written_with_the_chunks(repo: Path) -> None:
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        store = ChunkStore(idx.store.conn)
        query = "SELECT rowid, name, scope FROM chunk_name ORDER BY rowid"
        written = store.conn.execute(query).fetchall()
        assert written and all(rowid % NAMES_PER_CHUNK < 4 for rowid, _, _ in written)

        def definitions(path: str):
            facts = idx.store.load_facts(path)
            return facts.defs if facts else None

        assert store.rebuild_names(definitions) == len(written)
        assert store.conn.execute(query).fetchall() == written


def test_the_function_named_by_the_question_comes_first(repo: Path) -> None:
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        found = idx.search(QUESTION, k=3, mode="lexical")["results"]
        assert (found[0]["path"], found[0]["symbol"]) == ("billing/amounts.py", "amounts.total_amount")
        assert "names" in found[0]["sources"]
        # without the names source the documented neighbours that repeat the words win
        store = ChunkStore(idx.store.conn)
        words_only = HybridSearch(store).search(QUESTION, k=3, sources=("lexical",))
        assert words_only[0].path != "billing/amounts.py"


def test_an_index_chunked_before_the_table_existed_still_answers(repo: Path) -> None:
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        idx.store.conn.execute("DROP TABLE chunk_name")
        idx.store.conn.commit()
        found = idx.search(QUESTION, k=3, mode="lexical")["results"]
        assert found and all("names" not in r["sources"] for r in found)


def test_letters_and_numbers_alone_name_nothing(tmp_path: Path) -> None:
    """Found by the watch-latency benchmark: a lexical search for a token such as
    ``probe23x1`` (split into probe, 23, x, 1) filled its first five results with ``Point.x``,
    ``min_x`` and ``sha1`` by their names, and the line holding ``probe23x1`` fell out."""
    files = {"geo/point.py": "".join(f"def {n}(self):\n    return self.{n}_value\n\n\n"
                                     for n in ("x", "y", "min_x", "max_x", "x1", "sha1", "md5"))}
    files["db/query.py"] = ("def run(sql):\n    return sql\n\n\n" * 40) + "# probe23x1\n"
    files["utils/text.py"] = "def probe23x0():\n    return 0\n"
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1)
        found = idx.search("probe23x1", k=5, mode="lexical")["results"]
    assert any("probe23x1" in r["snippet"] for r in found), found
    named = {r["symbol"] for r in found if "names" in r["sources"]}
    assert named == {"text.probe23x0"}
    assert name_stems("Envelope.min_x") == ["min"] and name_stems("sha1") == ["sha"]
    assert name_stems("probe23x0") == ["prob"]


def _names_by_chunk(root: Path) -> list[tuple[str, int, int, str, str]]:
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT c.path, c.start_line, c.end_line, n.name, n.scope FROM chunk_name n "
            "JOIN chunk c ON c.id = n.rowid / ? ORDER BY 1, 2, n.rowid", (NAMES_PER_CHUNK,)
        ).fetchall()
        orphans = idx.store.conn.execute(
            "SELECT count(*) FROM chunk_name WHERE rowid / ? NOT IN (SELECT id FROM chunk)",
            (NAMES_PER_CHUNK,)).fetchone()[0]
    assert orphans == 0  # no names of chunks that are gone
    return [tuple(r) for r in rows]


def test_the_name_table_after_edits_equals_a_fresh_build(repo: Path, tmp_path: Path) -> None:
    """Edits that keep, move, rename and delete chunks leave the table as a clean build of
    the same files makes it."""
    import shutil

    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
    report = repo / "billing" / "report.py"
    # moved: two lines on top (every chunk of the file keeps its text, at other lines)
    report.write_text("# moved\n\n" + report.read_text())
    # renamed and added
    amounts = repo / "billing" / "amounts.py"
    amounts.write_text(amounts.read_text().replace("total_amount", "net_amount")
                       + "\n\nclass Ledger:\n    def post_entry(self, entry):\n        return entry\n")
    # a file renamed: its chunks' scope words change with the file name
    (repo / "billing" / "model.py").rename(repo / "billing" / "invoices.py")
    with Index.open(repo) as idx:
        idx.update(jobs=1)
    after = _names_by_chunk(repo)
    fresh = tmp_path / "fresh"
    shutil.copytree(repo, fresh, ignore=shutil.ignore_patterns(".knoxidx"))
    with Index.open(fresh, create=True) as idx:
        idx.update(jobs=1)
    assert after == _names_by_chunk(fresh)
    names = {name for _, _, _, name, _ in after}
    assert {"net amount", "post entri", "ledger"} <= names and "total amount" not in names
    assert any(scope == "invoic" or "invoic" in scope.split()
               for path, _, _, _, scope in after if path == "billing/invoices.py")


def test_each_search_weighs_the_query_words_by_the_index_as_it_is(store: ChunkStore) -> None:
    """The words the names source and the rerank share were kept across searches: the same
    question asked again after an update kept the old IDF weights."""
    from knoxidx.retrieval.terms import content_terms

    def weights(question: str) -> dict[str, float]:
        frequencies = store.document_frequencies(content_terms(question))
        return QueryWords(question, *frequencies, stems=True).weight

    update_file(store, "billing/amounts.py", _chunks("billing/amounts.py",
                                                     REPO["billing/amounts.py"]))
    search = HybridSearch(store)
    search.search(QUESTION)
    before = dict(search.query_words(QUESTION, stems=True).weight)
    assert before == weights(QUESTION)
    for i in range(5):
        path = f"billing/more{i}.py"
        update_file(store, path, _chunks(path, f"def amount_{i}(total):\n    return total\n"))
    search.search(QUESTION)
    assert search.query_words(QUESTION, stems=True).weight == weights(QUESTION) != before
