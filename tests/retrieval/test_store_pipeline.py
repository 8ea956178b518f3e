from __future__ import annotations

import sqlite3

from pydefs import python_definitions
from retrieval_support import HashEmbedder

from knoxidx.retrieval.chunker import ChunkBudget, chunk_file
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import create_schema
from knoxidx.retrieval.terms import identifier_parts, index_text, unique_terms
from knoxidx.update.embedding_refresh import embed_pending, ensure_model, update_file

BUDGET = ChunkBudget(merge_tokens=8, min_tokens=1)


def module(*bodies: str) -> bytes:
    return "\n\n".join(bodies).encode()


F1 = (
    "def parseHTTPResponse(raw):\n"
    "    headers, body = raw.split('\\n\\n', 1)\n"
    "    return headers, body\n"
)
F2 = "def load_user_settings(path):\n    with open(path) as handle:\n        return handle.read()\n"
F3 = "class RetryBudget:\n    def spend(self, amount):\n        self.left -= amount\n"


def chunks_of(path: str, source: bytes):
    return chunk_file(path, source, "python", python_definitions(source), budget=BUDGET)


def test_identifier_splitting() -> None:
    assert identifier_parts("parseHTTPResponse") == ["parse", "http", "response"]
    assert identifier_parts("load_user_settings") == ["load", "user", "settings"]
    assert identifier_parts("HTTPServer2") == ["http", "server", "2"]
    assert index_text("parseHTTPResponse(x)").split() == [
        "parsehttpresponse",
        "parse",
        "http",
        "response",
        "x",
    ]
    assert unique_terms(["__init__ init"]) == ["init"]


def test_schema_is_idempotent_prefixed_and_leaves_transactions_alone(tmp_path) -> None:
    conn = sqlite3.connect(tmp_path / "index.db")
    conn.execute("CREATE TABLE other (x)")
    conn.execute("INSERT INTO other VALUES (1)")
    create_schema(conn)
    create_schema(conn)
    assert conn.in_transaction  # not committed behind the caller's back
    names = {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
    }
    ours = names - {"other"} - {n for n in names if n.startswith(("sqlite_", "chunk_fts_"))}
    assert ours and all(n.startswith(("chunk", "embed")) for n in ours)
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM other").fetchone()[0] == 0


def test_lexical_search_matches_split_and_whole_identifiers(store: ChunkStore) -> None:
    update_file(store, "net/http.py", chunks_of("net/http.py", module(F1, F2, F3)))
    by_id = store.get(range(1, 100))

    def top(query: str) -> str:
        hits = store.lexical_search(unique_terms([query]), 5)
        return by_id[hits[0][0]].chunk.symbol

    assert top("parse http response") == "parseHTTPResponse"
    assert top("parseHTTPResponse") == "parseHTTPResponse"
    assert top("user settings") == "load_user_settings"
    assert top("retry budget") == "RetryBudget"
    assert store.lexical_search(["zzzz"], 5) == []


def test_only_changed_chunks_are_re_embedded_and_the_cache_survives(store: ChunkStore) -> None:
    embedder = HashEmbedder()
    first = update_file(store, "a.py", chunks_of("a.py", module(F1, F2, F3)))
    assert first.added == store.pending_count() >= 3
    report = embed_pending(store, embedder)
    assert report.embedded == first.added and report.pending == 0
    calls = len(embedder.calls)

    # unchanged file: nothing to do
    again = update_file(store, "a.py", chunks_of("a.py", module(F1, F2, F3)))
    assert again.added == 0 and again.kept == first.added and store.pending_count() == 0

    # one function edited: only its chunk is new
    edited = F2.replace("handle.read()", "handle.read().strip()")
    change = update_file(store, "a.py", chunks_of("a.py", module(F1, edited, F3)))
    assert change.added == 1 and change.removed == 1
    report = embed_pending(store, embedder)
    assert report.embedded == 1 and len(embedder.calls) == calls + 1
    assert edited in embedder.calls[-1][0]

    # the file disappears and comes back: vectors come from the cache, not the model
    store.remove_file("a.py")
    assert store.vector_count() == 0
    update_file(store, "a.py", chunks_of("a.py", module(F1, F2, F3)))
    report = embed_pending(store, embedder)
    assert (
        report.embedded == 0
        and report.from_cache >= 3
        and store.vector_count() == store.chunk_count()
    )


def test_moved_lines_keep_their_vectors(store: ChunkStore) -> None:
    embedder = HashEmbedder()
    update_file(store, "a.py", chunks_of("a.py", module(F1, F2)))
    embed_pending(store, embedder)
    update_file(store, "a.py", chunks_of("a.py", module("X = 1\nY = 2\n", F1, F2)))
    rows = [s.chunk for s in store.get(range(1, 50)).values()]
    assert any(c.symbol == "parseHTTPResponse" and c.start_line > 1 for c in rows)
    assert store.pending_count() == 1  # only the new module-level chunk


def test_switching_model_re_embeds_with_a_message(store: ChunkStore) -> None:
    update_file(store, "a.py", chunks_of("a.py", module(F1, F2)))
    old = HashEmbedder("test/old")
    embed_pending(store, old)
    assert ensure_model(store, old) is None
    new = HashEmbedder("test/new")
    message = ensure_model(store, new)
    assert message and "test/old" in message and "test/new" in message
    assert store.vector_count() == 0 and store.pending_count() == store.chunk_count()
    report = embed_pending(store, new)
    assert report.pending == 0 and store.recorded_model() == "test/new"
    # back to the old model: every vector is in the cache already
    report = embed_pending(store, old)
    assert report.embedded == 0 and "test/new" in report.model_switch


def test_limit_and_progress(store: ChunkStore) -> None:
    update_file(store, "a.py", chunks_of("a.py", module(F1, F2, F3)))
    seen: list[tuple[int, int]] = []
    report = embed_pending(
        store, HashEmbedder(), batch_size=1, limit=2, progress=lambda d, t: seen.append((d, t))
    )
    assert report.embedded == 2 and report.pending == store.chunk_count() - 2
    assert seen[-1][0] == 2
