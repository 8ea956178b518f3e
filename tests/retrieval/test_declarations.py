"""The declarations source: each code definition's declaration embedded on its own, and a chunk
ranked by the best of its declarations' cosines with the query."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from pydefs import python_definitions
from test_secrets import SHAPES

from knoxidx.index import Index
from knoxidx.retrieval.chunker import chunk_file
from knoxidx.retrieval.errors import CircuitOpenError
from knoxidx.retrieval.hybrid_search import HybridSearch
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.names import declaration_head, declaration_texts
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK
from knoxidx.update.embedding_refresh import update_file
from knoxidx.update.retrieval_steps import CACHE_SCHEMA, embed_pending_chunks

# No doc comments: what a method does is said by its name alone.
PERIOD = """\
class Period:
    def __init__(self, years, months, days):
        self.years = years
        self.months = months
        self.days = days

    def plus_years(self, count):
        return Period(self.years + count, self.months, self.days)

    def minus_years(self, count):
        return Period(self.years - count, self.months, self.days)

    def plus_months(self, count):
        return Period(self.years, self.months + count, self.days)

    def is_negative(self):
        return self.years < 0 or self.months < 0 or self.days < 0
"""
CALENDAR = """\
FIRST_MONTH = 1


def leap_year(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    if month == 2:
        return 29 if leap_year(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31
"""


def _chunks(path: str, text: str):
    source = text.encode()
    return chunk_file(path, source, "python", python_definitions(source))


def _declarations(store: ChunkStore) -> list[tuple[int, str, bool]]:
    return [(i, t, v is not None) for i, t, v in store.conn.execute(
        "SELECT id, text, vector FROM chunk_declaration ORDER BY id")]


@contextmanager
def _embedded(repo: Path, embedder) -> Iterator[Index]:
    """``repo`` indexed and every chunk (with its declarations) embedded."""
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        embed_pending_chunks(idx, progress=None, limit=None, embedder=embedder)
        yield idx


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "dates").mkdir()
    (tmp_path / "dates/period.py").write_text(PERIOD)
    (tmp_path / "dates/calendar.py").write_text(CALENDAR)
    return tmp_path


def test_a_declaration_says_the_kind_the_name_what_holds_it_and_the_signature() -> None:
    texts = [t for c in _chunks("dates/calendar.py", CALENDAR) for t in declaration_texts(c)]
    # the constant is not a declaration the source ranks; a top-level name is held by its file
    assert texts == ["function leap year in calendar: leap year year",
                     "function days in month in calendar: days in month year month"]
    texts = [t for c in _chunks("dates/period.py", PERIOD) for t in declaration_texts(c)]
    assert "function minus years in period: minus years count" in texts
    assert texts[0] == "class period in period: period"


@pytest.mark.parametrize(("path", "qualname", "head"), [
    # the file's own name says nothing: its language names such a file after its directory
    ("_examples/clone/main.go", "main", "function main in clone"),
    ("cmd/go-git/main.go", "main", "function main in go git"),
    ("storage/__init__.py", "open_storage", "function open storage in storage"),
    ("cli/__main__.py", "run", "function run in cli"),
    ("mycrate/src/lib.rs", "parse_file", "function parse file in mycrate"),
    ("tests/repo/mod.rs", "clone_repo", "function clone repo in repo"),
    ("src/utils/index.ts", "debounce", "function debounce in utils"),
    ("packages/ui/src/index.ts", "render", "function render in ui"),
    # only where a language keeps such files in a folder that is not theirs is it passed over
    ("numpy/lib/__init__.py", "pad", "function pad in lib"),
    ("tools/source/main.go", "main", "function main in source"),
    # the file's name says it; an ``index.py`` is not a package's entry; no directory to name
    ("dates/calendar.py", "leap_year", "function leap year in calendar"),
    ("site/index.py", "render", "function render in index"),
    ("main.go", "main", "function main in main"),
    ("src/lib.rs", "parse_file", "function parse file in lib"),
    # what encloses a definition names it before any file does
    ("storage/__init__.py", "Storage.open", "function open in storage"),
])
def test_a_file_named_after_its_directory_gives_its_definitions_the_directorys_name(
    path: str, qualname: str, head: str
) -> None:
    assert declaration_head(path, qualname, "Function") == head


GO_EXAMPLE = """\
package main

import "fmt"

// Basic example of how to clone a repository.
func main() {
\tfmt.Println("cloning")
}
"""


def test_an_update_after_the_rule_rewrites_and_embeds_only_the_declarations_it_changed(
    tmp_path: Path, local_embedder
) -> None:
    (tmp_path / "go.mod").write_text("module example.com/demo\n\ngo 1.21\n")
    (tmp_path / "_examples/clone").mkdir(parents=True)
    (tmp_path / "_examples/clone/main.go").write_text(GO_EXAMPLE)
    (tmp_path / "dates").mkdir()
    (tmp_path / "dates/calendar.py").write_text(CALENDAR)
    with _embedded(tmp_path, local_embedder) as idx:
        store = ChunkStore(idx.store.conn)
        before = _declarations(store)
        assert ("function main in clone: main", True) in [(t, v) for _, t, v in before]
        [[scope]] = idx.store.conn.execute(
            "SELECT scope FROM chunk_name WHERE name = 'main'").fetchall()
        assert scope == "clon"  # the names source finds the example by its directory's stem
        # as an index made before the rule was: the file's own name held the definition,
        # and the new text was never embedded (the cache keeps vectors by text)
        conn = idx.store.conn
        conn.execute(f"DELETE FROM {CACHE_SCHEMA}.embed_cache WHERE text_hash IN (SELECT text_hash FROM"
                     " chunk_declaration WHERE text = 'function main in clone: main')")
        conn.execute("UPDATE chunk_declaration SET text = 'function main in main: main'"
                     " WHERE text = 'function main in clone: main'")
        conn.execute("UPDATE embed_meta SET value = 'old' WHERE key = 'chunker'")
        conn.commit()
        report = idx.update(jobs=1)
        assert report.retrieval["kept"] == 2 and report.retrieval["added"] == 0
        assert report.retrieval["pending"] == 1  # the example's chunk, not the calendar's
        done = embed_pending_chunks(idx, progress=None, limit=None, embedder=local_embedder)
        # the chunk's own vector comes from the cache; only the new text reaches the model,
        # and every declaration whose text is unchanged keeps its vector
        assert (done["embedded"], done["from_cache"], done["declarations"]) == (0, 1, 1)
        after = _declarations(store)
        assert [(t, v) for _, t, v in after] == [(t, True) for _, t, _ in before]


def test_a_secret_in_a_default_value_is_masked_while_it_is_whole() -> None:
    key = SHAPES["stripe-key"]
    source = f'def connect(key="{key}"):\n    return key\n'
    [text] = [t for c in _chunks("billing/api.py", source) for t in declaration_texts(c)]
    # split into words, the key would no longer look like one to the egress gate's masking
    assert text == "function connect in api: connect key secret stripe"
    assert not any(part in text for part in key.split("_") if len(part) > 4)


def test_the_table_follows_the_chunks(store: ChunkStore) -> None:
    update_file(store, "dates/calendar.py", _chunks("dates/calendar.py", CALENDAR))
    written = _declarations(store)
    assert [t for _, t, _ in written] == [
        "function leap year in calendar: leap year year",
        "function days in month in calendar: days in month year month"]
    assert not any(has_vector for _, _, has_vector in written)  # until embedded
    chunk_ids = {i // NAMES_PER_CHUNK for i, _, _ in written}
    assert set(store.pending(10)) >= chunk_ids
    # embedded: the chunk and its declarations in one transaction, the chunk off the list
    [chunk_id] = chunk_ids
    store.save_vectors("m", [(chunk_id, "h", b"\0" * 8)],
                       [(i, f"h{i}", b"\1" * 8) for i, _, _ in written])
    assert all(has_vector for _, _, has_vector in _declarations(store))
    assert chunk_id not in store.pending(10)
    # a chunk whose text survives an edit only moves: its declarations and vectors stay
    moved = [replace(c, start_line=c.start_line + 2, end_line=c.end_line + 2)
             for c in _chunks("dates/calendar.py", CALENDAR)]
    assert update_file(store, "dates/calendar.py", moved).kept == 1
    assert _declarations(store) == [(i, t, True) for i, t, _ in written]
    assert chunk_id not in store.pending(10)
    # the same text declaring other names (the chunker's view changed): kept, declarations
    # written again without vectors, and the chunk pending again to embed them
    renamed = [replace(c, symbols=tuple(s.replace("leap_year", "is_leap") for s in c.symbols))
               for c in moved]
    assert update_file(store, "dates/calendar.py", renamed).kept == 1
    assert [(t, v) for _, t, v in _declarations(store)] == [
        ("function is leap in calendar: leap year year", False),
        ("function days in month in calendar: days in month year month", False)]
    assert chunk_id in store.pending(10)
    # a model switch drops every declaration's vector with the chunks'
    store.save_vectors("m", [(chunk_id, "h", b"\0" * 8)],
                       [(i, f"h{i}", b"\1" * 8) for i, _, _ in _declarations(store)])
    store.drop_vectors()
    assert not any(v for _, _, v in _declarations(store)) and chunk_id in store.pending(10)
    assert store.remove_file("dates/calendar.py") == 1
    assert _declarations(store) == []


def test_the_declarations_of_many_chunks_are_read_as_each_chunk_alone_would_be(
    store: ChunkStore,
) -> None:
    from knoxidx.retrieval.store import _DECLARATION_BATCH

    update_file(store, "dates/period.py", _chunks("dates/period.py", PERIOD))
    for n in range(2 * _DECLARATION_BATCH + 3):  # three queries' worth
        update_file(store, f"gen/m{n}.py",
                    _chunks(f"gen/m{n}.py", f"def step_{n}(x):\n    return x + {n}\n"))
    update_file(store, "dates/constants.py", _chunks("dates/constants.py", "FIRST = 1\n"))
    ids = [row[0] for row in store.conn.execute("SELECT id FROM chunk ORDER BY id DESC")]
    asked = [*ids, ids[0]]  # newest first, one asked twice

    def alone(chunk_id: int) -> list[tuple[int, str]]:
        return [(d, t) for d, t in store.conn.execute(
            "SELECT id, text FROM chunk_declaration WHERE id / ? = ? ORDER BY id",
            (NAMES_PER_CHUNK, chunk_id))]

    expected = {i: alone(i) for i in asked if alone(i)}
    found = store.declarations(asked)
    assert found == expected and list(found) == list(expected)  # in the order asked
    assert len(found) == len(ids) - 1  # the constants' chunk declares nothing
    assert any(len(rows) > 1 for rows in found.values())  # Period's methods, in order


def test_the_declarations_source_finds_a_method_by_what_its_name_means(
    repo: Path, local_embedder
) -> None:
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1)
        done = embed_pending_chunks(idx, progress=None, limit=None, embedder=local_embedder)
        assert done["pending"] == 0 and done["declarations"] == 8
        store = ChunkStore(idx.store.conn)
        assert all(has_vector for _, _, has_vector in _declarations(store))
        search = HybridSearch(store, local_embedder)
        # the words of the question are in none of the method names (nor anywhere in the code)
        question = "Whether any part of the duration is below zero"
        found = search.declarations(question)
        period = store.chunks_at("dates/period.py", 16)[0]
        assert found[0][0] == period and found[0][1] > found[1][1]
        calendar = store.chunks_at("dates/calendar.py", 9)[0]
        assert search.declarations("how many days a month has")[0][0] == calendar
        # hybrid search names it as a source; a filter applies to it as to every source
        results = search.search(question, k=2)
        assert "declarations" in results[0].sources
        only = search.search(question, k=5, sources=("declarations",), definition_rerank=False,
                             chunk_filter=ChunkFilter(path_glob="dates/calendar.py"))
        assert {r.chunk_id for r in only} == {calendar}


def test_an_index_made_before_declarations_answers_and_its_next_update_embeds_them(
    repo: Path, local_embedder
) -> None:
    with _embedded(repo, local_embedder) as idx:
        conn = idx.store.conn
        # as an index of the previous chunker version was: no table of declarations
        conn.execute("DROP TABLE chunk_declaration")
        conn.execute("UPDATE embed_meta SET value = 'old' WHERE key = 'chunker'")
        conn.commit()
        store = ChunkStore(conn)
        search = HybridSearch(store, local_embedder)
        assert search.declarations("days in a month") == []
        assert search.search("days in a month", k=1)
        # the next update re-chunks every file: the chunks are kept with their vectors, their
        # declarations are written and embedded again; the embedding cache, keyed by text,
        # has every vector, so nothing reaches the model
        report = idx.update(jobs=1)
        assert report.retrieval["kept"] == 2 and report.retrieval["added"] == 0
        done = embed_pending_chunks(idx, progress=None, limit=None, embedder=local_embedder)
        assert (done["embedded"], done["from_cache"], done["declarations"]) == (0, 2, 0)
        assert len(_declarations(store)) == 8 and all(v for _, _, v in _declarations(store))
        assert HybridSearch(store, local_embedder).declarations("days in a month")


def test_the_rerank_compares_the_query_with_each_definitions_own_declaration(
    repo: Path, local_embedder
) -> None:
    import numpy as np

    from knoxidx.retrieval.units import Unit

    with _embedded(repo, local_embedder) as idx:
        store = ChunkStore(idx.store.conn)
        period = store.chunks_at("dates/period.py", 10)[0]
        calendar = store.chunks_at("dates/calendar.py", 9)[0]
        chunks = {i: c.chunk for i, c in store.get([period, calendar]).items()}
        question = "Returns a copy of the duration with a number of years subtracted"
        closeness = HybridSearch(store, local_embedder).declaration_closeness(
            question, [period, calendar])
        assert closeness is not None
        # what the declarations' own vectors say, computed here from their texts
        texts = {t for rows in store.declarations([period, calendar]).values() for _, t in rows}
        query = local_embedder.embed_query(question)
        ordered = sorted(texts)
        vectors = local_embedder.embed_documents(ordered)
        cosine = {t: float(v @ query / np.linalg.norm(v) / np.linalg.norm(query))
                  for t, v in zip(ordered, vectors, strict=True)}
        floor = min(cosine.values())

        def unit(symbol: str, start: int, end: int, kind: str = "Function") -> Unit:
            return Unit(period, start, end, symbol, kind, 0.0)

        minus = closeness(unit("Period.minus_years", 10, 11), chunks[period])
        plus = closeness(unit("Period.plus_years", 7, 8), chunks[period])
        assert minus == pytest.approx(
            cosine["function minus years in period: minus years count"] - floor, abs=1e-4)
        assert plus == pytest.approx(
            cosine["function plus years in period: plus years count"] - floor, abs=1e-4)
        assert minus > plus  # "subtracted": what minus says, in other words
        # the whole chunk, or a unit without a declaration of its own: the chunk's closest
        closest = max(c for t, c in cosine.items() if "in period" in t) - floor
        whole = chunks[period]
        assert closeness(unit("Period", whole.start_line, whole.end_line, "Class"),
                         whole) == pytest.approx(closest, abs=1e-4)
        assert closeness(unit("Period.years", 3, 3, "Variable"), whole) == pytest.approx(
            closest, abs=1e-4)
        # a chunk with no declaration embedded counts as the least close
        assert closeness(Unit(10**6, 1, 2, "gone", "Function", 0.0), whole) == 0.0
        # no query vector (no embedder): no such term
        assert HybridSearch(store, None).declaration_closeness(question, [period]) is None


class _Down:
    """A query embedder whose service is down: every call fails, each one counted."""

    def __init__(self, inner) -> None:
        self.model_id, self.dimension, self.calls = inner.model_id, inner.dimension, 0

    def embed_query(self, text: str):
        self.calls += 1
        raise CircuitOpenError("service is failing; not calling it for another 60 s", 60.0)


def test_a_failing_query_embedder_is_asked_once_and_both_vector_sources_step_aside(
    repo: Path, local_embedder
) -> None:
    with _embedded(repo, local_embedder) as idx:
        down = _Down(local_embedder)
        search = HybridSearch(ChunkStore(idx.store.conn), down)
        results = search.search("how many days a month has", k=3)
        assert down.calls == 1  # not once per vector source: retries would be paid twice
        assert set(search.skipped) == {"vector", "declarations"}
        assert results and not any(
            {"vector", "declarations"} & set(r.sources) for r in results)
