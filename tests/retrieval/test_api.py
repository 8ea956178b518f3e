"""The retrieval layer wired into the product: ``Index.update`` chunks, ``Index.search`` finds,
``Index.embed`` embeds, and the ``knoxidx search`` / ``knoxidx embed`` commands print it. Real
SQLite, the real local model, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from knoxidx.cli import main
from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR
from knoxidx.index import Index
from knoxidx.retrieval.errors import SearchIndexMissingError, SearchInputError
from knoxidx.retrieval.store import ChunkStore
from knoxidx.update import retrieval_steps as api

NET = '''"""Talking to servers."""

import time


def parse_http_response(raw):
    """Split a raw HTTP response into its status line, headers and body."""
    head, _, body = raw.partition("\\r\\n\\r\\n")
    status, *header_lines = head.split("\\r\\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return status, headers, body


def retry_with_backoff(call, attempts=5, base_delay=0.5):
    """Call again after a failure, waiting twice as long each time."""
    for attempt in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(base_delay * 2 ** attempt)
    raise RuntimeError("gave up")
'''

STORAGE = '''"""Keeping things on disk."""

import json


class SettingsFile:
    """User preferences stored as JSON."""

    def __init__(self, path):
        self.path = path

    def load_user_settings(self):
        with open(self.path) as handle:
            return json.load(handle)

    def save_user_settings(self, values):
        with open(self.path, "w") as handle:
            json.dump(values, handle, indent=2)
'''

MATHS = '''"""Numbers."""


def fibonacci(n):
    """The n-th Fibonacci number, iteratively."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def greatest_common_divisor(a, b):
    while b:
        a, b = b, a % b
    return a
'''

WIDGET = '''export function renderWidgetTitle(title: string): string {
  return `<h1>${title.trim()}</h1>`;
}

export class WidgetRegistry {
  private widgets = new Map<string, string>();
  register(name: string, markup: string): void {
    this.widgets.set(name, markup);
  }
}
'''

FILES = {
    "app/net.py": NET,
    "app/storage.py": STORAGE,
    "app/maths.py": MATHS,
    "web/widget.ts": WIDGET,
    # small files (one chunk each) so that embedding runs in several batches
    **{
        f"app/colours/{name}.py": f'def {name}_hex():\n    """The {name} colour."""\n'
        f'    return "#{i:06x}"\n'
        for i, name in enumerate(("red", "green", "blue", "cyan", "magenta", "yellow"))
    },
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write(tmp_path / "repo", FILES)


@pytest.fixture
def indexed(repo: Path):
    with Index.open(repo, create=True) as idx:
        report = idx.update(jobs=1)
        yield idx, report


class Recording:
    """The real local embedder, remembering every text it embeds (and optionally failing)."""

    def __init__(self, inner, fail_on_call: int | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.texts: list[str] = []
        self.calls = 0
        self.fail_on_call = fail_on_call

    def document_text(self, chunk):
        return self.inner.document_text(chunk)

    def embed_documents(self, texts: Sequence[str]):
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise KeyboardInterrupt  # Ctrl-C in the middle of a batch
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str):
        return self.inner.embed_query(text)


def paths_of(answer: dict) -> list[str]:
    return [r["path"] for r in answer["results"]]


# ---- indexing --------------------------------------------------------------------------------


def test_update_chunks_every_file_and_lexical_search_works_at_once(indexed) -> None:
    idx, report = indexed
    r = report.retrieval
    assert r["files_chunked"] == len(FILES) and r["chunks"] == r["added"] == r["pending"] > 0
    assert r["embedded"] == 0 and r["removed"] == 0 and r["errors"] == []
    assert report.as_dict()["retrieval"] == r  # what `knoxidx index --json` prints
    answer = idx.search("parse http response", mode="lexical", k=3)
    assert answer["mode"] == "lexical" and answer["note"] == ""
    top = answer["results"][0]
    assert top["path"] == "app/net.py" and top["symbol"].endswith("parse_http_response")
    assert top["kind"] == "Function" and top["language"] == "python"
    assert top["start_line"] <= 6 <= top["end_line"] and "parse_http_response" in top["snippet"]
    assert set(top) == {"path", "start_line", "end_line", "symbol", "kind", "score", "snippet",
                        "language", "sources", "definitions"}
    assert answer["pending_embeddings"] == r["pending"]
    # hybrid before any embedding: lexical + symbols, and says so
    hybrid = idx.search("retry_with_backoff")
    assert hybrid["mode"] == "hybrid" and "no chunk is embedded yet" in hybrid["note"]
    assert hybrid["results"][0]["symbol"].endswith("retry_with_backoff")
    assert "symbol" in hybrid["results"][0]["sources"]
    # vector with nothing embedded falls back to lexical, with a note
    vector = idx.search("fibonacci", mode="vector")
    assert vector["mode"] == "lexical" and "lexical" in vector["note"]
    assert vector["results"][0]["path"] == "app/maths.py"


def test_filters_by_language_and_path(indexed) -> None:
    idx, _ = indexed
    assert paths_of(idx.search("widget title", language="typescript", mode="lexical")) == [
        "web/widget.ts"
    ]
    under_app = paths_of(idx.search("the", path_glob="app/", k=20, mode="lexical"))
    assert under_app and all(p.startswith("app/") for p in under_app)
    assert paths_of(idx.search("colour", path_glob="app/colours", mode="lexical", k=20))
    assert all(p.startswith("app/colours/")
               for p in paths_of(idx.search("the", path_glob="app/colours", k=20)))
    assert idx.search("the", path_glob="ap", mode="lexical")["results"] == []
    assert paths_of(idx.search("user settings", path_glob="*/storage.py", mode="lexical")) == [
        "app/storage.py"
    ]
    assert idx.search("user settings", language="go", mode="lexical")["results"] == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"k": 101}, "k must be"),
        ({"mode": "fuzzy"}, "unknown search mode"),
        ({"language": "cobol"}, "unknown language"),
        ({"path_glob": " "}, "path glob is empty"),
    ],
)
def test_bad_search_arguments_are_clear_errors(indexed, kwargs, message) -> None:
    idx, _ = indexed
    with pytest.raises(SearchInputError, match=message):
        idx.search("anything", **kwargs)
    with pytest.raises(SearchInputError, match="empty"):
        idx.search("   ")


def test_incremental_update_rechunks_only_what_changed(indexed, repo: Path) -> None:
    idx, _ = indexed
    store = ChunkStore(idx.store.conn)
    before = {c.id: c.chunk for c in store.get(range(1, 1000)).values()}
    maths_ids = {i for i, c in before.items() if c.path == "app/maths.py"}
    edited = MATHS.replace("iteratively", "iteratively, in linear time")
    (repo / "app/maths.py").write_text(edited)
    r = idx.update(jobs=1).retrieval
    assert r["files_chunked"] == 1 and r["files_removed"] == 0
    after = {c.id: c.chunk for c in store.get(range(1, 1000)).values()}
    # other files' chunks are untouched: same ids, same content
    assert {i: c for i, c in before.items() if i not in maths_ids} == {
        i: c for i, c in after.items() if c.path != "app/maths.py"
    }
    new_ids = set(after) - set(before)
    assert new_ids and all(after[i].path == "app/maths.py" for i in new_ids)
    assert r["added"] == len(new_ids) and r["removed"] == len(set(before) - set(after))
    assert "linear time" in idx.search("linear time", mode="lexical")["results"][0]["snippet"]

    (repo / "app/storage.py").unlink()
    r = idx.update(jobs=1).retrieval
    assert r["files_removed"] == 1 and r["files_chunked"] == 0 and r["removed"] > 0
    assert all(c.chunk.path != "app/storage.py" for c in store.get(range(1, 1000)).values())
    assert "app/storage.py" not in paths_of(idx.search("user settings", mode="lexical"))

    r = idx.update(jobs=1).retrieval  # nothing changed: nothing to do
    assert r["files_chunked"] == r["added"] == r["removed"] == 0


def test_chunks_catch_up_after_a_run_that_skipped_them(repo: Path) -> None:
    """Graph committed, chunks not (a killed run, or --graph-only): the next update repairs
    it, although the graph itself sees nothing new to do."""
    with Index.open(repo, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        with pytest.raises(SearchIndexMissingError, match="knoxidx index"):
            idx.search("fibonacci")
        idx.update(jobs=1)
        (repo / "app/maths.py").write_text(MATHS.replace("fibonacci", "lucas_number"))
        graph = idx.update(jobs=1, retrieval=False)
        assert graph.changed_paths == ["app/maths.py"]
        r = idx.update(jobs=1)
        assert r.changed_paths == [] and r.retrieval["files_chunked"] == 1
        assert idx.search("lucas_number", mode="lexical")["results"][0]["path"] == "app/maths.py"


def test_chunking_in_worker_processes_gives_the_same_chunks(tmp_path: Path) -> None:
    many = {f"pkg/mod{i:02d}.py": MATHS.replace("fibonacci", f"fibonacci_{i}") for i in range(30)}
    contents = []
    for name, jobs in (("one", 1), ("two", 2)):
        root = write(tmp_path / name, many)
        with Index.open(root, create=True) as idx:
            idx.update(jobs=jobs)
            chunks = ChunkStore(idx.store.conn).get(range(1, 1000)).values()
            contents.append(sorted((c.chunk.path, c.chunk.start_line, c.chunk.content_hash)
                                   for c in chunks))
    assert contents[0] == contents[1] and len(contents[0]) == 30


# ---- embedding and semantic search ------------------------------------------------------------


def test_embedding_resumes_after_interruption_and_nothing_is_embedded_twice(
    indexed, local_embedder, monkeypatch
) -> None:
    idx, report = indexed
    total = report.retrieval["pending"]
    monkeypatch.setattr(api, "EMBED_BATCH", 2)
    recording = Recording(local_embedder)
    first = api.embed_pending_chunks(idx, progress=None, limit=3, embedder=recording)
    first_texts = list(recording.texts)
    assert first["embedded"] == 3 and first["pending"] == total - 3
    crashing = Recording(local_embedder, fail_on_call=2)  # dies in its second batch
    with pytest.raises(KeyboardInterrupt):
        api.embed_pending_chunks(idx, progress=None, limit=None, embedder=crashing)
    store = ChunkStore(idx.store.conn)
    assert store.pending_count() == total - 5 and store.vector_count() == 5
    steps: list[tuple[str, int, int]] = []
    rest = Recording(local_embedder)
    last = api.embed_pending_chunks(idx, progress=lambda *a: steps.append(a), limit=None,
                                    embedder=rest)
    assert last["pending"] == 0 and last["embedded"] == total - 5
    assert steps[0] == ("embed", 0, total - 5) and steps[-1] == ("embed", total - 5, total - 5)
    embedded = crashing.texts + rest.texts
    assert len(embedded) == len(set(embedded))
    # each chunk's declarations went with it (and no declaration was left without a vector)
    conn = idx.store.conn
    declarations = {row[0] for row in conn.execute("SELECT text FROM chunk_declaration")}
    assert declarations and declarations <= set(first_texts + embedded)
    assert len([t for t in embedded if t not in declarations]) == total - 3
    assert conn.execute(
        "SELECT count(*) FROM chunk_declaration WHERE vector IS NULL").fetchone()[0] == 0
    assert store.vector_count() == store.chunk_count() == total


def test_semantic_search_after_embedding_and_cache_survives_a_rebuild(
    indexed, repo: Path, local_embedder
) -> None:
    idx, report = indexed
    done = idx.embed()
    assert done["embedded"] == report.retrieval["pending"] and done["pending"] == 0
    answer = idx.search("wait longer between attempts after an error", mode="vector", k=3)
    assert answer["mode"] == "vector" and answer["note"] == ""
    assert answer["results"][0]["symbol"].endswith("retry_with_backoff")
    assert answer["results"][0]["sources"] == ["vector", "declarations"]
    hybrid = idx.search("read preferences from a json file", k=3)
    assert hybrid["mode"] == "hybrid" and hybrid["pending_embeddings"] == 0
    assert hybrid["results"][0]["path"] == "app/storage.py"
    assert any("vector" in r["sources"] for r in hybrid["results"])
    idx.close()
    # `knoxidx index --rebuild` deletes the index database; the embedding cache is a separate
    # file, so re-embedding the same code costs no model call
    for suffix in ("", "-wal", "-shm"):
        (repo / INDEX_DIR / (DB_NAME + suffix)).unlink(missing_ok=True)
    with Index.open(repo, create=True) as fresh:
        fresh.update(jobs=1)
        recorder = Recording(local_embedder)
        again = api.embed_pending_chunks(fresh, progress=None, limit=None, embedder=recorder)
        assert recorder.texts == [] and again["from_cache"] == done["embedded"]


def test_a_search_does_not_count_every_vector(indexed, local_embedder, monkeypatch) -> None:
    # it did, on every search: SELECT count(*) reads every page of the vector table (~100 ms
    # at 44k vectors on a busy machine); whether there is one is all it needs
    idx, _ = indexed
    idx.embed(limit=4)

    def count_all(self: ChunkStore) -> int:
        raise AssertionError("a search counted every vector")

    monkeypatch.setattr(ChunkStore, "vector_count", count_all)
    answer = idx.search("fibonacci", mode="vector")
    total = ChunkStore(idx.store.conn).chunk_count()
    assert answer["mode"] == "vector"
    assert answer["note"].startswith(f"4 of {total} chunks embedded; vector results cover those")
    assert idx.search("fibonacci")["mode"] == "hybrid"


# ---- the CLI ----------------------------------------------------------------------------------


def test_cli_search_prints_locations_and_json(indexed, repo: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["search", "parse http response", str(repo), "--mode",
                                  "lexical", "-k", "2"])
    assert result.exit_code == 0, result.output
    first, snippet = result.output.splitlines()[:2]
    assert first.startswith("app/net.py:") and "Function" in first and "parse_http_response" in first
    assert snippet.startswith("    ") and "parse_http_response" in snippet
    as_json = runner.invoke(main, ["search", "fibonacci", str(repo), "--json", "--lang", "python"])
    data = json.loads(as_json.output)
    assert data["query"] == "fibonacci" and data["results"][0]["path"] == "app/maths.py"
    assert set(data) == {"query", "mode", "results", "pending_embeddings", "note", "withheld",
                         "masked"}
    bad = runner.invoke(main, ["search", "x", str(repo), "-k", "500"])
    assert bad.exit_code == 2
    missing = runner.invoke(main, ["search"])
    assert missing.exit_code == 2 and "missing QUERY" in missing.output


def test_cli_batch_prints_one_json_object_per_query_in_order(indexed, repo: Path,
                                                           tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("fibonacci\n\nuser settings\nrenderWidgetTitle\n" + "x" * 3000 + "\n")
    result = CliRunner().invoke(main, ["search", "--batch", str(queries), str(repo), "--mode",
                                       "lexical", "-k", "3"])
    assert result.exit_code == 0, result.output
    answers = [json.loads(line) for line in result.output.splitlines()]
    assert [a["query"] for a in answers] == ["fibonacci", "user settings", "renderWidgetTitle",
                                             "x" * 3000]
    assert "longer than" in answers[3]["error"]
    single = json.loads(CliRunner().invoke(main, ["search", "user settings", str(repo),
                                                  "--mode", "lexical", "-k", "3",
                                                  "--json"]).output)
    assert answers[1] == single
    assert answers[2]["results"][0]["path"] == "web/widget.ts"


def test_cli_embed(indexed, repo: Path, local_embedder) -> None:
    runner = CliRunner()
    pending = indexed[1].retrieval["pending"]
    result = runner.invoke(main, ["embed", str(repo), "--limit", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["embedded"] == 2 and data["pending"] == pending - 2
    result = runner.invoke(main, ["embed", str(repo)])
    assert result.exit_code == 0 and f"embedded {pending - 2} chunks" in result.output


def test_graph_commands_never_import_the_model(indexed, repo: Path) -> None:
    """`knoxidx callers` in a fresh process: the whole CLI (search and embed registered), and
    no numpy, onnxruntime, tokenizers or model code loaded; nor by a lexical search, nor by a
    hybrid one while nothing is embedded."""
    code = (
        "import sys\n"
        "from knoxidx.cli import main\n"
        f"main(['callers', 'fibonacci', {str(repo)!r}], standalone_mode=False)\n"
        "main(['symbols', 'fibonacci', '--json'], standalone_mode=False)\n"
        "main(['search', 'fibonacci', '--mode', 'lexical'], standalone_mode=False)\n"
        "main(['search', 'fibonacci'], standalone_mode=False)\n"
        "assert 'search' in main.commands and 'embed' in main.commands\n"
        "heavy = ('numpy', 'onnxruntime', 'onnx', 'tokenizers', 'voyageai',"
        " 'knoxidx.retrieval.minilm')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=repo, env={**os.environ, "PYTHONPATH": str(Path.cwd())},
                         check=True)
    assert "callers of" in out.stdout and "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_cli_search_starts_numpy_with_one_blas_thread_unless_told(indexed, repo: Path,
                                                                   monkeypatch) -> None:
    # a one-shot search does no BLAS work: OpenBLAS's thread per core only costs start-up
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "restored after the test")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS")
    runner = CliRunner()
    result = runner.invoke(main, ["search", "fibonacci", str(repo), "--mode", "lexical"])
    assert result.exit_code == 0, result.output
    assert os.environ.get("OPENBLAS_NUM_THREADS") == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user's own choice stands
    assert runner.invoke(main, ["search", "fibonacci", str(repo), "--mode", "lexical"]).exit_code == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
