"""Two embedders side by side: the local model's vectors and Voyage's (a fake server on
127.0.0.1, the real ``voyageai`` client) are each kept under their model id, so switching the
``embedder`` setting back and forth embeds only what changed meanwhile, and `knoxidx stats`
shows both models' coverage. The real local model throughout."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_voyage import FakeVoyage

from knoxidx.cli import main
from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR
from knoxidx.retrieval.minilm import cache_dir
from tests.helpers import Backend, write_tree

pytest.importorskip("voyageai")

FILES = {
    "pkg/__init__.py": "",
    "pkg/checksum.py": '''\
        def checksum(values):
            """Add the values modulo a prime, to spot a corrupted download."""
            total = 0
            for value in values:
                total = (total + value) % 65521
            return total
        ''',
    "pkg/reader.py": '''\
        class RecordReader:
            """Reads comma-separated records from a stream, one per line."""

            def __init__(self, stream):
                self.stream = stream

            def records(self):
                for line in self.stream:
                    yield line.strip().split(",")
        ''',
}


@pytest.fixture
def settings(tmp_path: Path, fake: FakeVoyage, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config file (``embedder`` is written into it by :func:`use`)."""
    config = tmp_path / "user" / "config.toml"
    config.parent.mkdir()
    monkeypatch.setenv("KNOXIDX_CONFIG", str(config))
    monkeypatch.setenv("VOYAGE_API_KEY", "test-key")
    # a PostgreSQL index's ledger goes under the cache folder; the model's graph stays put
    monkeypatch.setenv("KNOXIDX_CACHE_DIR", str(cache_dir()))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("KNOXIDX_EMBEDDER", "KNOXIDX_OFFLINE", "KNOXIDX_EMBED"):
        monkeypatch.delenv(name, raising=False)
    return config


def use(config: Path, embedder: str, fake: FakeVoyage) -> None:
    config.write_text(f'embedder = "{embedder}"\n[voyage]\nbase_url = "{fake.base_url}"\n',
                      encoding="utf-8")


def run(*args: str, store: str | None = None) -> dict:
    where = ["--store", store] if store else []
    result = CliRunner().invoke(main, [*args, *where, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def forget_cache(root: Path, store: str | None) -> None:
    """Empty the embedding cache: only the kept vectors can then spare a model its work."""
    if store is None:
        (root / INDEX_DIR / "embeddings.db").unlink()
        return
    import psycopg

    with psycopg.connect(store, autocommit=True) as conn:
        conn.execute("DELETE FROM knoxidx.embed_cache")


def documents_sent(fake: FakeVoyage) -> list[str]:
    return [text for path, body in fake.requests if path.endswith("/embeddings")
            and body["input_type"] == "document" for text in body["input"]]


def coverage(root: Path, store: str | None) -> dict[str, tuple[int, bool]]:
    stats = run("stats", str(root), store=store)["embeddings"]
    return {m["model"].split("/")[0]: (m["chunks"], m["current"]) for m in stats["models"]}


def test_switching_embedders_back_and_forth_reuses_each_models_vectors(
        tmp_path: Path, settings: Path, fake: FakeVoyage, backend: Backend) -> None:
    store = backend.url
    root = write_tree(tmp_path / "repo", FILES)
    use(settings, "local", fake)
    first = run("index", "--jobs", "1", str(root), store=store)["retrieval"]
    chunks = first["chunks"]
    assert first["embedded"] == chunks > 0 and first["pending"] == 0

    use(settings, "voyage", fake)
    to_voyage = run("embed", str(root), store=store)
    assert to_voyage["embedded"] == chunks and to_voyage["pending"] == 0
    sent = len(documents_sent(fake))
    assert sent >= chunks  # the chunks and their declarations
    assert coverage(root, store) == {"voyage": (chunks, True), "local": (chunks, False)}

    # without the embedding cache, only the kept vectors can spare the local model its work
    forget_cache(root, store)
    use(settings, "local", fake)
    back = run("embed", str(root), store=store)
    assert (back["embedded"], back["from_cache"], back["pending"]) == (0, 0, 0)
    assert "kept for a switch back" in back["model_switch"]
    assert coverage(root, store) == {"local": (chunks, True), "voyage": (chunks, False)}
    hits = run("search", "add values modulo a prime", str(root), "--mode", "vector",
               store=store)
    assert hits["mode"] == "vector" and hits["results"][0]["path"] == "pkg/checksum.py"

    # a file changed while the local model was current: Voyage embeds that file's chunk only
    (root / "pkg" / "checksum.py").write_text(
        (root / "pkg" / "checksum.py").read_text().replace("65521", "65519"), encoding="utf-8")
    changed = run("index", "--jobs", "1", str(root), store=store)["retrieval"]
    assert changed["embedded"] == 1
    use(settings, "voyage", fake)
    again = run("embed", str(root), store=store)
    assert (again["embedded"], again["pending"]) == (1, 0)
    new_documents = documents_sent(fake)[sent:]
    assert new_documents and all("65519" in t or "checksum" in t for t in new_documents)
    assert coverage(root, store) == {"voyage": (chunks, True), "local": (chunks, False)}


def test_an_index_from_before_kept_vectors_reports_its_one_model(
        tmp_path: Path, settings: Path, fake: FakeVoyage) -> None:
    root = write_tree(tmp_path / "repo", FILES)
    use(settings, "local", fake)
    chunks = run("index", "--jobs", "1", str(root))["retrieval"]["chunks"]
    conn = sqlite3.connect(root / INDEX_DIR / DB_NAME)
    conn.execute("DROP TABLE embed_shelf")  # as an index made before the table was
    conn.commit()
    conn.close()
    assert coverage(root, None) == {"local": (chunks, True)}
    result = CliRunner().invoke(main, ["stats", str(root)], catch_exceptions=False)
    assert f"of {chunks} chunks (searched)" in result.output
